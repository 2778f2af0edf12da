"""``sadie eval reflect``: does reflection find what the person wrote about themselves?

The demo memory is built in a scratch home **without** its hand-written ``beliefs.jsonl`` (27
beliefs: 10 active, 11 contested, 6 retired), and ``sadie reflect`` runs on
a subset of it with the configured model: each held-out belief's first ``per_belief``
evidence notes by date (all 27 beliefs have some), at most ``limit`` episodes. Retrieval and
the contradiction search still see the whole memory (its records included).

Figures:

* **recovered**: held-out beliefs matched by a derived one, by a rule with no model in it: the
  derived statement holds at least half of the held-out statement's content-word stems
  (``reply.backing.stems``: content words cut to five letters), and at least two of them
  when it has four or more ("I do my best work in the mornings" → best, work, morni). Also
  given by embedding cosine ≥ ``reflect.sameness.SAME``, for comparison.
* **all verbatim**: derived beliefs whose every quote the model wrote word for word (every
  stored quote is in its note either way: a paraphrase is stored as the note's sentence).
* **contested found**: held-out contested beliefs matched by a derived belief that is
  contested.
* **contested from records**: held-out contested beliefs matched by a belief the records
  contested without a model (``records_found``).
* **plans or one-day events**: derived beliefs the plan-and-event rule
  (``reflect.plans.not_a_belief``) names; reflection sets those aside before keeping a belief,
  so this counts what slipped past the rule's lists only if the rule changed since; the run's
  ``not_beliefs`` says how many the model proposed and the rule set aside.
* **per 100 episodes**: the run's time, and the tokens it read and wrote (``per_hundred``).
"""

from __future__ import annotations

import asyncio
import json
import math
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..engine.ingest.derived_files import read_beliefs
from ..engine.ingest.raw import ReadResult
from ..engine.jsonvalue import JSONObject
from ..engine.operations import ListBeliefs
from ..engine.reply.backing import stems
from ..paths import demo_source

if TYPE_CHECKING:
    from ..config import Settings
    from ..engine.reflect.report import ReflectReport
    from ..engine.session import Session

PER_BELIEF = 1


@dataclass(frozen=True)
class HeldOut:
    statement: str
    status: str
    evidence: tuple[str, ...]  # episode ids


def held_out(source: Path) -> list[HeldOut]:
    """The demo's hand-written beliefs, with their evidence as episode ids."""
    result = ReadResult()
    path = source / "beliefs.jsonl"
    read_beliefs(path, str(path.resolve()), result)
    return [
        HeldOut(d.fields["statement"], d.fields["status"], tuple(d.fields["evidence"]))
        for d in result.derived
    ]


def matches(held: str, derived: str) -> bool:
    """The model-free rule (module docstring)."""
    want = stems(held)
    if not want:
        return False
    shared = len(want & stems(derived))
    need = max(1, math.ceil(len(want) / 2))
    if len(want) >= 4:
        need = max(need, 2)
    return shared >= need


@dataclass(frozen=True)
class Matched:
    """A derived belief that matched a held-out one, with its status."""

    statement: str
    status: str


@dataclass(frozen=True)
class HeldOutScore:
    """One held-out belief: the derived beliefs that match it by the rule, and those close to
    it by embedding."""

    statement: str
    status: str
    matched: list[Matched]
    close_by_embedding: list[str]


@dataclass(frozen=True)
class ReflectEval:
    """The figures of the module docstring (``sadie eval reflect --json``), the run's own
    report, and each held-out belief's matches."""

    model: str
    episodes: int
    held_out: int
    derived: int
    recovered: int
    recovered_by_embedding: int
    all_verbatim: int
    all_verbatim_share: float | int  # 0 (an int) when nothing was derived
    contested_held_out: int
    contested_found: int
    seconds_per_100_episodes: float
    tokens_per_100_episodes: dict[str, int]
    run: JSONObject  # the run's ReflectReport, as `sadie reflect --json` prints it
    beliefs: list[HeldOutScore] = field(default_factory=list)
    #: Held-out contested beliefs matched by a belief the records contested (``records_found``).
    contested_from_records: int = 0
    plans_or_events: int = 0  # derived beliefs the plan-and-event rule names
    set_aside_as_plans_or_events: int = 0  # proposed beliefs the run set aside by that rule


def run_reflect_eval(
    settings: Settings,
    *,
    per_belief: int = PER_BELIEF,
    limit: int | None = None,
    keep: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> ReflectEval:
    """Build the scratch memory, reflect on the subset, score it (module docstring). ``keep``:
    build the memory there and leave it (to inspect with ``SADIE_HOME=… sadie beliefs``)."""
    # lazy: engine.memory loads only when run_reflect_eval runs, off the start-up path
    from ..engine.memory import Memory
    from ..engine.reflect.run import reflect_memory
    from ..engine.session import Session
    from ..engine.store.reflection import episode_dates

    say = progress or (lambda message: None)
    source = demo_source()
    held = held_out(source)
    scratch = Path(tempfile.mkdtemp(prefix="sadie-eval-reflect-"))
    home = keep or scratch / "home"
    try:
        # Nor the beliefs a reflection derived for the demo (engine.demo loads them), nor its
        # .sadieignore (named here one by one, the files are read whatever it says).
        left_out = {"beliefs.jsonl", "derived_beliefs.jsonl", ".sadieignore"}
        parts = [p for p in sorted(source.iterdir()) if p.name not in left_out]
        say(f"building the demo memory without beliefs.jsonl in {home}")
        memory = Memory.open(home)
        session = Session(memory, settings)
        try:
            memory.ingest(parts)
            present = episode_dates(memory.db)
            chosen: list[str] = []
            for h in held:
                found = sorted((e for e in h.evidence if e in present), key=present.__getitem__)
                chosen.extend(e for e in found[:per_belief] if e not in chosen)
            chosen.sort(key=present.__getitem__)
            if limit is not None:
                chosen = chosen[:limit]
            say(f"reflecting on {len(chosen)} episodes with {settings.model}")
            report = asyncio.run(
                reflect_memory(
                    session.context,
                    only=chosen,
                    progress=lambda stage, done, total: (
                        say(f"{stage} {done}/{total}") if stage == "reflecting" else None
                    ),
                )
            )
            result = _score(session, held, report)
        finally:
            session.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def per_hundred(report: ReflectReport) -> tuple[float, dict[str, int]]:
    """The run's seconds and tokens (read, written) per 100 episodes read (0 when none)."""
    per = 100.0 / report.episodes if report.episodes else 0.0
    return round(report.elapsed * per, 1), {
        "read": round(report.prompt_tokens * per),
        "written": round(report.eval_tokens * per),
    }


def _score(session: Session, held: list[HeldOut], report: ReflectReport) -> ReflectEval:
    # lazy: engine.reflect.sameness loads only when _score runs, off the start-up path
    from ..engine.reflect.sameness import SAME
    from ..engine.store.beliefs import evidence_of

    derived = [b for b in session.call(ListBeliefs(origin="derived")) if b.status != "rejected"]
    quotes = evidence_of(session.db, [b.id for b in derived])
    exact = {
        b.id
        for b in derived
        if all(q.verbatim for q in quotes if q.belief_id == b.id and q.stance == "supports")
    }
    vectors = np.zeros((0, 0), dtype=np.float32)
    if derived:
        texts = [h.statement for h in held] + [b.statement for b in derived]
        raw = np.asarray(session.memory.embedder.encode(texts), dtype=np.float32)
        vectors = raw / np.maximum(np.linalg.norm(raw, axis=1)[:, None], 1e-9)
    rows: list[HeldOutScore] = []
    recovered = by_embedding = contested_found = 0
    for n, h in enumerate(held):
        found = [b for b in derived if matches(h.statement, b.statement)]
        near: list[str] = []
        if derived:
            cosines = vectors[len(held) :] @ vectors[n]
            near = [b.statement for b, c in zip(derived, cosines, strict=True) if c >= SAME]
        recovered += bool(found)
        by_embedding += bool(near)
        contested = h.status == "contested" and any(b.status == "contested" for b in found)
        contested_found += contested
        rows.append(
            HeldOutScore(
                h.statement, h.status, [Matched(b.statement, b.status) for b in found], near
            )
        )
    # lazy: as above
    from ..engine.reflect.plans import not_a_belief

    seconds, tokens = per_hundred(report)
    return ReflectEval(
        model=report.model,
        episodes=report.episodes,
        held_out=len(held),
        derived=len(derived),
        recovered=recovered,
        recovered_by_embedding=by_embedding,
        all_verbatim=len(exact),
        all_verbatim_share=round(len(exact) / len(derived), 3) if derived else 0,
        contested_held_out=sum(h.status == "contested" for h in held),
        contested_found=contested_found,
        seconds_per_100_episodes=seconds,
        tokens_per_100_episodes=tokens,
        run=json.loads(json.dumps(report.as_dict())),
        beliefs=rows,
        plans_or_events=sum(not_a_belief(b.statement) is not None for b in derived),
        set_aside_as_plans_or_events=sum(report.not_beliefs.values()),
        contested_from_records=records_found(session, held),
    )


def records_found(session: Session, held: list[HeldOut]) -> int:
    """Held-out contested beliefs (the demo's self-reports against its records: sleep, phone
    at night, takeaway, runs a week) matched by a belief the records contested, no model in
    it (``reflect.figures``: a "contested" change whose reason is the records' figure)."""
    # lazy: the store's change log loads only when the eval scores
    from ..engine.store.beliefs import changes_of

    by_records = [
        b
        for b in session.call(ListBeliefs(status="contested"))
        if any(
            c.action == "contested" and (c.reason or "").startswith("by the records:")
            for c in changes_of(session.db, b.id)
        )
    ]
    return sum(
        h.status == "contested" and any(matches(h.statement, b.statement) for b in by_records)
        for h in held
    )
