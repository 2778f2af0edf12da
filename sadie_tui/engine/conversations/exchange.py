"""A conversation carried out of sadie and back: Markdown or JSON export, JSON import.

The JSON export (``format: sadie-conversation``, ``version: 1``) holds the conversation, its
messages and chips; importing it makes a new conversation with new ids.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from ..errors import SadieError
from ..events import CitationView
from ..store import chips as chip_repo
from ..store import conversations as repo
from ..store.conversations import Conversation, Message, iso
from ..store.db import Database
from ..store.ids import now
from ..titles import make_title
from .lifecycle import get_conversation
from .message_log import ROLES, STATUSES, messages

EXPORT_FORMAT = "sadie-conversation"
EXPORT_VERSION = 1


def export(db: Database, conversation_id: str, fmt: str) -> str:
    """The conversation as Markdown (``md``) or JSON (``json``, which ``import_json`` reads)."""
    fmt = (fmt or "").lower().lstrip(".")
    if fmt in ("markdown",):
        fmt = "md"
    if fmt not in ("md", "json"):
        raise SadieError(f"unknown export format {fmt!r} (md or json)")
    conversation = get_conversation(db, conversation_id)
    items = messages(db, conversation.id)
    chips = [
        (c.kind, c.ref_id, c.label, c.snippet, c.created_at)
        for c in chip_repo.chips_of(db, conversation.id)
    ]
    if fmt == "json":
        data = {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "conversation": conversation.to_json(),
            "messages": [m.to_json() for m in items],
            "chips": [
                {"kind": k, "ref_id": r, "label": label, "snippet": s, "created_at": iso(t)}
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
    view = CitationView.from_json(citation)
    title = view.title or f"episode {view.episode_id[:8]}"
    source = f"{title} ({view.date})" if view.date else title
    label = "found by sadie" if view.origin == "sadie" else support_label(citation.get("support"))
    quote = " ".join(view.quote.split())
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
    cid = str(uuid.uuid4())
    stamp = now()
    with db.transaction():
        repo.insert_conversation(
            db,
            cid,
            title=make_title(str(head.get("title") or ""), limit=120),
            summary=str(head.get("summary") or ""),
            emotion=head.get("emotion"),
            persona=head.get("persona"),
            pinned=bool(head.get("pinned")),
            created_at=_parse_time(head.get("created_at")) or stamp,
            updated_at=stamp,
        )
        for item in items:
            if not isinstance(item, dict):
                continue
            citations = item.get("citations")
            metadata = item.get("metadata")
            repo.insert_message(
                db,
                str(uuid.uuid4()),
                cid,
                role=str(item["role"]) if item.get("role") in ROLES else "user",
                content=str(item.get("content") or ""),
                status=str(item["status"]) if item.get("status") in STATUSES else "complete",
                emotion=item.get("emotion"),
                citations=citations if isinstance(citations, list) else [],
                model=item.get("model"),
                latency_ms=item.get("latency_ms"),
                metadata=metadata if isinstance(metadata, dict) else {},
                created_at=_parse_time(item.get("created_at")) or now(),
            )
        for chip in data.get("chips") or []:
            if not isinstance(chip, dict) or not chip.get("kind") or not chip.get("ref_id"):
                continue
            chip_repo.insert_chip(
                db,
                str(uuid.uuid4()),
                cid,
                kind=str(chip["kind"]),
                ref_id=str(chip["ref_id"]),
                label=str(chip.get("label") or chip["ref_id"]),
                snippet=chip.get("snippet"),
                created_at=now(),
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
