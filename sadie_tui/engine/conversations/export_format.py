"""The ``sadie-conversation`` JSON file, read and checked before anything is imported.

``read_export`` parses the text and checks every field the import stores or a screen later
reads, and returns plain records. Any problem — bytes that are not UTF-8, text that is not
JSON or is nested past the parser's depth, a lone surrogate, a field of the wrong type, an
unknown role or chip kind, a graph chip whose id is not a number — is one ``UsageError``
line, ``not a sadie conversation export: <where>: <what>`` (exit 2), raised before the
database is touched, so a malformed file stores nothing. Pure: no I/O.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import NoReturn

from ..errors import UsageError
from ..jsonvalue import JSON, JSONObject
from .message_log import ROLES, STATUSES

EXPORT_FORMAT = "sadie-conversation"
EXPORT_VERSION = 1
# The largest export an import reads, the same from a file and over the holder's API (a
# note's limit: a conversation past it is thousands of messages).
MAX_EXPORT_BYTES = 10 * 1024 * 1024

_CITATION_TEXT = ("episode_id", "episode", "quote", "support", "claimed", "title", "date", "origin")
# Metadata a screen reads back when it replays a conversation: lists of objects.
_METADATA_LISTS = ("found_by_sadie", "unsupported")


@dataclass(frozen=True)
class ImportedMessage:
    role: str
    content: str
    status: str
    emotion: str | None
    citations: list[JSONObject]
    model: str | None
    latency_ms: float | None
    metadata: JSONObject
    created_at: datetime | None


@dataclass(frozen=True)
class ImportedChip:
    kind: str
    ref_id: str
    label: str
    snippet: str | None


@dataclass(frozen=True)
class ImportedConversation:
    title: str
    summary: str
    emotion: str | None
    persona: str | None
    pinned: bool
    created_at: datetime | None
    messages: list[ImportedMessage]
    chips: list[ImportedChip]


def _bad(where: str, what: str) -> UsageError:
    place = f"{where}: " if where else ""
    return UsageError(f"not a sadie conversation export: {place}{what}", title="Import")


def decode_export(data: bytes, source: str = "the file") -> str:
    """The text of an export file's bytes (UTF-8, a byte-order mark allowed), at most
    ``MAX_EXPORT_BYTES`` of them."""
    if len(data) > MAX_EXPORT_BYTES:
        raise too_large(len(data))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _bad(source, f"not UTF-8 text (byte {exc.start})") from None


def too_large(size: int) -> UsageError:
    return UsageError(
        f"the export is larger than {MAX_EXPORT_BYTES // 2**20} MB ({size / 2**20:.1f} MB):"
        " not imported",
        title="Import",
    )


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def read_export(text: str) -> ImportedConversation:
    """The conversation in an export's text, every field checked."""
    size = len(text.encode("utf-8", "surrogatepass"))  # the text may come from anywhere
    if size > MAX_EXPORT_BYTES:
        raise too_large(size)
    try:
        data: JSON = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise _bad("", "nested too deeply") from None
    except ValueError as exc:
        raise _bad("", f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise _bad("", f"the file holds {_what(data)}, not an object")
    _check_text(data)
    if "format" in data and data["format"] != EXPORT_FORMAT:
        raise _bad("format", f"is {data['format']!r}, not {EXPORT_FORMAT!r}")
    version = data.get("version", EXPORT_VERSION)
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version:
        raise _bad("version", f"must be a whole number, not {_what(version)}")
    if version > EXPORT_VERSION:
        raise _bad("version", f"{version} is newer than this sadie reads ({EXPORT_VERSION})")
    head = data.get("conversation")
    if not isinstance(head, dict):
        raise _bad("conversation", f"must be an object, not {_what(head)}")
    return ImportedConversation(
        title=_text(head, "title", "conversation") or "",
        summary=_text(head, "summary", "conversation") or "",
        emotion=_text(head, "emotion", "conversation"),
        persona=_text(head, "persona", "conversation"),
        pinned=_flag(head, "pinned", "conversation"),
        created_at=_time(head, "created_at", "conversation"),
        messages=[_message(item, f"messages[{n}]") for n, item in _items(data, "messages")],
        chips=[_chip(item, f"chips[{n}]") for n, item in _items(data, "chips")],
    )


def _check_text(data: JSON) -> None:
    """Every string in the file is text: JSON may escape half a surrogate pair (``"\\ud800"``),
    which the database cannot store. Without recursion: the parser allows deep nesting."""
    todo: list[JSON] = [data]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise _bad("", "a string holds a lone surrogate (such as \\ud800)") from None
        elif isinstance(item, dict):
            todo.extend(part for pair in item.items() for part in pair)
        elif isinstance(item, list):
            todo.extend(item)


def _items(data: JSONObject, key: str) -> list[tuple[int, JSONObject]]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _bad(key, f"must be a list, not {_what(value)}")
    return [(n, _object(item, f"{key}[{n}]")) for n, item in enumerate(value)]


def _object(value: JSON, where: str) -> JSONObject:
    if not isinstance(value, dict):
        raise _bad(where, f"must be an object, not {_what(value)}")
    return value


def _message(item: JSONObject, where: str) -> ImportedMessage:
    role = item.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise _bad(f"{where}.role", f"must be one of {', '.join(ROLES)}, not {_what(role)}")
    status = item.get("status", "complete")
    if not isinstance(status, str) or status not in STATUSES:
        raise _bad(f"{where}.status", f"must be one of {', '.join(STATUSES)}, not {_what(status)}")
    latency = item.get("latency_ms")
    if latency is not None and (
        isinstance(latency, bool)
        or not isinstance(latency, int | float)
        or not math.isfinite(latency)
    ):
        raise _bad(f"{where}.latency_ms", f"must be a number, not {_what(latency)}")
    return ImportedMessage(
        role=role,
        content=_text(item, "content", where) or "",
        # Nothing is still writing a reply that streamed in another memory.
        status="interrupted" if status == "streaming" else status,
        emotion=_text(item, "emotion", where),
        citations=_citations(item.get("citations"), f"{where}.citations"),
        model=_text(item, "model", where),
        latency_ms=None if latency is None else float(latency),
        metadata=_metadata(item.get("metadata"), f"{where}.metadata"),
        created_at=_time(item, "created_at", where),
    )


def _citations(value: JSON, where: str) -> list[JSONObject]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _bad(where, f"must be a list, not {_what(value)}")
    found = [_object(citation, f"{where}[{n}]") for n, citation in enumerate(value)]
    for n, citation in enumerate(found):
        for key in _CITATION_TEXT:
            _text(citation, key, f"{where}[{n}]")
    return found


def _metadata(value: JSON, where: str) -> JSONObject:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _bad(where, f"must be an object, not {_what(value)}")
    for key in _METADATA_LISTS:
        if value.get(key) is not None:
            _citations(value[key], f"{where}.{key}")
    return value


def _chip(item: JSONObject, where: str) -> ImportedChip:
    from .. import chips  # chips resolves conversation ids: imported here, not at the top

    kind = item.get("kind")
    if not isinstance(kind, str) or kind not in chips.KINDS:
        kinds = ", ".join(chips.KINDS)
        raise _bad(f"{where}.kind", f"must be one of {kinds}, not {_what(kind)}")
    ref_id = _text(item, "ref_id", where)
    if not ref_id:
        raise _bad(f"{where}.ref_id", "is missing")
    if kind == "graph_entity" and chips.parse_entity_id(ref_id) is None:
        raise _bad(f"{where}.ref_id", f"must be an entity id (digits), not {ref_id!r}")
    return ImportedChip(
        kind=kind,
        ref_id=ref_id,
        label=_text(item, "label", where) or ref_id,
        snippet=_text(item, "snippet", where),
    )


def _text(item: JSONObject, key: str, where: str) -> str | None:
    value = item.get(key)
    if value is not None and not isinstance(value, str):
        raise _bad(f"{where}.{key}", f"must be text, not {_what(value)}")
    return value


def _flag(item: JSONObject, key: str, where: str) -> bool:
    value = item.get(key)
    if value is not None and not isinstance(value, bool):
        raise _bad(f"{where}.{key}", f"must be true or false, not {_what(value)}")
    return bool(value)


def _time(item: JSONObject, key: str, where: str) -> datetime | None:
    value = _text(item, key, where)
    if not value:
        return None
    try:
        return datetime.fromisoformat(value).replace(tzinfo=None)
    except ValueError:
        raise _bad(f"{where}.{key}", f"is not a date and time: {value[:40]!r}") from None


def _what(value: JSON) -> str:
    """A value as a message names it: its kind, and a short form of it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"text {value[:40]!r}"
    if isinstance(value, int | float):
        return f"the number {value!r}"[:60]
    if isinstance(value, list):
        return "a list"
    return "an object"
