"""A conversation's messages: appended, updated as a reply streams and finishes, read back
whole or as the briefing's recent history."""

from __future__ import annotations

import uuid
from datetime import datetime

from ..errors import NotFoundError
from ..jsonvalue import JSONObject
from ..store import conversations as repo
from ..store.conversations import resolve_id
from ..store.db import Database
from ..store.ids import now
from .lifecycle import full_id

Message = repo.Message

ROLES = ("user", "assistant", "system")
STATUSES = ("streaming", "complete", "interrupted", "error", "blocked", "superseded")
#: Messages that go back into the briefing as history (not half-written or failed ones).
HISTORY_STATUSES = ("complete", "interrupted", "blocked")


def check(role: str | None, status: str | None) -> None:
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
    metadata: JSONObject | None = None,
    citations: list[JSONObject] | None = None,
    latency_ms: float | None = None,
    created_at: datetime | None = None,
    message_id: str | None = None,
) -> str:
    """Append a message and mark the conversation active. Returns the message id (
    ``message_id`` when the caller chose it beforehand: a turn names its messages before it
    writes them, after the model has been asked)."""
    check(role, status)
    cid = resolve_id(db, conversation_id)
    mid = message_id or str(uuid.uuid4())
    stamp = created_at or now()
    repo.insert_message(
        db,
        mid,
        cid,
        role=role,
        content=content,
        status=status,
        emotion=emotion,
        citations=citations if citations is not None else [],
        model=model,
        latency_ms=latency_ms,
        metadata=metadata if metadata is not None else {},
        created_at=stamp,
    )
    repo.touch(db, cid, stamp, only_later=True)
    return mid


def update_message(
    db: Database,
    message_id: str,
    *,
    content: str | None = None,
    status: str | None = None,
    emotion: str | None = None,
    citations: list[JSONObject] | None = None,
    latency_ms: float | None = None,
    metadata: JSONObject | None = None,
    model: str | None = None,
) -> None:
    """Change the given fields of a message (``None`` leaves a field as it is)."""
    check(None, status)
    fields: repo.MessageFields = {}
    if content is not None:
        fields["content"] = content
    if status is not None:
        fields["status"] = status
    if emotion is not None:
        fields["emotion"] = emotion
    if citations is not None:
        fields["citations"] = citations
    if latency_ms is not None:
        fields["latency_ms"] = latency_ms
    if metadata is not None:
        fields["metadata"] = metadata
    if model is not None:
        fields["model"] = model
    cid = repo.conversation_of_message(db, message_id)
    if cid is None:
        raise NotFoundError(f"no message {message_id!r}")
    if not fields:
        return
    repo.update_message(db, message_id, **fields)
    if status is not None:  # a reply finishing is activity; streaming checkpoints are not
        repo.touch(db, cid, now(), only_later=False)


def get_message(db: Database, message_id: str) -> Message:
    found = repo.get_message(db, message_id)
    if found is None:
        raise NotFoundError(f"no message {message_id!r}")
    return found


def messages(db: Database, conversation_id: str, *, superseded: bool = False) -> list[Message]:
    """Every message of the conversation, oldest first (replaced ones only on request)."""
    return repo.messages_of(db, resolve_id(db, conversation_id), superseded=superseded)


def last_exchange(db: Database, conversation_id: str) -> tuple[Message, list[Message]]:
    """The conversation's last message from the person and everything after it (its reply,
    a failed or stopped one included): what regenerating or editing replaces."""
    shown = messages(db, conversation_id)
    for index in range(len(shown) - 1, -1, -1):
        if shown[index].role == "user":
            return shown[index], shown[index + 1 :]
    raise NotFoundError("this conversation has no message to answer again")


def supersede(db: Database, message_ids: list[str]) -> None:
    """Keep these messages but take them out of the conversation (see ``repo.supersede``)."""
    repo.supersede(db, message_ids)


def recent_messages(db: Database, conversation_id: str, limit: int = 12) -> list[Message]:
    """The last ``limit`` user and assistant messages fit for the briefing, oldest first.

    Only finished ones count (complete, interrupted, blocked): a message still streaming, or
    one that failed, is not history the model should see.
    """
    if limit <= 0:
        return []
    return repo.recent_messages(db, full_id(db, conversation_id), HISTORY_STATUSES, limit)


def count_messages(db: Database, conversation_id: str) -> int:
    return repo.count_messages(db, full_id(db, conversation_id))
