"""The shapes of the jobs a holder runs for another sadie on its socket (``job_routes``):
the requests of ``sadie ingest``, removing notes and ``sadie reflect``, and the NDJSON lines
a job streams back (progress…, then its report or its error).

Apart from ``shapes`` so a client that only chats never loads the ingest and reflection
modules these name."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

from pydantic import StrictBool

from ..engine.ingest.csvmap import CsvMap
from ..engine.ingest.pipeline import IngestReport
from ..engine.reflect.report import ReflectReport
from ..engine.wire import Text


# -- requests --------------------------------------------------------------------------------
@dataclass(frozen=True)
class IngestRequest:
    """``POST /v1/ingest``: files and folders on the holder's machine (absolute paths, as the
    client resolved them), and ``sadie ingest --map``'s CSV mapping."""

    paths: list[Text]
    csv_map: CsvMap | None = None


@dataclass(frozen=True)
class RemoveNotesRequest:
    """``POST /v1/notes/remove``: deleted files or folders whose notes leave the memory."""

    paths: list[Text]


@dataclass(frozen=True)
class ReflectRequest:
    """``POST /v1/reflect``: ``sadie reflect``'s options."""

    everything: StrictBool = False
    since: date | None = None
    budget_minutes: float | None = None


# -- answers ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class JobProgress:
    """How far a job is: the engine's ``Progress`` (stage, done, total) as one line."""

    stage: str
    done: int
    total: int
    type: Literal["progress"] = "progress"


@dataclass(frozen=True)
class IngestDone:
    """The last line of an ingest: its report, as ``sadie ingest --json`` reads it."""

    report: IngestReport
    type: Literal["report"] = "report"


@dataclass(frozen=True)
class ReflectDone:
    """The last line of a reflection: its report, as ``sadie reflect --json`` reads it."""

    report: ReflectReport
    type: Literal["report"] = "report"


@dataclass(frozen=True)
class JobFailed:
    """The last line of a job that failed: the fields of ``shapes.Error``."""

    error: str
    fix: str | None
    kind: str
    type: Literal["error"] = "error"


IngestLine = JobProgress | IngestDone | JobFailed
ReflectLine = JobProgress | ReflectDone | JobFailed


@dataclass(frozen=True)
class NotesRemoved:
    """``POST /v1/notes/remove``: how many episodes left the memory."""

    removed: int


@dataclass(frozen=True)
class BackupRequest:
    """``POST /v1/backup``: where the holder writes the backup (an absolute path on its machine,
    as the client resolved it)."""

    path: Text
