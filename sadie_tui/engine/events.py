"""The typed events a chat turn yields, in order, and their JSON form for ``--ndjson``.

Order: ``Meta`` → ``EmotionEvent`` → ``ContextBudget`` → ``Waiting``* → ``Thinking``* → ``Token``*
→ ``Checking``? → ``CitationsEvent`` → ``Replace``? → ``Done``; or ``ErrorEvent`` in place of
the tail.
``Status`` may appear anywhere before the first token (e.g. the embedder still loading).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


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

    @property
    def label(self) -> str:
        if self.origin == "sadie":
            return "found by sadie"
        return "reading between the lines" if self.support == "inference" else self.support

    def as_json(self) -> dict[str, Any]:
        """The one stored and printed shape (messages, NDJSON, ``--ask --json``, exports)."""
        return {**asdict(self), "unbacked": list(self.unbacked), "label": self.label}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CitationView:
        """A citation as stored on a message (or an imported file) back as a view."""
        return cls(
            episode_id=str(data.get("episode_id") or data.get("episode") or ""),
            quote=str(data.get("quote") or ""),
            support=str(data.get("support") or "paraphrase"),
            claimed=str(data.get("claimed") or data.get("support") or ""),
            title=str(data.get("title") or ""),
            date=str(data.get("date") or ""),
            origin=str(data.get("origin") or "model"),
            backs=str(data.get("backs") or ""),
            unbacked=tuple(str(d) for d in data.get("unbacked") or () if isinstance(d, str)),
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
    type: str = field(default="meta", init=False)


@dataclass(frozen=True)
class Status:
    value: str
    type: str = field(default="status", init=False)


@dataclass(frozen=True)
class EmotionEvent:
    value: str
    type: str = field(default="emotion", init=False)


@dataclass(frozen=True)
class ContextBudget:
    """What went into the briefing: the context budget, shown so nothing is forgotten silently."""

    chunks: int
    messages: int
    messages_dropped: int
    chips: int
    retrieval_ms: float
    vector: bool  # False while the embedding model is still loading (keyword + graph only)
    type: str = field(default="context", init=False)


@dataclass(frozen=True)
class Thinking:
    elapsed: float
    type: str = field(default="thinking", init=False)


@dataclass(frozen=True)
class Token:
    value: str
    type: str = field(default="token", init=False)


@dataclass(frozen=True)
class Checking:
    """The reply's text is complete and its sources are being checked (the citation pass)."""

    value: str = "checking sources…"
    elapsed: float = 0.0  # seconds since the check began (sent again every second)
    type: str = field(default="checking", init=False)


@dataclass(frozen=True)
class Waiting:
    """No piece of the reply yet: the model is still reading the briefing."""

    elapsed: float
    type: str = field(default="waiting", init=False)


@dataclass(frozen=True)
class CitationsEvent:
    """The validated citations, and how the reply's grounding went.

    ``tail``: what the model's own citations tail was — ``ok`` (it gave citations that
    survived), ``empty`` (it cited nothing), ``unusable`` (none survived: unknown ids,
    placeholders, broken JSON) or ``missing`` (no tail: the model ignored the format).
    ``repaired``: the citations came from the citation pass. ``found``: sentences sadie
    matched to excerpts itself when the model gave none (never the model's citations).
    ``unsupported``: details of the reply found in no source (``reply.unsupported.Span.as_json``).
    """

    value: tuple[CitationView, ...]
    unsupported: tuple[dict[str, Any], ...] = ()
    repaired: bool = False
    tail: str = "ok"
    found: tuple[CitationView, ...] = ()
    note: str = ""
    type: str = field(default="citations", init=False)


@dataclass(frozen=True)
class Replace:
    value: str
    reason: str = ""
    type: str = field(default="replace", init=False)

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
    type: str = field(default="done", init=False)


@dataclass(frozen=True)
class ErrorEvent:
    message: str
    code: str = "error"
    fix: str | None = None
    message_id: str | None = None
    type: str = field(default="error", init=False)


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


def to_json(event: Event) -> dict[str, Any]:
    """The ``--ndjson`` shape: ``{"type": …, …}``; list-valued events keep ``value``."""
    data = asdict(event)
    kind = data.pop("type")
    if isinstance(event, CitationsEvent):
        data["value"] = [c.as_json() for c in event.value]
        data["found"] = [c.as_json() for c in event.found]
        data["unsupported"] = list(event.unsupported)
    return {"type": kind, **data}


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


def from_json(data: dict[str, Any]) -> Event:
    """An event back from its ``--ndjson`` shape (``to_json``'s inverse; unknown keys are
    dropped). Raises ``ValueError`` for an unknown type."""
    body = dict(data)
    kind = str(body.pop("type", ""))
    cls = _BY_TYPE.get(kind)
    if cls is None:
        raise ValueError(f"unknown event type {kind!r}")
    known = {f.name for f in fields(cls) if f.init}
    body = {k: v for k, v in body.items() if k in known}
    if cls is Meta:
        body["replaced"] = tuple(str(x) for x in body.get("replaced") or ())
    if cls is CitationsEvent:
        body["value"] = tuple(CitationView.from_json(c) for c in body.get("value") or ())
        body["found"] = tuple(CitationView.from_json(c) for c in body.get("found") or ())
        body["unsupported"] = tuple(body.get("unsupported") or ())
    event: Event = cls(**body)
    return event
