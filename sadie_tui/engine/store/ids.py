"""Ids and timestamps of new rows, and short id prefixes resolved to full ids.

Ids are UUID strings; people may type a unique prefix of at least four characters, as
``sadie conversations list`` prints them. Timestamps come from one strictly increasing clock,
so rows written within the same microsecond still sort in the order they were written.
"""

from __future__ import annotations

import threading
import uuid
from datetime import datetime, timedelta

from ..errors import ExitCode, NotFoundError, SadieError
from .db import Database

MIN_PREFIX = 4

#: The tables whose UUID ids may be given as prefixes.
PREFIX_TABLES = (
    "conversations",
    "chips",
    "episodes",
    "wiki_entries",
    "briefs",
    "today_cards",
    "beliefs",
    "observations",
)


class AmbiguousIdError(SadieError):
    """An id prefix that matches more than one row."""

    title = "Ambiguous id"
    exit_code = ExitCode.USAGE


_clock_lock = threading.Lock()
_last_tick = datetime.min


def now() -> datetime:
    """Local wall-clock time, strictly increasing within this process.

    Messages and chips are ordered by their timestamps; two written within the same
    microsecond would otherwise tie.
    """
    global _last_tick
    with _clock_lock:
        tick = datetime.now()
        if tick <= _last_tick:
            tick = _last_tick + timedelta(microseconds=1)
        _last_tick = tick
        return tick


def new_id() -> str:
    return str(uuid.uuid4())


def resolve_prefix(
    db: Database,
    table: str,
    ref: str,
    noun: str,
    *,
    conversation_id: str | None = None,
) -> str:
    """The full UUID in ``table`` that ``ref`` names: the id itself or a unique prefix.

    With ``conversation_id`` (chips only), only that conversation's rows count.
    """
    if table not in PREFIX_TABLES:
        raise ValueError(f"ids of {table!r} are not resolved by prefix")
    text = (ref or "").strip().lower()
    if len(text) < MIN_PREFIX:
        raise NotFoundError(
            f"no {noun} {ref!r}", fix=f"give at least {MIN_PREFIX} characters of the id"
        )
    if conversation_id is not None:
        rows = db.fetchall(
            f"SELECT CAST(id AS VARCHAR) FROM {table} WHERE starts_with(CAST(id AS VARCHAR), ?)"
            " AND conversation_id = ? LIMIT 6",
            [text, conversation_id],
        )
    else:
        rows = db.fetchall(
            f"SELECT CAST(id AS VARCHAR) FROM {table} WHERE starts_with(CAST(id AS VARCHAR), ?)"
            " LIMIT 6",
            [text],
        )
    if not rows:
        raise NotFoundError(f"no {noun} {ref!r}")
    exact = [r[0] for r in rows if r[0] == text]
    if exact:
        return str(exact[0])
    if len(rows) > 1:
        shown = ", ".join(r[0][:8] for r in rows[:5])
        raise AmbiguousIdError(
            f"{noun} id {ref!r} is ambiguous: it matches {shown}",
            fix="give more characters of the id",
        )
    return str(rows[0][0])
