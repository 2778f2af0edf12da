"""Telemetry: one ``turns`` row per search, ask or chat, and one ``retrievals`` row per chunk.

That trail (query, persona, model, grounding, abstention, latency; each chunk's channel
scores, fused and final score, rank and whether it was cited) is the raw material for
evaluating and tuning retrieval later (DESIGN §9). Rows go in with two statements per turn,
whatever the chunk count: the retrievals as one multi-row INSERT, not a round trip per row.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

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
    with db.transaction():
        db.con.execute(
            "INSERT INTO turns (id, kind, query, model, persona, prompt_version, grounding,"
            " abstained, latency_ms, conversation_id, message_id, tail, repaired, citation_pass,"
            " unsupported, cut)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                turn_id,
                kind,
                query,
                model,
                persona,
                prompt_version,
                grounding,
                abstained,
                latency_ms,
                conversation_id,
                message_id,
                tail,
                repaired,
                citation_pass,
                unsupported,
                cut,
            ],
        )
        if chunks:
            values = ", ".join(_row(turn_id, c, c.chunk_id in cited) for c in chunks)
            db.con.execute(
                "INSERT INTO retrievals (turn_id, chunk_id, episode_id, rank, vector_score,"
                f" keyword_score, graph_score, fused_score, final_score, cited) VALUES {values}"
            )
    return turn_id


def _number(value: float | None) -> str:
    if value is None:
        return "NULL"
    number = float(value)
    return repr(number) if math.isfinite(number) else "NULL"


def _row(turn_id: str, chunk: RetrievedChunk, cited: bool) -> str:
    """One VALUES tuple. Every field is a number or a re-formatted UUID, so inlining is safe
    (and one statement beats a parameter per field or an Arrow round trip on small batches)."""
    episode = uuid.UUID(str(chunk.episode_id))
    scores = chunk.scores
    return (
        f"('{turn_id}', {int(chunk.chunk_id)}, '{episode}', {int(chunk.rank)},"
        f" {_number(scores.get('vector'))}, {_number(scores.get('keyword'))},"
        f" {_number(scores.get('graph'))}, {_number(chunk.fused)}, {_number(chunk.final)},"
        f" {'true' if cited else 'false'})"
    )


def mark_cited(db: Database, turn_id: str, chunk_ids: Iterable[int]) -> int:
    """Flag the turn's retrievals whose chunk ended up cited; returns how many were marked."""
    ids = sorted({int(c) for c in chunk_ids})
    if not ids:
        return 0
    listed = ", ".join(str(i) for i in ids)
    with db.lock:
        row = db.execute(
            f"UPDATE retrievals SET cited = true WHERE turn_id = ?::UUID AND chunk_id IN ({listed})",
            [turn_id],
        ).fetchone()
    return int(row[0]) if row else 0
