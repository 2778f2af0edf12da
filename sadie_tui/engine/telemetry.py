"""Telemetry: one ``turns`` row per search, ask or chat, and one ``retrievals`` row per chunk.

That trail (query, persona, model, grounding, abstention, latency; each chunk's channel
scores, fused and final score, rank and whether it was cited) is the raw material for
evaluating and tuning retrieval later (DESIGN §9). The rows and their SQL are
``store.telemetry``'s; this module turns a retrieval result into them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .store import telemetry as repo
from .store.telemetry import RetrievalRecord, TurnRecord
from .store.telemetry import add_policy_event as add_policy_event  # the repository's own

if TYPE_CHECKING:
    from .retrieval.pipeline import RetrievedChunk
    from .store.db import Database


def record_turn(
    db: Database,
    *,
    kind: str,
    query: str,
    model: str | None,
    persona: str | None,
    prompt_version: str | None,
    grounding: float | None,
    abstained: bool | None,
    latency_ms: float | None,
    conversation_id: str | None = None,
    message_id: str | None = None,
    chunks: Sequence[RetrievedChunk] = (),
    cited_chunk_ids: Iterable[int] = (),
    tail: str | None = None,
    repaired: bool | None = None,
    citation_pass: str | None = None,
    unsupported: int | None = None,
    cut: str | None = None,
) -> str:
    """Write the turn and its retrievals in one transaction; returns the turn id."""
    turn_id = str(uuid.uuid4())
    cited = {int(c) for c in cited_chunk_ids}
    turn = TurnRecord(
        id=turn_id,
        kind=kind,
        query=query,
        model=model,
        persona=persona,
        prompt_version=prompt_version,
        grounding=grounding,
        abstained=abstained,
        latency_ms=latency_ms,
        conversation_id=conversation_id,
        message_id=message_id,
        tail=tail,
        repaired=repaired,
        citation_pass=citation_pass,
        unsupported=unsupported,
        cut=cut,
    )
    rows = [_retrieval(c, int(c.chunk_id) in cited) for c in chunks]
    with db.transaction():
        repo.insert_turn(db, turn)
        repo.insert_retrievals(db, turn_id, rows)
    return turn_id


def _retrieval(chunk: RetrievedChunk, cited: bool) -> RetrievalRecord:
    scores = chunk.scores
    return RetrievalRecord(
        chunk_id=int(chunk.chunk_id),
        episode_id=str(uuid.UUID(str(chunk.episode_id))),
        rank=int(chunk.rank),
        vector_score=scores.get("vector"),
        keyword_score=scores.get("keyword"),
        graph_score=scores.get("graph"),
        fused_score=chunk.fused,
        final_score=chunk.final,
        cited=cited,
    )


def mark_cited(db: Database, turn_id: str, chunk_ids: Iterable[int]) -> int:
    """Flag the turn's retrievals whose chunk ended up cited; returns how many were marked."""
    return repo.mark_cited(db, turn_id, sorted({int(c) for c in chunk_ids}))
