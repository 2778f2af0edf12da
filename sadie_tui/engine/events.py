"""The typed events a chat turn yields, in order, and their JSON form for ``--ndjson``.

Each event is a frozen dataclass whose ``type`` is its tag; ``to_json`` and ``from_json`` are
derived from the fields (``wire``), so a new field is on the wire, in the OpenAPI document and
read back by a remote session without another edit.

Order: ``Meta`` → ``EmotionEvent`` → ``ContextBudget`` → ``Waiting``* → ``Thinking``* → ``Token``*
→ ``Status(WRITING_SOURCES)``? → ``Checking``? → ``CitationsEvent`` → ``Replace``? → ``Done``;
or ``ErrorEvent`` in place of the tail.
``Status`` may appear anywhere before the first token (e.g. the embedder still loading). After
the tokens it comes at two points only: once with ``WRITING_SOURCES`` when the model's
citations marker is seen (the prose is complete; no ``Token`` follows it), and before
``CitationsEvent`` when a policy was skipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Annotated, Literal

from pydantic import Field, computed_field

from .jsonvalue import JSONObject
from .wire import dump, load


@dataclass(frozen=True)
class CitationView:
    """A validated citation, with what a screen needs to show it."""

    episode_id: str
    quote: str
    support: str  # verbatim | paraphrase | inference
    claimed: str
    title: str = ""
    date: str = ""
    origin: str = "model"  # model (its tail or the citation pass) | sadie (matched mechanically)
    backs: str = ""  # the sentence of the reply this citation supports
    unbacked: tuple[str, ...] = ()  # details of that sentence the cited note does not hold
    # Why the quote does not establish that sentence (the claim check, ``reply.claims``): it
    # is really there, but says something else ("this note is from June, not in March").
    doubt: str = ""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def label(self) -> str:
        """What a screen calls the support: ``found by sadie``, ``reading between the lines``,
        or the support itself (printed with the citation, never read back)."""
        if self.origin == "sadie":
            return "found by sadie"
        return "reading between the lines" if self.support == "inference" else self.support

    def as_json(self) -> JSONObject:
        """The one stored and printed shape (messages, NDJSON, ``--ask --json``, exports)."""
        data: JSONObject = dump(self)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> CitationView:
        """A citation as stored on a message (or an imported file) back as a view. Forgiving
        where the wire's ``load`` is strict: rows older than a field lack it, and a
        hand-edited export may say ``episode`` for ``episode_id``."""
        unbacked = data.get("unbacked")
        return cls(
            episode_id=str(data.get("episode_id") or data.get("episode") or ""),
            quote=str(data.get("quote") or ""),
            support=str(data.get("support") or "paraphrase"),
            claimed=str(data.get("claimed") or data.get("support") or ""),
            title=str(data.get("title") or ""),
            date=str(data.get("date") or ""),
            origin=str(data.get("origin") or "model"),
            backs=str(data.get("backs") or ""),
            unbacked=tuple(d for d in unbacked if isinstance(d, str))
            if isinstance(unbacked, (list, tuple))
            else (),
            doubt=str(data.get("doubt") or ""),
        )


@dataclass(frozen=True)
class Meta:
    conversation_id: str
    model: str
    persona: str
    offline: bool
    message_id: str
    user_message_id: str
    title: str
    replaced: tuple[str, ...] = ()  # messages this turn replaces (a regenerate or an edit)
    type: Literal["meta"] = field(default="meta", init=False)


#: The ``Status`` a chat turn sends when the model's prose is complete and it is writing its
#: citations: a screen says so instead of "replying…", and a stop keeps the reply.
WRITING_SOURCES = "writing its sources…"


@dataclass(frozen=True)
class Status:
    """A notice about the turn (see the module docstring for where it may come)."""

    value: str
    type: Literal["status"] = field(default="status", init=False)

    @property
    def writing_sources(self) -> bool:
        """The prose is complete and the model is writing its citations."""
        return self.value == WRITING_SOURCES


@dataclass(frozen=True)
class EmotionEvent:
    value: str
    type: Literal["emotion"] = field(default="emotion", init=False)


@dataclass(frozen=True)
class RecordOffer:
    """A connector record (a calendar event, a workout, a purchase…) that strongly matches
    the message while the persona leaves records out (``records_offer``): offered, never
    briefed, until the person attaches it as a ``record`` chip."""

    id: str
    source: str
    date: str  # YYYY-MM-DD
    text: str

    @property
    def line(self) -> str:
        """``2026-03-02 calendar · Calendar event: call with the Aurora CTO…``: one line for a
        notice, the record's first line cut to ``OFFER_CHARS``."""
        first = " ".join(self.text.strip().split("\n", 1)[0].split())
        if len(first) > OFFER_CHARS:
            first = first[: OFFER_CHARS - 1].rstrip() + "…"
        return f"{self.date} {self.source} · {first}"


#: The most characters of a record's text an offer's one line shows.
OFFER_CHARS = 80


@dataclass(frozen=True)
class ContextBudget:
    """What went into the briefing: the context budget, shown so nothing is forgotten silently."""

    chunks: int
    messages: int
    messages_dropped: int
    chips: int
    retrieval_ms: float
    vector: bool  # False while the embedding model is still loading (keyword + graph only)
    # The chips sadie attached itself this turn (the wiki page of someone a "who is"
    # message names), by label: shown and removable like the person's own.
    added: tuple[str, ...] = ()
    # Records that strongly match the message but that the persona leaves out: not in the
    # briefing; a face offers each as a chip the person attaches with one key.
    offered: tuple[RecordOffer, ...] = ()
    type: Literal["context"] = field(default="context", init=False)


@dataclass(frozen=True)
class Thinking:
    elapsed: float
    type: Literal["thinking"] = field(default="thinking", init=False)


@dataclass(frozen=True)
class Token:
    value: str
    type: Literal["token"] = field(default="token", init=False)


@dataclass(frozen=True)
class Checking:
    """The reply's text is complete and its sources are being checked (the citation pass)."""

    value: str = "checking sources…"
    elapsed: float = 0.0  # seconds since the check began (sent again every second)
    type: Literal["checking"] = field(default="checking", init=False)


@dataclass(frozen=True)
class Waiting:
    """No piece of the reply yet: the model is still reading the briefing."""

    elapsed: float
    type: Literal["waiting"] = field(default="waiting", init=False)


@dataclass(frozen=True)
class CitationsEvent:
    """The validated citations, and how the reply's grounding went.

    ``tail``: what the model's own citations tail was — ``ok`` (it gave citations that
    survived), ``empty`` (it cited nothing), ``unusable`` (none survived: unknown ids,
    placeholders, broken JSON), ``missing`` (no tail: the model ignored the format) or
    ``unasked`` (no tail was asked for: the model never writes one, ``reasoners.rates``).
    ``repaired``: the citations came from the citation pass. ``found``: sentences sadie
    matched to excerpts itself when the model gave none (never the model's citations).
    ``unsupported``: details of the reply found in no source (``reply.unsupported.Span.as_json``).
    """

    value: tuple[CitationView, ...]
    unsupported: tuple[JSONObject, ...] = ()
    repaired: bool = False
    tail: str = "ok"
    found: tuple[CitationView, ...] = ()
    note: str = ""
    type: Literal["citations"] = field(default="citations", init=False)


def not_found_line(texts: Sequence[str], *, underlined: bool = False) -> str:
    """ "2 details not found in your notes: 3:15, Tomás": every face's one wording for a
    reply's details no source holds (``underlined`` where the text shows them so)."""
    noun = "detail" if len(texts) == 1 else "details"
    how = " (underlined)" if underlined else ""
    return f"{len(texts)} {noun} not found in your notes{how}: " + ", ".join(dict.fromkeys(texts))


@dataclass(frozen=True)
class Replace:
    value: str
    reason: str = ""
    type: Literal["replace"] = field(default="replace", init=False)

    @property
    def by_policy(self) -> bool:
        """A policy rewrote or blocked the reply: what streamed before is withheld text."""
        return self.reason.startswith("policy")


@dataclass(frozen=True)
class Done:
    message_id: str
    latency_ms: float
    chunks_considered: int
    status: str = "complete"
    tokens: int = 0
    tokens_per_s: float = 0.0
    emotion: str = ""
    cut: str = ""  # why the reply was cut short: repetition | length | tokens
    type: Literal["done"] = field(default="done", init=False)


@dataclass(frozen=True)
class ErrorEvent:
    message: str
    code: str = "error"
    fix: str | None = None
    message_id: str | None = None
    type: Literal["error"] = field(default="error", init=False)


Event = (
    Meta
    | Status
    | EmotionEvent
    | ContextBudget
    | Thinking
    | Token
    | Checking
    | Waiting
    | CitationsEvent
    | Replace
    | Done
    | ErrorEvent
)


#: The event union as read from the wire: its ``type`` says which event it is.
WireEvent = Annotated[Event, Field(discriminator="type")]


def to_json(event: Event) -> JSONObject:
    """The ``--ndjson`` shape: ``{"type": …, …}``, then the fields in declaration order (the
    citations' derived ``label`` included)."""
    data: JSONObject = dump(event)
    return {"type": data.pop("type"), **data}


_BY_TYPE: dict[str, type] = {
    f.default: cls  # type: ignore[misc]
    for cls in (
        Meta,
        Status,
        EmotionEvent,
        ContextBudget,
        Thinking,
        Token,
        Checking,
        Waiting,
        CitationsEvent,
        Replace,
        Done,
        ErrorEvent,
    )
    for f in fields(cls)
    if f.name == "type"
}


def from_json(data: Mapping[str, object]) -> Event:
    """An event back from its ``--ndjson`` shape (``to_json``'s inverse; unknown keys are
    dropped). Raises ``ValueError`` for an unknown type, ``wire.ShapeError`` for a field that
    does not fit."""
    kind = str(data.get("type", ""))
    if kind not in _BY_TYPE:
        raise ValueError(f"unknown event type {kind!r}")
    event: Event = load(WireEvent, data)
    return event
