"""What every reader makes, and the guarded reading they share.

The shapes of a read (``RawEpisode``, ``Derived``, ``Skipped``, ``ReadResult``), the two ways a
file is turned away (``Unreadable``: a failure with its reason; ``LeftOut``: not a memory, on
purpose), and text read within bounds and cleaned of controls. ``readers`` (notes, JSONL, vault
markup) and the record readers (``calendar``, ``workouts``, ``dayone``, ``csvmap``) build on it,
so none of them imports another.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TypedDict

from ..jsonvalue import JSON, JSONObject
from .markup import page_key

MAX_BYTES = 10 * 1024 * 1024
#: How deep a JSON value may nest (the hostile-input bound shared by JSONL and exports).
MAX_JSON_DEPTH = 32
NAMESPACE = uuid.UUID("6f1d0c52-3b0a-4c55-9d56-5ad1e0000001")


# Terminal escape sequences first (CSI, OSC, other ESC pairs, 8-bit CSI), then stray controls:
# the other way round a bare ESC is removed and "[31m" is left in the text.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON may escape half of a pair: not storable


def episode_id(source_key: str) -> str:
    """Stable id: the same file (or JSONL line) always gets the same episode id."""
    return str(uuid.uuid5(NAMESPACE, source_key))


@dataclass
class RawEpisode:
    source_key: str
    source: str
    kind: str
    title: str
    occurred_at: datetime
    text: str
    salience: float = 0.5
    tags: list[str] = field(default_factory=list)
    #: The page this note is, for links (its file stem), and what it says about itself.
    page_name: str = ""
    page_kind: str = ""  # person, place, project, organisation, or "" (a plain note)
    aliases: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)  # pages it links to, as written
    embeds: list[str] = field(default_factory=list)  # images and files it embeds
    properties: dict[str, str] = field(default_factory=dict)  # Logseq page properties
    #: What a journal app records beside the text (a Day One entry's location, weather).
    details: dict[str, dict[str, str | int | float]] = field(default_factory=dict)
    #: The id it is stored under when that is not its source key's (a renamed note's).
    stored_id: str = ""

    @property
    def id(self) -> str:
        return self.stored_id or episode_id(self.source_key)

    @property
    def page(self) -> str:
        """The key ``[[links]]`` find this note by: its file stem, case-folded."""
        return page_key(self.page_name)

    @property
    def metadata(self) -> JSONObject:
        """What the note says besides its text (links, embeds, aliases, page kind, Logseq
        properties); only the parts it has."""
        parts: JSONObject = {
            "page_name": self.page_name if self.page_kind else "",
            "links": [*self.links],
            "embeds": [*self.embeds],
            "aliases": [*self.aliases],
            "page_kind": self.page_kind,
            "properties": {**self.properties},
            **{name: {**values} for name, values in self.details.items()},
        }
        return {k: v for k, v in parts.items() if v}

    @property
    def content_hash(self) -> str:
        fields: list[JSON] = [
            self.kind,
            self.title,
            self.occurred_at.isoformat(),
            self.salience,
            [*self.tags],
            self.text,
        ]
        if self.metadata:  # a note without vault markup keeps the hash it always had
            fields.append(self.metadata)
        payload = json.dumps(fields, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class Derived:
    """A derived record: belief, observation, wiki, brief, today or soul."""

    table: str
    source_key: str
    fields: DerivedFields


@dataclass(frozen=True)
class Quote:
    """A belief's quote of one episode (``belief_quotes``), found there word for word."""

    episode_id: str
    quote: str
    stance: str  # supports | contradicts
    verbatim: bool = True  # a derived belief's: whether the model wrote it word for word


class DerivedFields(TypedDict, total=False):
    """A derived record's columns: a belief's (statement, status, confidence, evidence,
    quotes), an observation's (source, observed_at, text, and the figure it states: measure,
    value and the inclusive dates it covers, ``ingest.measures``), a wiki entry's, brief's or
    Today card's (title, text, and kind or occurred_at), the soul's (text)."""

    statement: str
    status: str
    confidence: float
    evidence: list[str]
    quotes: list[Quote]
    source: str
    observed_at: datetime
    text: str
    title: str
    kind: str
    occurred_at: datetime
    measure: str
    value: float
    period: tuple[date, date]


@dataclass
class Skipped:
    name: str
    reason: str

    def __post_init__(self) -> None:
        self.name = shown_name(self.name)


def shown_name(name: str) -> str:
    """A file name as it can be stored, encoded and shown: its bytes that are not UTF-8 (which
    Python carries as lone surrogates) written as escapes, ``notes/bad\\xff.md``."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass
class ReadResult:
    episodes: list[RawEpisode] = field(default_factory=list)
    derived: list[Derived] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    #: Left out on purpose, not failures: a vault's own folders, templates, attachments,
    #: what ``.sadieignore`` names.
    ignored: list[Skipped] = field(default_factory=list)
    files: int = 0


class Unreadable(Exception):
    """A file that cannot be read; the message is the reason shown to the person."""


class LeftOut(Exception):
    """A file that is read but is not a memory (a template); the message says why."""


def clean_text(text: str) -> str:
    """Newlines normalised; control characters and terminal escapes removed (never shown raw)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    return _CONTROL.sub("", text)


def read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise Unreadable(_os_reason(exc)) from exc
    if size > MAX_BYTES:
        raise Unreadable(f"too large ({size / 1e6:.1f} MB; the limit is {MAX_BYTES // 2**20} MB)")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Unreadable(_os_reason(exc)) from exc
    if b"\x00" in data[:8192]:
        raise Unreadable("binary file, not text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from exc
    return clean_text(text)


def _os_reason(exc: OSError) -> str:
    return exc.strerror.lower() if exc.strerror else str(exc)


def _storable(value: JSON, depth: int = 0) -> JSON:
    """``value`` from ``json.loads`` with every string storable (half a surrogate pair becomes
    U+FFFD); ``ValueError`` when it nests deeper than ``MAX_JSON_DEPTH``."""
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep")
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_SURROGATE.sub("\ufffd", k): _storable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_storable(v, depth + 1) for v in value]
    return value
