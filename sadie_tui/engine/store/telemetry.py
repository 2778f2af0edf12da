"""The telemetry repository: ``turns`` (one per search, ask or chat), ``retrievals`` (one per
chunk a turn retrieved) and ``policy_events`` (a policy that matched a reply).

A turn's retrievals go in as one statement whatever their number, from an Arrow table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from .db import Database


@dataclass(frozen=True)
class TurnRecord:
    id: str
    kind: str
    query: str
    model: str | None
    persona: str | None
    prompt_version: str | None
    grounding: float | None
    abstained: bool | None
    latency_ms: float | None
    conversation_id: str | None = None
    message_id: str | None = None
    tail: str | None = None
    repaired: bool | None = None
    citation_pass: str | None = None
    unsupported: int | None = None
    cut: str | None = None


@dataclass(frozen=True)
class RetrievalRecord:
    chunk_id: int
    episode_id: str
    rank: int
    vector_score: float | None
    keyword_score: float | None
    graph_score: float | None
    fused_score: float | None
    final_score: float | None
    cited: bool


def _finite(value: float | None) -> float | None:
    """NaN and infinities are stored as NULL."""
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def insert_turn(db: Database, turn: TurnRecord) -> None:
    db.execute(
        "INSERT INTO turns (id, kind, query, model, persona, prompt_version, grounding,"
        " abstained, latency_ms, conversation_id, message_id, tail, repaired, citation_pass,"
        " unsupported, cut)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            turn.id,
            turn.kind,
            turn.query,
            turn.model,
            turn.persona,
            turn.prompt_version,
            turn.grounding,
            turn.abstained,
            turn.latency_ms,
            turn.conversation_id,
            turn.message_id,
            turn.tail,
            turn.repaired,
            turn.citation_pass,
            turn.unsupported,
            turn.cut,
        ],
    )


def insert_retrievals(db: Database, turn_id: str, rows: Sequence[RetrievalRecord]) -> None:
    """The turn's retrieved chunks, in one statement over an Arrow table (a list parameter
    costs the DuckDB client a Python conversion per element: ~4 ms a turn)."""
    if not rows:
        return
    scores = ("vector_score", "keyword_score", "graph_score", "fused_score", "final_score")
    table = pa.table(
        {
            "chunk_id": pa.array([int(r.chunk_id) for r in rows], pa.int64()),
            "episode_id": pa.array([str(r.episode_id) for r in rows], pa.string()),
            "rank": pa.array([int(r.rank) for r in rows], pa.int32()),
            **{
                name: pa.array([_finite(getattr(r, name)) for r in rows], pa.float64())
                for name in scores
            },
            "cited": pa.array([bool(r.cited) for r in rows], pa.bool_()),
        }
    )
    with db.registered("_arrow_in", table):
        db.execute(
            "INSERT INTO retrievals (turn_id, chunk_id, episode_id, rank, vector_score,"
            " keyword_score, graph_score, fused_score, final_score, cited)"
            " SELECT ?::UUID, chunk_id, episode_id::UUID, rank, vector_score, keyword_score,"
            " graph_score, fused_score, final_score, cited FROM _arrow_in",
            [turn_id],
        )


def mark_cited(db: Database, turn_id: str, chunk_ids: Sequence[int]) -> int:
    """Flag the turn's retrievals of these chunks as cited; returns how many were marked."""
    if not chunk_ids:
        return 0
    row = db.fetchone(
        "UPDATE retrievals SET cited = true WHERE turn_id = ?::UUID"
        " AND list_contains(?::BIGINT[], chunk_id)",
        [turn_id, [int(c) for c in chunk_ids]],
    )
    return int(row[0]) if row else 0


def add_policy_event(
    db: Database,
    conversation_id: str | None,
    message_id: str | None,
    policy: str,
    action: str,
    match: str | None,
) -> None:
    """A policy that matched a reply (``match`` is kept to its first 500 characters)."""
    db.execute(
        "INSERT INTO policy_events (id, conversation_id, message_id, policy, action, match)"
        " VALUES (uuid(), ?, ?, ?, ?, ?)",
        [conversation_id, message_id, policy, action, match[:500] if match is not None else None],
    )
