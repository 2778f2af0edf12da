"""What one ingest did, as one frozen shape: ``sadie ingest --json`` prints it (``wire``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SkippedFile:
    """A file left out, by the name shown for it, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class IngestSummary:
    """Episodes added, updated and unchanged; files skipped (could not be read) and ignored
    (left out on purpose); chunks written; entities known; derived rows by table; seconds
    taken (to the millisecond); files read; notes found under a new path."""

    added: int
    updated: int
    unchanged: int
    skipped: list[SkippedFile]
    ignored: list[SkippedFile]
    chunks: int
    entities: int
    derived: dict[str, int]
    elapsed: float
    files: int
    moved: int
