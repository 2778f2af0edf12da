"""The conversations repository: the ``conversations`` and ``messages`` tables, read into
``Conversation`` and ``Message`` records.

Ids given here are full UUIDs; ``resolve_id`` turns a typed prefix into one first (here,
below both the conversations and the chips that name a conversation). Citations and metadata
are stored as JSON text and come back as lists and dicts. Functions that write several
statements open their own transaction, so do not call them inside ``db.transaction()``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict, TypeVar, Unpack

from pydantic import computed_field

from ..jsonvalue import JSONObject
from ..wire import dump
from .db import Database, Row
from .ids import resolve_prefix

#: Columns a conversation update may set.
CONVERSATION_FIELDS = ("title", "summary", "emotion", "persona", "pinned", "archived_at")
#: Columns a message update may set.
MESSAGE_FIELDS = ("content", "status", "emotion", "citations", "latency_ms", "metadata", "model")

J = TypeVar("J", list[JSONObject], JSONObject)


class ConversationFields(TypedDict, total=False):
    """What ``update_conversation`` may set (``CONVERSATION_FIELDS``), each with its type."""

    title: str
    summary: str
    emotion: str
    persona: str
    pinned: bool
    archived_at: datetime | None


class MessageFields(TypedDict, total=False):
    """What ``update_message`` may set (``MESSAGE_FIELDS``), each with its type."""

    content: str
    status: str
    emotion: str
    citations: list[JSONObject]
    latency_ms: float
    metadata: JSONObject
    model: str


def resolve_id(db: Database, conversation_id: str) -> str:
    """The full id of the conversation that ``conversation_id`` (an id or prefix) names."""
    return resolve_prefix(db, "conversations", conversation_id, "conversation")


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@dataclass(frozen=True)
class Conversation:
    id: str
    title: str
    summary: str
    emotion: str | None
    persona: str | None
    pinned: bool
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime
    message_count: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def archived(self) -> bool:
        """Whether the conversation is archived (printed with it, never read back)."""
        return self.archived_at is not None

    def to_json(self) -> JSONObject:
        """Its JSON (``wire``): `conversations list --json`, the API, exports."""
        data: JSONObject = dump(self)
        return data


@dataclass(frozen=True)
class Message:
    id: str
    conversation_id: str
    role: str
    content: str
    status: str
    emotion: str | None
    citations: list[JSONObject] = field(default_factory=list)
    model: str | None = None
    latency_ms: float | None = None
    metadata: JSONObject = field(default_factory=dict)
    created_at: datetime = field(default_factory=datetime.now)

    def to_json(self) -> JSONObject:
        """Its JSON (``wire``): `conversations show --json`, the API, exports."""
        data: JSONObject = dump(self)
        return data


def dump_json(value: object) -> str | None:
    """``value`` as the JSON text a column keeps (``None`` stays NULL)."""
    return None if value is None else json.dumps(value, ensure_ascii=False, default=str)


def _load_json(value: object, default: J) -> J:
    """A JSON column read back: ``default`` for NULL, empty or unreadable text, or a value of
    another kind than ``default``'s (a list where a dict belongs)."""
    if value is None or value == "":
        return default
    loaded = value
    if isinstance(value, (str, bytes)):
        try:
            loaded = json.loads(value)
        except ValueError:
            return default
    return loaded if isinstance(loaded, type(default)) else default


# --------------------------------------------------------------------------- conversations

_CONVERSATION_SQL = (
    "SELECT CAST(c.id AS VARCHAR), c.title, c.summary, c.emotion, c.persona, c.pinned,"
    " c.archived_at, c.created_at, c.updated_at,"
    " (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id"
    " AND m.status <> 'superseded')"
    " FROM conversations c"
)
_ORDER_SQL = " ORDER BY c.pinned DESC, c.updated_at DESC, c.created_at DESC, c.id"
_SEARCH_SQL = (
    " AND (contains(lower(c.title), ?) OR contains(lower(c.summary), ?) OR EXISTS ("
    " SELECT 1 FROM messages m WHERE m.conversation_id = c.id"
    " AND m.status <> 'superseded' AND contains(lower(m.content), ?)))"
)


def _conversation(row: Row) -> Conversation:
    return Conversation(
        id=row[0],
        title=row[1],
        summary=row[2] or "",
        emotion=row[3],
        persona=row[4],
        pinned=bool(row[5]),
        archived_at=row[6],
        created_at=row[7],
        updated_at=row[8],
        message_count=int(row[9] or 0),
    )


def insert_conversation(
    db: Database,
    conversation_id: str,
    *,
    title: str,
    created_at: datetime,
    updated_at: datetime,
    summary: str | None = None,
    emotion: str | None = None,
    persona: str | None = None,
    pinned: bool | None = None,
) -> None:
    """A new conversation (summary "" and not pinned unless given)."""
    db.execute(
        "INSERT INTO conversations (id, title, summary, emotion, persona, pinned,"
        " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            conversation_id,
            title,
            summary or "",
            emotion,
            persona,
            bool(pinned),
            created_at,
            updated_at,
        ],
    )


def get_conversation(db: Database, conversation_id: str) -> Conversation | None:
    row = db.fetchone(_CONVERSATION_SQL + " WHERE c.id = ?", [conversation_id])
    return _conversation(row) if row else None


def list_conversations(
    db: Database, *, archived: bool, needle: str = "", limit: int | None = None
) -> list[Conversation]:
    """Pinned first, then by last activity; ``needle`` (lower case) searches the title, the
    summary and every message's text."""
    where_sql = " WHERE c.archived_at IS NOT NULL" if archived else " WHERE c.archived_at IS NULL"
    params: list[object] = []
    sql = _CONVERSATION_SQL + where_sql
    if needle:
        sql += _SEARCH_SQL
        params += [needle, needle, needle]
    sql += _ORDER_SQL
    if limit is not None:
        sql += " LIMIT ?"
        params.append(max(0, int(limit)))
    return [_conversation(r) for r in db.fetchall(sql, params)]


def _assignments(fields: Mapping[str, object], allowed: Sequence[str]) -> tuple[str, list[object]]:
    unknown = [name for name in fields if name not in allowed]
    if unknown:
        raise ValueError(f"cannot set {', '.join(unknown)}")
    return ", ".join(f"{name} = ?" for name in fields), list(fields.values())


def update_conversation(
    db: Database, conversation_id: str, **fields: Unpack[ConversationFields]
) -> None:
    """Set the given columns (names from ``CONVERSATION_FIELDS``) of one conversation."""
    if not fields:
        return
    assignments_sql, params = _assignments(fields, CONVERSATION_FIELDS)
    db.execute(
        f"UPDATE conversations SET {assignments_sql} WHERE id = ?", [*params, conversation_id]
    )


def touch(db: Database, conversation_id: str, stamp: datetime, *, only_later: bool) -> None:
    """Mark activity at ``stamp``; ``only_later`` never moves ``updated_at`` back."""
    if only_later:
        db.execute(
            "UPDATE conversations SET updated_at = greatest(updated_at, ?) WHERE id = ?",
            [stamp, conversation_id],
        )
    else:
        db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", [stamp, conversation_id])


def delete_conversation(db: Database, conversation_id: str) -> None:
    """The conversation with everything of it: messages, chips, policy events, and the
    telemetry turns (and their retrievals) that hold the person's words."""
    with db.transaction():
        db.execute("DELETE FROM messages WHERE conversation_id = ?", [conversation_id])
        db.execute("DELETE FROM chips WHERE conversation_id = ?", [conversation_id])
        db.execute("DELETE FROM policy_events WHERE conversation_id = ?", [conversation_id])
        db.execute(
            "DELETE FROM retrievals WHERE turn_id IN"
            " (SELECT id FROM turns WHERE conversation_id = ?)",
            [conversation_id],
        )
        db.execute("DELETE FROM turns WHERE conversation_id = ?", [conversation_id])
        db.execute("DELETE FROM conversations WHERE id = ?", [conversation_id])


# --------------------------------------------------------------------------- messages

_MESSAGE_SQL = (
    "SELECT CAST(id AS VARCHAR), CAST(conversation_id AS VARCHAR), role, content, status,"
    " emotion, citations, model, latency_ms, metadata, created_at FROM messages"
)


def _message(row: Row) -> Message:
    return Message(
        id=row[0],
        conversation_id=row[1],
        role=row[2],
        content=row[3],
        status=row[4],
        emotion=row[5],
        citations=_load_json(row[6], []),
        model=row[7],
        latency_ms=row[8],
        metadata=_load_json(row[9], {}),
        created_at=row[10],
    )


# Replies this process is streaming now: the only ``streaming`` rows that are not leftovers.
_streaming_here: set[str] = set()
_streaming_lock = threading.Lock()


def _track(message_id: str, status: str) -> None:
    with _streaming_lock:
        if status == "streaming":
            _streaming_here.add(message_id)
        else:
            _streaming_here.discard(message_id)


def insert_message(
    db: Database,
    message_id: str,
    conversation_id: str,
    *,
    role: str,
    content: str,
    status: str,
    emotion: str | None,
    citations: list[JSONObject],
    model: str | None,
    latency_ms: float | None,
    metadata: JSONObject,
    created_at: datetime,
) -> None:
    db.execute(
        "INSERT INTO messages (id, conversation_id, role, content, status, emotion, citations,"
        " model, latency_ms, metadata, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            message_id,
            conversation_id,
            role,
            content,
            status,
            emotion,
            dump_json(citations),
            model,
            latency_ms,
            dump_json(metadata),
            created_at,
        ],
    )
    _track(message_id, status)


def conversation_of_message(db: Database, message_id: str) -> str | None:
    """The conversation id of a message, or ``None`` (also for a malformed id)."""
    row = db.fetchone(
        "SELECT CAST(conversation_id AS VARCHAR) FROM messages WHERE id = TRY_CAST(? AS UUID)",
        [message_id],
    )
    return row[0] if row else None


def update_message(db: Database, message_id: str, **fields: Unpack[MessageFields]) -> None:
    """Set the given columns (names from ``MESSAGE_FIELDS``; citations and metadata as lists
    and dicts) of one message."""
    if not fields:
        return
    values: dict[str, object] = dict(fields)
    for name in ("citations", "metadata"):
        if name in values:
            values[name] = dump_json(values[name])
    assignments_sql, params = _assignments(values, MESSAGE_FIELDS)
    db.execute(f"UPDATE messages SET {assignments_sql} WHERE id = ?", [*params, message_id])
    if "status" in fields:
        _track(message_id, fields["status"])


def interrupt_leftovers(db: Database) -> int:
    """Mark ``interrupted`` every reply still ``streaming`` that this process is not writing.

    One process writes to a memory at a time (the file lock), so such a reply belongs to a
    process that ended (killed, crashed, its terminal closed) before it finished; what it had
    streamed is kept. Call on opening a memory for writing. Returns how many were marked.
    """
    with _streaming_lock:
        live = sorted(_streaming_here)
    rows = db.fetchall(
        "UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'"
        " AND NOT list_contains(?::UUID[], id) RETURNING id",
        [live],
    )
    return len(rows)


def get_message(db: Database, message_id: str) -> Message | None:
    row = db.fetchone(_MESSAGE_SQL + " WHERE id = TRY_CAST(? AS UUID)", [message_id])
    return _message(row) if row else None


def messages_of(db: Database, conversation_id: str, *, superseded: bool = False) -> list[Message]:
    """Every message of the conversation, oldest first; replaced ones (a regenerated reply,
    an edited message) only with ``superseded``."""
    rows = db.fetchall(
        _MESSAGE_SQL + " WHERE conversation_id = ? AND (? OR status <> 'superseded')"
        " ORDER BY created_at, id",
        [conversation_id, superseded],
    )
    return [_message(r) for r in rows]


def supersede(db: Database, message_ids: Sequence[str]) -> None:
    """Mark messages as replaced: kept, never shown, counted or sent as history again."""
    if message_ids:
        db.execute(
            "UPDATE messages SET status = 'superseded' WHERE list_contains(?, CAST(id AS VARCHAR))",
            [list(message_ids)],
        )


def recent_messages(
    db: Database, conversation_id: str, statuses: Sequence[str], limit: int
) -> list[Message]:
    """The last ``limit`` user and assistant messages with one of ``statuses``, oldest first."""
    rows = db.fetchall(
        _MESSAGE_SQL + " WHERE conversation_id = ? AND role IN ('user', 'assistant')"
        " AND list_contains(?, status) ORDER BY created_at DESC, id DESC LIMIT ?",
        [conversation_id, list(statuses), int(limit)],
    )
    return [_message(r) for r in reversed(rows)]


def count_messages(db: Database, conversation_id: str) -> int:
    row = db.fetchone(
        "SELECT count(*) FROM messages WHERE conversation_id = ? AND status <> 'superseded'",
        [conversation_id],
    )
    return int(row[0]) if row else 0
