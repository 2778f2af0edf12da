"""Beliefs as the faces see them: one belief, its checked evidence, its links, its history.

A shape declared once: the CLI's ``--json``, the HTTP routes and the remote session's
decoding all go through ``to_json`` / ``from_json`` here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import TypeVar

from ..jsonvalue import JSON, JSONObject

#: A belief's state. ``active``: held; ``contested``: evidence on both sides; ``retired``:
#: superseded (its successor linked); ``accepted`` / ``rejected``: the person decided.
STATUSES = ("active", "contested", "retired", "accepted", "rejected")
#: ``stated``: written by the person in beliefs.jsonl; ``derived``: proposed by ``sadie reflect``.
ORIGINS = ("stated", "derived")
#: What a belief is about (the model picks one).
KINDS = (
    "habit",
    "preference",
    "relationship",
    "fact",
    "value",
    "goal",
    "health",
    "feeling",
    "work",
)

T = TypeVar("T")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds") if value is not None else None


def _decoded(cls: type[T], data: JSON) -> T:
    """``cls`` from its JSON object (unknown keys ignored, missing ones left to defaults)."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    found = data if isinstance(data, dict) else {}
    return cls(**{k: v for k, v in found.items() if k in names})


def _items(value: JSON) -> list[JSON]:
    """A JSON list, or none for anything else (a missing or null key)."""
    return value if isinstance(value, list) else []


@dataclass(frozen=True)
class Belief:
    """One belief about the person."""

    id: str
    statement: str
    status: str
    origin: str
    kind: str | None
    confidence: float
    evidence: int  # supporting evidence: checked quotes, or a stated belief's listed files
    created_at: str | None = None  # ISO 8601
    updated_at: str | None = None

    def to_json(self) -> JSONObject:
        return asdict(self)

    @classmethod
    def from_json(cls, data: JSON) -> Belief:
        return _decoded(cls, data)


@dataclass(frozen=True)
class Evidence:
    """A quote of an episode behind (``supports``) or against (``contradicts``) a belief.

    ``quote`` is always the episode's own words; ``verbatim`` says whether the model quoted
    them word for word (else it paraphrased and sadie stands the note's closest sentence in).
    A stated belief's evidence is the files the person listed: no quote."""

    episode_id: str
    title: str
    date: str
    quote: str = ""
    verbatim: bool = False
    stance: str = "supports"
    run_id: str | None = None

    def to_json(self) -> JSONObject:
        return asdict(self)

    @classmethod
    def from_json(cls, data: JSON) -> Evidence:
        return _decoded(cls, data)


@dataclass(frozen=True)
class Link:
    """Another belief or a record this one is tied to: ``contradicts``, ``replaced_by`` (it
    was retired for that one) or ``supersedes``."""

    kind: str
    target_id: str
    target_kind: str  # belief | observation
    text: str
    quote: str | None = None

    def to_json(self) -> JSONObject:
        return asdict(self)

    @classmethod
    def from_json(cls, data: JSON) -> Link:
        return _decoded(cls, data)


@dataclass(frozen=True)
class Change:
    """One line of a belief's history: what changed, when, by which run and model, and why."""

    at: str
    action: str
    reason: str | None = None
    run_id: str | None = None
    model: str | None = None
    before: str | None = None
    after: str | None = None

    def to_json(self) -> JSONObject:
        return asdict(self)

    @classmethod
    def from_json(cls, data: JSON) -> Change:
        return _decoded(cls, data)


@dataclass(frozen=True)
class BeliefDetail:
    """A belief with everything behind it (``sadie beliefs show``)."""

    belief: Belief
    evidence: tuple[Evidence, ...]
    links: tuple[Link, ...]
    changes: tuple[Change, ...]

    def to_json(self) -> JSONObject:
        return {
            **self.belief.to_json(),
            "evidence_items": [e.to_json() for e in self.evidence],
            "links": [link.to_json() for link in self.links],
            "changes": [c.to_json() for c in self.changes],
        }

    @classmethod
    def from_json(cls, data: JSON) -> BeliefDetail:
        found = data if isinstance(data, dict) else {}
        return cls(
            Belief.from_json(found),
            tuple(Evidence.from_json(e) for e in _items(found.get("evidence_items"))),
            tuple(Link.from_json(link) for link in _items(found.get("links"))),
            tuple(Change.from_json(c) for c in _items(found.get("changes"))),
        )
