"""What a turn or a job is asked: the requests of the door's streamed operations, declared
once and handed whole to ``SessionProtocol.chat``, ``ingest`` and ``reflect`` (the session in process, the
client of a holder, the tests' fake), so the door's members share one signature instead of
restating it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .chips import NewChip
    from .ingest.reader import CsvMap


@dataclass(frozen=True)
class ChatTurn:
    """One message to answer. ``new``: in a new conversation even when ``conversation_id``
    names one; ``regenerate``: answer the conversation's last message again (``message``
    empty) or an edit of it, the old exchange kept as ``superseded``; ``model``: this turn's
    model instead of the configured one; ``chips``: attached once the conversation is found
    or created, before the turn reads its chips (one that cannot be attached fails the turn,
    and takes back the conversation it created)."""

    message: str
    conversation_id: str | None = None
    persona: str | None = None
    new: bool = False
    regenerate: bool = False
    model: str | None = None
    chips: tuple[NewChip, ...] = ()


@dataclass(frozen=True)
class ReflectJob:
    """One run of reflection: on the episodes waiting (``everything``: on all of them;
    ``since``: on all dated that day or later), bounded by ``budget_minutes``; ``progress`` is
    told (stage, done, total) as batches go, and ``stop`` is asked between them (True ends the
    run early, the batches done kept). Through a holder, ``stop`` is not sent: hanging up
    stops its run between batches the same way."""

    everything: bool = False
    since: date | None = None
    budget_minutes: float | None = None
    progress: Callable[[str, int, int], None] | None = None
    stop: Callable[[], bool] | None = None


@dataclass(frozen=True)
class IngestJob:
    """How an ingest runs beyond its paths: ``progress`` told (stage, done, total) as files
    are read, and the column ``csv_map`` for CSV files (``sadie ingest --map``)."""

    progress: Callable[[str, int, int], None] | None = None
    csv_map: CsvMap | None = None
