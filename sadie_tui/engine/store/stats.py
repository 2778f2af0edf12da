"""What the memory holds, counted: rows per table, episode and entity kinds, the date span,
the most mentioned entities and belief statuses (``sadie stats``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .db import Database
from .schema import STAT_TABLES


@dataclass(frozen=True)
class TopEntity:
    name: str
    kind: str
    episodes: int


@dataclass(frozen=True)
class MemoryCounts:
    counts: dict[str, int]
    episode_kinds: dict[str, int]
    first: datetime | None
    last: datetime | None
    entity_kinds: dict[str, int]
    top_entities: list[TopEntity]
    beliefs: dict[str, int]


def _count(db: Database, table: str) -> int:
    if table not in STAT_TABLES:
        raise ValueError(f"not a counted table: {table!r}")
    row = db.fetchone(f"SELECT count(*) FROM {table}")
    return int(row[0]) if row else 0


def _counts(db: Database, sql: str) -> dict[str, int]:
    """A ``name, count`` query as a dict, in the query's order."""
    return {str(name): int(count) for name, count in db.fetchall(sql)}


def memory_counts(db: Database) -> MemoryCounts:
    counts = {table: _count(db, table) for table in STAT_TABLES}
    kinds = _counts(db, "SELECT kind, count(*) FROM episodes GROUP BY kind ORDER BY 2 DESC")
    span = db.fetchone("SELECT min(occurred_at), max(occurred_at) FROM episodes")
    entity_kinds = _counts(db, "SELECT kind, count(*) FROM entities GROUP BY kind ORDER BY 2 DESC")
    top = db.fetchall(
        "SELECT e.name, e.kind, count(DISTINCT m.episode_id) n FROM entities e"
        " JOIN entity_mentions m ON m.entity_id = e.id GROUP BY e.name, e.kind"
        " ORDER BY n DESC, e.name LIMIT 10"
    )
    beliefs = _counts(db, "SELECT status, count(*) FROM beliefs GROUP BY status")
    return MemoryCounts(
        counts=counts,
        episode_kinds=kinds,
        first=span[0] if span else None,
        last=span[1] if span else None,
        entity_kinds=entity_kinds,
        top_entities=[TopEntity(n, k, int(c)) for n, k, c in top],
        beliefs=beliefs,
    )
