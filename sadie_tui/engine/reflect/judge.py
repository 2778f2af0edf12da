"""Judging a belief against what might disagree with it: the beliefs, records and notes near
it, and the model's structured verdict on each (same, supports, contradicts, replaces,
unrelated) with the words that decide it.

``items_for`` gathers the candidates mechanically (cosine to the belief); ``ask`` asks the
model and resolves its handles. What a verdict does to the memory is ``reflect.learn``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ModelTimeout
from ..prompt import Briefing
from ..store import reflection as store
from ..store.vectors import vector_literal
from .prompt import (
    VERDICTS,
    Item,
    judge_many_messages,
    judge_many_schema,
    judge_messages,
    judge_schema,
)
from .sameness import SAME

if TYPE_CHECKING:
    from ..jsonvalue import JSON, JSONObject
    from ..reasoners.base import StructuredReasoner
    from ..reasoners.rates import Budget
    from ..store.beliefs import Known
    from ..store.db import Database

# Chosen, not measured: how alike a belief, a record or a note must be to a belief to be
# worth the model's verdict (below SAME, two beliefs are never the same idea, but may still
# disagree: "I sleep about seven hours a night" / "I sleep about five hours": 0.92; "I run
# four times a week" / "Running is the one hour...": 0.49). Each costs one line of a prompt.
RELATED_BELIEF = 0.55
RELATED_RECORD = 0.4
RELATED_NOTE = 0.45
PER_KIND = 2
JUDGE_TOKENS = 220
# Beliefs the model may retire, contest or add to (the person's own, and those they decided
# on, are never changed by sadie).
MUTABLE = ("active", "contested")


@dataclass(frozen=True)
class Verdict:
    item: Item
    verdict: str  # one of prompt.VERDICTS
    quote: str


def near_beliefs(
    known: Known, vector: np.ndarray, *, exclude: set[str], floor: float = RELATED_BELIEF
) -> list[tuple[int, float]]:
    """(row of ``known``, cosine) of the wordings nearest ``vector`` (a unit vector), one row
    per belief, best first, rejected and retired ones left out."""
    if not len(known.ids):
        return []
    scores = known.vectors @ vector
    best: dict[str, tuple[int, float]] = {}
    for row in np.argsort(-scores):
        score = float(scores[row])
        if score < floor:
            break
        belief = known.ids[row]
        if belief in exclude or known.statuses[row] in ("rejected", "retired"):
            continue
        best.setdefault(belief, (int(row), score))
    return sorted(best.values(), key=lambda t: -t[1])


def items_for(
    db: Database,
    known: Known,
    vector: np.ndarray,
    *,
    exclude_beliefs: set[str],
    exclude_episodes: Sequence[str],
    notes: bool = True,
) -> list[Item]:
    """The beliefs, records and (with ``notes``) note excerpts that might agree or disagree
    with a belief whose unit vector is ``vector``, each under a handle."""
    found: list[Item] = []
    for row, score in near_beliefs(known, vector, exclude=exclude_beliefs)[:PER_KIND]:
        found.append(Item("", "belief", known.ids[row], "", "", known.statements[row], score))
    literal = vector_literal(vector)
    for near in store.near_records(db, literal, limit=PER_KIND, floor=RELATED_RECORD):
        found.append(Item("", "record", near.id, near.date, near.title, near.text, near.similarity))
    if notes:
        for near in store.near_notes(
            db, literal, limit=PER_KIND, floor=RELATED_NOTE, exclude=exclude_episodes
        ):
            found.append(
                Item("", "note", near.id, near.date, near.title, near.text, near.similarity)
            )
    return handled(found)


def handled(items: Sequence[Item]) -> list[Item]:
    """``items`` under the handles R1, R2, …"""
    return [
        Item(f"R{n}", i.kind, i.id, i.date, i.title, i.text, i.similarity)
        for n, i in enumerate(items, 1)
    ]


@dataclass(frozen=True)
class Asked:
    verdicts: tuple[Verdict, ...]
    reason: str = ""  # why there are none, when the model could not be read


async def _request(
    reasoner: StructuredReasoner,
    messages: list[dict[str, str]],
    schema: JSONObject,
    budget_for: Callable[[int], Budget],
    max_tokens: int,
) -> str:
    """One judging request: ``budget_for(prompt characters)`` gives its budget; a timeout is
    raised as ``ModelTimeout`` for the caller to turn into its reason."""
    budget = budget_for(sum(len(m["content"]) for m in messages))
    briefing = Briefing(system=messages[0]["content"], messages=messages, excerpts=[], shown={})
    return await reasoner.structured(
        briefing, messages, schema, budget=budget, max_tokens=max_tokens
    )


async def ask(
    reasoner: StructuredReasoner,
    statement: str,
    items: Sequence[Item],
    budget_for: Callable[[int], Budget],
) -> Asked:
    """The model's verdict on each item; ``budget_for(prompt characters)`` gives the request's
    budget (a timeout is the reason, not an exception: the belief stands unjudged)."""
    messages = judge_messages(statement, items)
    schema = judge_schema([i.handle for i in items])
    try:
        text = await _request(reasoner, messages, schema, budget_for, JUDGE_TOKENS)
    except ModelTimeout as exc:
        return Asked((), exc.one_line())
    return Asked(tuple(resolve(text, items)))


async def ask_many(
    reasoner: StructuredReasoner,
    statements: Sequence[str],
    items: Sequence[Item],
    budget_for: Callable[[int], Budget],
) -> tuple[list[list[Verdict]], str]:
    """The model's verdicts for several beliefs against one set of items, in one request: a
    list per belief (in ``statements``' order), and why there are none when it timed out."""
    messages = judge_many_messages(statements, items)
    schema = judge_many_schema(len(statements), [i.handle for i in items])
    tokens = JUDGE_TOKENS * len(statements)
    try:
        text = await _request(reasoner, messages, schema, budget_for, tokens)
    except ModelTimeout as exc:
        return [[] for _ in statements], exc.one_line()
    return resolve_many(text, len(statements), items), ""


def resolve_many(text: str, beliefs: int, items: Sequence[Item]) -> list[list[Verdict]]:
    """``resolve`` for a several-belief answer: the verdicts under each belief handle (B1…),
    the first on an item counting; unknown belief handles left out."""
    entries = _entries(text)
    return [
        _verdicts(
            [
                e
                for e in entries
                if isinstance(e, dict) and str(e.get("b") or "").strip().casefold() == f"b{n}"
            ],
            items,
        )
        for n in range(1, beliefs + 1)
    ]


def resolve(text: str, items: Sequence[Item]) -> list[Verdict]:
    """The verdicts of the model's JSON, by handle (unknown handles and labels left out; the
    first verdict on an item counts)."""
    return _verdicts(_entries(text), items)


def _entries(text: str) -> list[JSON]:
    try:
        value: JSON = json.loads(text)
    except ValueError:
        return []
    entries = value.get("items") if isinstance(value, dict) else value
    return entries if isinstance(entries, list) else []


def _verdicts(entries: Sequence[JSON], items: Sequence[Item]) -> list[Verdict]:
    by_handle = {i.handle.casefold(): i for i in items}
    verdicts: dict[str, Verdict] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        item = by_handle.get(str(entry.get("r") or "").strip().casefold())
        verdict = str(entry.get("verdict") or "").strip().lower()
        if item is None or verdict not in VERDICTS or item.handle in verdicts:
            continue
        quote = entry.get("quote")
        verdicts[item.handle] = Verdict(item, verdict, quote if isinstance(quote, str) else "")
    return list(verdicts.values())


def same_as(verdicts: Sequence[Verdict]) -> Verdict | None:
    """The belief the model called the same idea, if any is close enough to be (``SAME``)."""
    for v in verdicts:
        if v.verdict == "same" and v.item.kind == "belief" and v.item.similarity >= SAME:
            return v
    return None
