"""Beliefs as the faces see them: one belief, its checked evidence, its links, its history.

A shape declared once: the CLI's ``--json``, the HTTP routes, the remote session's decoding
and the OpenAPI document all come from these dataclasses, through ``engine.wire``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: A belief's state. ``active``: held; ``contested``: evidence on both sides; ``retired``:
#: superseded (its successor linked); ``accepted`` / ``rejected``: the person decided.
STATUSES = ("active", "contested", "retired", "accepted", "rejected")
#: ``stated``: written by the person in beliefs.jsonl; ``derived``: proposed by ``sadie reflect``;
#: ``records``: a figure computed from the records, no model (``reflect.figures``).
ORIGINS = ("stated", "derived", "records")
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


@dataclass(frozen=True)
class Belief:
    """One belief about the person."""

    id: str
    statement: str
    status: str
    origin: str
    kind: str | None
    confidence: float
    evidence: int  # checked quotes, a stated belief's listed files, or a figure's records
    created_at: str | None = None  # ISO 8601
    updated_at: str | None = None


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


@dataclass(frozen=True)
class Link:
    """Another belief or a record this one is tied to: ``contradicts``, ``replaced_by`` (it
    was retired for that one), ``supersedes``, or ``rests_on`` (a figure's records)."""

    kind: str
    target_id: str
    target_kind: str  # belief | observation | episode
    text: str
    quote: str | None = None


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


@dataclass(frozen=True)
class BeliefDetail:
    """A belief with everything behind it (``sadie beliefs show``)."""

    belief: Belief
    evidence: tuple[Evidence, ...]
    links: tuple[Link, ...]
    changes: tuple[Change, ...]
