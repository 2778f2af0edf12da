"""What the memory holds, as one shape: ``sadie stats --json`` prints it, ``GET /v1/stats``
answers it and a second sadie reads it back (``wire``)."""

from __future__ import annotations

from dataclasses import dataclass

from .store.stats import TopEntity


@dataclass(frozen=True)
class Stats:
    """The home and database file, their size, rows per table, episode and entity kinds, the
    date span (ISO days), the most mentioned entities, belief statuses, whether a soul exists."""

    home: str
    database: str
    size_bytes: int
    counts: dict[str, int]
    episode_kinds: dict[str, int]
    first: str | None
    last: str | None
    entity_kinds: dict[str, int]
    top_entities: list[TopEntity]
    beliefs: dict[str, int]
    has_soul: bool
