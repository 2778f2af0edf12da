"""A conversation carried out of sadie and back: Markdown or JSON export, JSON import.

The JSON export (``format: sadie-conversation``, ``version: 1``) holds the conversation, its
messages and chips; importing it makes a new conversation with new ids, once
``export_format`` has checked the file. A file may have been edited by hand: its citations
are policed again against this memory, as a reply's are (``_policed``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from ..errors import SadieError
from ..events import CitationView, not_found_line
from ..jsonvalue import JSON, JSONObject
from ..reply.citations import grade
from ..store import chips as chip_repo
from ..store import conversations as repo
from ..store import episodes as episode_repo
from ..store.conversations import Conversation, Message, iso
from ..store.db import Database
from ..store.ids import now
from ..titles import make_title
from .export_format import EXPORT_FORMAT, EXPORT_VERSION, read_export
from .lifecycle import get_conversation
from .message_log import messages


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


def _policed(
    db: Database,
    items: list[JSONObject],
    episodes: dict[str, episode_repo.EpisodeRecord | None],
    *,
    found: bool = False,
) -> list[JSONObject]:
    """Citations from a file, checked against this memory: one whose episode is not here is
    dropped; support (and a label) is graded again against the episode's text, so
    ``verbatim`` stays a guarantee; title and date are the episode's own. ``found``
    (sentences sadie matched in a note): kept only where they are in it word for word."""
    kept: list[JSONObject] = []
    for item in items:
        view = CitationView.from_json(item)
        if view.episode_id not in episodes:
            episodes[view.episode_id] = episode_repo.get_episode(db, view.episode_id)
        episode = episodes[view.episode_id]
        if episode is None:
            continue
        support = grade(view.support, view.quote, [episode.text])
        if found and support != "verbatim":
            continue
        checked: JSONObject = {
            **item,
            "episode_id": episode.id,
            "support": support,
            "title": episode.title,
            "date": episode.date,
        }
        if "label" in item:
            checked["label"] = replace(view, support=support).label
        kept.append(checked)
    return kept


def _policed_metadata(
    db: Database, metadata: JSONObject, episodes: dict[str, episode_repo.EpisodeRecord | None]
) -> JSONObject:
    """The message's metadata with its "found by sadie" sentences policed (``_policed``)."""
    listed = metadata.get("found_by_sadie")
    if not listed or not isinstance(listed, list):
        return metadata
    items = [item for item in listed if isinstance(item, dict)]
    found: list[JSON] = [*_policed(db, items, episodes, found=True)]
    return {**metadata, "found_by_sadie": found}


def _markdown(
    conversation: Conversation, items: list[Message], chips: list[tuple[str, str]]
) -> str:
    lines = [f"# {conversation.title}", ""]
    facts = [f"started {conversation.created_at:%Y-%m-%d %H:%M}"]
    if conversation.emotion:
        facts.append(f"feeling {conversation.emotion}")
    used = personas_used(conversation, items)
    if used:
        facts.append(("persona " if len(used) == 1 else "personas ") + ", ".join(used))
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
        if len(used) > 1 and message.role == "assistant" and _persona_of(message):
            head += f" · as {_persona_of(message)}"
        if message.status != "complete":
            head += f" ({message.status})"
        flagged = flagged_spans(message) if message.role == "assistant" else []
        lines += [head, "", marked(message.content, flagged).rstrip(), ""]
        if flagged:
            lines += [f"⚠ {not_found_line([f.text for f in flagged], underlined=True)}", ""]
        for n, citation in enumerate(message.citations, start=1):
            lines.append(f"{n}. {citation_line(citation)}")
        if message.citations:
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


class Flagged(NamedTuple):
    """One detail of a reply that no note holds: ``content[start:end] == text``."""

    start: int
    end: int
    text: str


def flagged_spans(message: Message) -> list[Flagged]:
    """The reply's details no note holds (``metadata["unsupported"]``), as the app underlines
    them: each span that is still exactly its text's ``content[start:end]``, in order."""
    spans = (message.metadata or {}).get("unsupported")
    fits: list[Flagged] = []
    for span in spans if isinstance(spans, list) else []:
        if not isinstance(span, dict):
            continue
        start, end, text = span.get("start"), span.get("end"), span.get("text")
        if not (isinstance(start, int) and isinstance(end, int) and isinstance(text, str)):
            continue
        if 0 <= start < end <= len(message.content) and message.content[start:end] == text:
            fits.append(Flagged(start, end, text))
    return sorted(fits)


def marked(text: str, spans: Sequence[Flagged]) -> str:
    """``text`` with each flagged span underlined (``<u>…</u>``, which Markdown viewers
    show), as the app shows them; overlapping spans after the first are left as they are."""
    out: list[str] = []
    at = 0
    for span in spans:
        if span.start < at:
            continue
        out += [text[at : span.start], f"<u>{span.text}</u>"]
        at = span.end
    out.append(text[at:])
    return "".join(out)


def _persona_of(message: Message) -> str:
    return str((message.metadata or {}).get("persona") or "")


def personas_used(conversation: Conversation, items: list[Message]) -> list[str]:
    """The personas sadie replied as, in the order first used (each reply records its own);
    the one the conversation started with when no reply says."""
    used: list[str] = []
    for message in items:
        name = _persona_of(message) if message.role == "assistant" else ""
        if name and name not in used:
            used.append(name)
    return used or ([conversation.persona] if conversation.persona else [])


def support_label(support: str | None) -> str:
    return "reading between the lines" if support == "inference" else (support or "")


def citation_line(citation: JSONObject) -> str:
    """One citation as plain text: source, support label, quote."""
    view = CitationView.from_json(citation)
    title = view.title or f"episode {view.episode_id[:8]}"
    source = f"{title} ({view.date})" if view.date else title
    claimed = citation.get("support")
    label = (
        "found by sadie"
        if view.origin == "sadie"
        else support_label(claimed if isinstance(claimed, str) else None)
    )
    quote = " ".join(view.quote.split())
    text = f"{source} — {label}" if label else source
    return f"{text}: “{quote}”" if quote else text


def import_json(db: Database, text: str) -> Conversation:
    """A new conversation (new ids) with the title, state, messages and chips of an export.

    The file is checked whole first (``export_format``): a malformed one is a one-line
    ``UsageError`` and nothing is stored."""
    found = read_export(text)
    episodes: dict[str, episode_repo.EpisodeRecord | None] = {}
    checked = [
        (
            _policed(db, item.citations, episodes),
            _policed_metadata(db, item.metadata, episodes),
        )
        for item in found.messages
    ]
    cid = str(uuid.uuid4())
    stamp = now()
    with db.transaction():
        repo.insert_conversation(
            db,
            cid,
            title=make_title(found.title, limit=120),
            summary=found.summary,
            emotion=found.emotion,
            persona=found.persona,
            pinned=found.pinned,
            created_at=found.created_at or stamp,
            updated_at=stamp,
        )
        for item, (citations, metadata) in zip(found.messages, checked, strict=True):
            repo.insert_message(
                db,
                str(uuid.uuid4()),
                cid,
                role=item.role,
                content=item.content,
                status=item.status,
                emotion=item.emotion,
                citations=citations,
                model=item.model,
                latency_ms=item.latency_ms,
                metadata=metadata,
                created_at=item.created_at or now(),
            )
        for chip in found.chips:
            chip_repo.insert_chip(
                db,
                str(uuid.uuid4()),
                cid,
                kind=chip.kind,
                ref_id=chip.ref_id,
                label=chip.label,
                snippet=chip.snippet,
                created_at=now(),
            )
    return get_conversation(db, cid)
