"""Conversations and their messages: all the SQL for the ``conversations`` and ``messages`` tables.

A conversation holds a title, a short summary, sadie's current emotion, the persona, a pinned
flag and an archived timestamp. ``updated_at`` is the time of the last activity (a message
added or changed); renaming, pinning or archiving do not move a conversation in the list.

The summary is made from the *first exchange* (the person's first message and sadie's first
reply, one line, at most 140 characters), not by a model: it costs nothing and never invents.

Ids are UUID strings; every function that takes a conversation id also accepts a unique prefix
of at least four characters, as printed by ``sadie conversations list``. Functions that write
more than one statement open their own transaction, so do not call them inside
``db.transaction()``.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from .errors import ExitCode, NotFoundError, SadieError
from .store.db import Database
from .titles import make_title

ROLES = ("user", "assistant", "system")
STATUSES = ("streaming", "complete", "interrupted", "error", "blocked")
#: Messages that go back into the briefing as history (not half-written or failed ones).
HISTORY_STATUSES = ("complete", "interrupted", "blocked")
MIN_PREFIX = 4
SUMMARY_LIMIT = 140
EXPORT_FORMAT = "sadie-conversation"
EXPORT_VERSION = 1


class AmbiguousIdError(SadieError):
    """An id prefix that matches more than one row."""

    title = "Ambiguous id"
    exit_code = ExitCode.USAGE


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

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "summary": self.summary,
            "emotion": self.emotion,
            "persona": self.persona,
            "pinned": self.pinned,
            "archived": self.archived_at is not None,
            "archived_at": _iso(self.archived_at),
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
            "message_count": self.message_count,
        }


@dataclass(frozen=True)
class Message:
    id: str
    conversation_id: str
    role: str
    content: str
    status: str
    emotion: str | None
    citations: list[dict] = field(default_factory=list)
    model: str | None = None
    latency_ms: float | None = None
    metadata: dict = field(default_factory=dict)
    created_at: datetime = field(default_factory=datetime.now)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "conversation_id": self.conversation_id,
            "role": self.role,
            "content": self.content,
            "status": self.status,
            "emotion": self.emotion,
            "citations": self.citations,
            "model": self.model,
            "latency_ms": self.latency_ms,
            "metadata": self.metadata,
            "created_at": _iso(self.created_at),
        }


# --------------------------------------------------------------------------- time and ids

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


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def resolve_prefix(
    db: Database,
    table: str,
    ref: str,
    noun: str,
    *,
    where: str = "",
    params: list[Any] | None = None,
) -> str:
    """The full UUID in ``table`` that ``ref`` names: the id itself or a unique prefix.

    ``table`` and ``where`` are trusted SQL from this package, never user text.
    """
    text = (ref or "").strip().lower()
    if len(text) < MIN_PREFIX:
        raise NotFoundError(
            f"no {noun} {ref!r}", fix=f"give at least {MIN_PREFIX} characters of the id"
        )
    extra = f" AND {where}" if where else ""
    rows = db.fetchall(
        f"SELECT CAST(id AS VARCHAR) FROM {table} WHERE starts_with(CAST(id AS VARCHAR), ?)"
        f"{extra} LIMIT 6",
        [text, *(params or [])],
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


def resolve_id(db: Database, conversation_id: str) -> str:
    """The full id of the conversation that ``conversation_id`` (an id or prefix) names."""
    return resolve_prefix(db, "conversations", conversation_id, "conversation")


def _full_id(db: Database, conversation_id: str) -> str:
    """A full id as given (no query: the chat's hot path), else the prefix resolved."""
    try:
        return (
            str(uuid.UUID(conversation_id))
            if len(conversation_id) == 36
            else resolve_id(db, conversation_id)
        )
    except ValueError:
        return resolve_id(db, conversation_id)


# --------------------------------------------------------------------------- conversations

_CONVERSATION_COLUMNS = (
    "CAST(c.id AS VARCHAR), c.title, c.summary, c.emotion, c.persona, c.pinned, c.archived_at,"
    " c.created_at, c.updated_at,"
    " (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id)"
)


def _conversation(row: tuple[Any, ...]) -> Conversation:
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


def create_conversation(db: Database, title: str, *, persona: str | None = None) -> Conversation:
    cid = new_id()
    stamp = now()
    db.execute(
        "INSERT INTO conversations (id, title, persona, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?)",
        [cid, make_title(title), persona, stamp, stamp],
    )
    return get_conversation(db, cid)


def get_conversation(db: Database, conversation_id: str) -> Conversation:
    cid = resolve_id(db, conversation_id)
    row = db.fetchone(f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c WHERE c.id = ?", [cid])
    if row is None:  # deleted between the two statements
        raise NotFoundError(f"no conversation {conversation_id!r}")
    return _conversation(row)


def list_conversations(
    db: Database,
    *,
    archived: bool = False,
    search: str | None = None,
    limit: int | None = None,
) -> list[Conversation]:
    """Pinned first, then by last activity. ``archived=True`` lists only the archived ones.

    ``search`` matches, case-insensitively, the title, the summary or any message's text.
    """
    where = ["c.archived_at IS NOT NULL" if archived else "c.archived_at IS NULL"]
    params: list[Any] = []
    needle = (search or "").strip().lower()
    if needle:
        where.append(
            "(contains(lower(c.title), ?) OR contains(lower(c.summary), ?) OR EXISTS ("
            " SELECT 1 FROM messages m WHERE m.conversation_id = c.id"
            " AND contains(lower(m.content), ?)))"
        )
        params += [needle, needle, needle]
    sql = (
        f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c WHERE {' AND '.join(where)}"
        " ORDER BY c.pinned DESC, c.updated_at DESC, c.created_at DESC, c.id"
    )
    if limit is not None:
        sql += " LIMIT ?"
        params.append(max(0, int(limit)))
    return [_conversation(r) for r in db.fetchall(sql, params)]


def _update(db: Database, conversation_id: str, assignments: str, params: list[Any]) -> str:
    cid = resolve_id(db, conversation_id)
    db.execute(f"UPDATE conversations SET {assignments} WHERE id = ?", [*params, cid])
    return cid


def set_state(
    db: Database,
    conversation_id: str,
    *,
    emotion: str | None = None,
    summary: str | None = None,
    title: str | None = None,
    persona: str | None = None,
) -> None:
    """Set the given fields (``None`` leaves a field as it is)."""
    parts: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("emotion", emotion),
        ("summary", summary),
        ("title", make_title(title) if title is not None else None),
        ("persona", persona),
    ):
        if value is not None:
            parts.append(f"{column} = ?")
            params.append(value)
    if not parts:
        resolve_id(db, conversation_id)  # still a clear error for a wrong id
        return
    _update(db, conversation_id, ", ".join(parts), params)


def pin(db: Database, conversation_id: str, pinned: bool = True) -> None:
    _update(db, conversation_id, "pinned = ?", [bool(pinned)])


def archive(db: Database, conversation_id: str, archived: bool = True) -> None:
    _update(db, conversation_id, "archived_at = ?", [now() if archived else None])


def rename(db: Database, conversation_id: str, title: str) -> None:
    if not (title or "").strip():
        raise SadieError("a conversation title cannot be empty")
    _update(db, conversation_id, "title = ?", [make_title(title, limit=120)])


def forget(db: Database, conversation_id: str) -> None:
    """Delete the conversation with everything of it: messages, chips, policy events, and the
    telemetry turns (and their retrievals) that hold the person's words."""
    cid = resolve_id(db, conversation_id)
    with db.transaction():
        db.execute("DELETE FROM messages WHERE conversation_id = ?", [cid])
        db.execute("DELETE FROM chips WHERE conversation_id = ?", [cid])
        db.execute("DELETE FROM policy_events WHERE conversation_id = ?", [cid])
        db.execute(
            "DELETE FROM retrievals WHERE turn_id IN"
            " (SELECT id FROM turns WHERE conversation_id = ?)",
            [cid],
        )
        db.execute("DELETE FROM turns WHERE conversation_id = ?", [cid])
        db.execute("DELETE FROM conversations WHERE id = ?", [cid])


def summary_from_first_exchange(user: str, assistant: str) -> str:
    """The conversation's summary: its first exchange on one line, at most 140 characters.

    We use the first exchange rather than a model summary: it is free, immediate and never
    says anything the conversation did not. The person's words get up to 60 characters.
    """
    question = make_title(user, 60) if (user or "").strip() else ""
    if not (assistant or "").strip():
        return question
    if not question:
        return make_title(assistant, SUMMARY_LIMIT)
    joiner = " → "
    room = SUMMARY_LIMIT - len(question) - len(joiner)
    if room < 12:
        return question
    return question + joiner + make_title(assistant, room)


# --------------------------------------------------------------------------- messages

_MESSAGE_COLUMNS = (
    "CAST(id AS VARCHAR), CAST(conversation_id AS VARCHAR), role, content, status, emotion,"
    " citations, model, latency_ms, metadata, created_at"
)


def _load_json(value: Any, default: Any) -> Any:
    if value is None or value == "":
        return default
    if isinstance(value, (list, dict)):
        return value
    try:
        loaded = json.loads(value)
    except (TypeError, ValueError):
        return default
    return loaded if isinstance(loaded, type(default)) else default


def _message(row: tuple[Any, ...]) -> Message:
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


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, default=str)


def _check(role: str | None, status: str | None) -> None:
    if role is not None and role not in ROLES:
        raise ValueError(f"unknown message role {role!r} (one of {', '.join(ROLES)})")
    if status is not None and status not in STATUSES:
        raise ValueError(f"unknown message status {status!r} (one of {', '.join(STATUSES)})")


def add_message(
    db: Database,
    conversation_id: str,
    role: str,
    content: str,
    status: str = "complete",
    *,
    emotion: str | None = None,
    model: str | None = None,
    metadata: dict | None = None,
    citations: list[dict] | None = None,
    latency_ms: float | None = None,
    created_at: datetime | None = None,
) -> str:
    """Append a message and mark the conversation active. Returns the message id."""
    _check(role, status)
    cid = resolve_id(db, conversation_id)
    mid = new_id()
    stamp = created_at or now()
    db.execute(
        "INSERT INTO messages (id, conversation_id, role, content, status, emotion, citations,"
        " model, latency_ms, metadata, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            mid,
            cid,
            role,
            content,
            status,
            emotion,
            _dump(citations if citations is not None else []),
            model,
            latency_ms,
            _dump(metadata if metadata is not None else {}),
            stamp,
        ],
    )
    db.execute(
        "UPDATE conversations SET updated_at = greatest(updated_at, ?) WHERE id = ?", [stamp, cid]
    )
    return mid


def update_message(
    db: Database,
    message_id: str,
    *,
    content: str | None = None,
    status: str | None = None,
    emotion: str | None = None,
    citations: list[dict] | None = None,
    latency_ms: float | None = None,
    metadata: dict | None = None,
    model: str | None = None,
) -> None:
    """Change the given fields of a message (``None`` leaves a field as it is)."""
    _check(None, status)
    parts: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("content", content),
        ("status", status),
        ("emotion", emotion),
        ("citations", _dump(citations)),
        ("latency_ms", latency_ms),
        ("metadata", _dump(metadata)),
        ("model", model),
    ):
        if value is not None:
            parts.append(f"{column} = ?")
            params.append(value)
    row = db.fetchone(
        "SELECT CAST(conversation_id AS VARCHAR) FROM messages WHERE id = TRY_CAST(? AS UUID)",
        [message_id],
    )
    if row is None:
        raise NotFoundError(f"no message {message_id!r}")
    if not parts:
        return
    db.execute(f"UPDATE messages SET {', '.join(parts)} WHERE id = ?", [*params, message_id])
    if status is not None:  # a reply finishing is activity; streaming checkpoints are not
        db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", [now(), row[0]])


def get_message(db: Database, message_id: str) -> Message:
    row = db.fetchone(
        f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE id = TRY_CAST(? AS UUID)", [message_id]
    )
    if row is None:
        raise NotFoundError(f"no message {message_id!r}")
    return _message(row)


def messages(db: Database, conversation_id: str) -> list[Message]:
    """Every message of the conversation, oldest first."""
    cid = resolve_id(db, conversation_id)
    rows = db.fetchall(
        f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ?"
        " ORDER BY created_at, id",
        [cid],
    )
    return [_message(r) for r in rows]


def recent_messages(db: Database, conversation_id: str, limit: int = 12) -> list[Message]:
    """The last ``limit`` user and assistant messages fit for the briefing, oldest first.

    Only finished ones count (complete, interrupted, blocked): a message still streaming, or
    one that failed, is not history the model should see.
    """
    if limit <= 0:
        return []
    placeholders = ", ".join("?" for _ in HISTORY_STATUSES)
    rows = db.fetchall(
        f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ?"
        f" AND role IN ('user', 'assistant') AND status IN ({placeholders})"
        " ORDER BY created_at DESC, id DESC LIMIT ?",
        [_full_id(db, conversation_id), *HISTORY_STATUSES, int(limit)],
    )
    return [_message(r) for r in reversed(rows)]


def count_messages(db: Database, conversation_id: str) -> int:
    row = db.fetchone(
        "SELECT count(*) FROM messages WHERE conversation_id = ?", [_full_id(db, conversation_id)]
    )
    return int(row[0]) if row else 0


# --------------------------------------------------------------------------- export / import


def export(db: Database, conversation_id: str, fmt: str) -> str:
    """The conversation as Markdown (``md``) or JSON (``json``, which ``import_json`` reads)."""
    fmt = (fmt or "").lower().lstrip(".")
    if fmt in ("markdown",):
        fmt = "md"
    if fmt not in ("md", "json"):
        raise SadieError(f"unknown export format {fmt!r} (md or json)")
    conversation = get_conversation(db, conversation_id)
    items = messages(db, conversation.id)
    chips = db.fetchall(
        "SELECT kind, ref_id, label, snippet, created_at FROM chips WHERE conversation_id = ?"
        " ORDER BY created_at, id",
        [conversation.id],
    )
    if fmt == "json":
        data = {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "conversation": conversation.to_json(),
            "messages": [m.to_json() for m in items],
            "chips": [
                {"kind": k, "ref_id": r, "label": label, "snippet": s, "created_at": _iso(t)}
                for k, r, label, s, t in chips
            ],
        }
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    return _markdown(conversation, items, [(k, label) for k, _r, label, _s, _t in chips])


def _markdown(
    conversation: Conversation, items: list[Message], chips: list[tuple[str, str]]
) -> str:
    lines = [f"# {conversation.title}", ""]
    facts = [f"started {conversation.created_at:%Y-%m-%d %H:%M}"]
    if conversation.emotion:
        facts.append(f"feeling {conversation.emotion}")
    if conversation.persona:
        facts.append(f"persona {conversation.persona}")
    facts.append(f"id {conversation.id}")
    lines += [f"*{' · '.join(facts)}*", ""]
    if conversation.summary:
        lines += [f"> {conversation.summary}", ""]
    if chips:
        lines.append("Attached context: " + ", ".join(f"{k} “{label}”" for k, label in chips))
        lines.append("")
    for message in items:
        who = {"user": "You", "assistant": "sadie", "system": "System"}.get(
            message.role, message.role
        )
        head = f"## {who} · {message.created_at:%Y-%m-%d %H:%M}"
        if message.emotion and message.role == "assistant":
            head += f" · {message.emotion}"
        if message.status != "complete":
            head += f" ({message.status})"
        lines += [head, "", message.content.rstrip(), ""]
        for n, citation in enumerate(message.citations, start=1):
            lines.append(f"{n}. {citation_line(citation)}")
        if message.citations:
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def support_label(support: str | None) -> str:
    return "reading between the lines" if support == "inference" else (support or "")


def citation_line(citation: dict) -> str:
    """One citation as plain text: source, support label, quote."""
    episode = str(citation.get("episode_id") or citation.get("episode") or "")
    title = str(citation.get("title") or "") or f"episode {episode[:8]}"
    date = str(citation.get("date") or "")
    source = f"{title} ({date})" if date else title
    label = support_label(citation.get("support"))
    quote = " ".join(str(citation.get("quote") or "").split())
    text = f"{source} — {label}" if label else source
    return f"{text}: “{quote}”" if quote else text


def import_json(db: Database, text: str) -> Conversation:
    """A new conversation (new ids) with the title, state, messages and chips of an export."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SadieError(f"not a sadie conversation export: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("conversation"), dict):
        raise SadieError("not a sadie conversation export: no 'conversation' object")
    head = data["conversation"]
    items = data.get("messages") or []
    if not isinstance(items, list):
        raise SadieError("not a sadie conversation export: 'messages' is not a list")
    cid = new_id()
    stamp = now()
    with db.transaction():
        db.execute(
            "INSERT INTO conversations (id, title, summary, emotion, persona, pinned,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                cid,
                make_title(str(head.get("title") or ""), limit=120),
                str(head.get("summary") or ""),
                head.get("emotion"),
                head.get("persona"),
                bool(head.get("pinned")),
                _parse_time(head.get("created_at")) or stamp,
                stamp,
            ],
        )
        for item in items:
            if not isinstance(item, dict):
                continue
            role = item.get("role") if item.get("role") in ROLES else "user"
            status = item.get("status") if item.get("status") in STATUSES else "complete"
            db.execute(
                "INSERT INTO messages (id, conversation_id, role, content, status, emotion,"
                " citations, model, latency_ms, metadata, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    new_id(),
                    cid,
                    role,
                    str(item.get("content") or ""),
                    status,
                    item.get("emotion"),
                    _dump(item.get("citations") if isinstance(item.get("citations"), list) else []),
                    item.get("model"),
                    item.get("latency_ms"),
                    _dump(item.get("metadata") if isinstance(item.get("metadata"), dict) else {}),
                    _parse_time(item.get("created_at")) or now(),
                ],
            )
        for chip in data.get("chips") or []:
            if not isinstance(chip, dict) or not chip.get("kind") or not chip.get("ref_id"):
                continue
            db.execute(
                "INSERT INTO chips (id, conversation_id, kind, ref_id, label, snippet, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    new_id(),
                    cid,
                    str(chip["kind"]),
                    str(chip["ref_id"]),
                    str(chip.get("label") or chip["ref_id"]),
                    chip.get("snippet"),
                    now(),
                ],
            )
    return get_conversation(db, cid)


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.replace(tzinfo=None)
