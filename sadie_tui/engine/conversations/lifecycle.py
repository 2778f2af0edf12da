"""Conversations as the faces handle them: created, found by id or prefix, listed, renamed,
pinned, archived, given sadie's state, forgotten.

``updated_at`` is the time of the last activity (a message added or changed); renaming,
pinning or archiving do not move a conversation in the list.
"""

from __future__ import annotations

import uuid

from ..errors import NotFoundError, SadieError
from ..store import conversations as repo
from ..store.conversations import resolve_id
from ..store.db import Database
from ..store.ids import now
from ..titles import make_title

Conversation = repo.Conversation


def full_id(db: Database, conversation_id: str) -> str:
    """A full id as given (no query: the chat's hot path), else the prefix resolved."""
    try:
        return (
            str(uuid.UUID(conversation_id))
            if len(conversation_id) == 36
            else resolve_id(db, conversation_id)
        )
    except ValueError:
        return resolve_id(db, conversation_id)


def create_conversation(db: Database, title: str, *, persona: str | None = None) -> Conversation:
    cid = str(uuid.uuid4())
    stamp = now()
    repo.insert_conversation(
        db, cid, title=make_title(title), persona=persona, created_at=stamp, updated_at=stamp
    )
    return get_conversation(db, cid)


def get_conversation(db: Database, conversation_id: str) -> Conversation:
    found = repo.get_conversation(db, resolve_id(db, conversation_id))
    if found is None:  # deleted between the two statements
        raise NotFoundError(f"no conversation {conversation_id!r}")
    return found


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
    needle = (search or "").strip().lower()
    return repo.list_conversations(db, archived=archived, needle=needle, limit=limit)


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
    fields: repo.ConversationFields = {}
    if emotion is not None:
        fields["emotion"] = emotion
    if summary is not None:
        fields["summary"] = summary
    if title is not None:
        fields["title"] = make_title(title)
    if persona is not None:
        fields["persona"] = persona
    cid = resolve_id(db, conversation_id)  # a clear error for a wrong id, even with no fields
    repo.update_conversation(db, cid, **fields)


def pin(db: Database, conversation_id: str, pinned: bool = True) -> Conversation:
    """Pin (or unpin) the conversation; it as it is now."""
    cid = resolve_id(db, conversation_id)
    repo.update_conversation(db, cid, pinned=bool(pinned))
    return get_conversation(db, cid)


def archive(db: Database, conversation_id: str, archived: bool = True) -> Conversation:
    """Archive (or bring back) the conversation; it as it is now."""
    cid = resolve_id(db, conversation_id)
    repo.update_conversation(db, cid, archived_at=now() if archived else None)
    return get_conversation(db, cid)


def rename(db: Database, conversation_id: str, title: str) -> Conversation:
    """Retitle the conversation; it as it is now."""
    if not (title or "").strip():
        raise SadieError("a conversation title cannot be empty")
    cid = resolve_id(db, conversation_id)
    repo.update_conversation(db, cid, title=make_title(title, limit=120))
    return get_conversation(db, cid)


def forget(db: Database, conversation_id: str) -> Conversation:
    """Delete the conversation with everything of it: messages, chips, policy events, and the
    telemetry turns (and their retrievals) that hold the person's words; it as it was."""
    found = get_conversation(db, conversation_id)
    repo.delete_conversation(db, found.id)
    return found
