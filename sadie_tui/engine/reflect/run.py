"""One reflection run: the episodes waiting (or all of them, or those since a date) read in
batches; for each batch the model proposes beliefs, their evidence is policed, each survivor
is folded into the belief it repeats or judged against what might disagree with it and kept,
the beliefs the batch's notes touch are judged against them, and everything the batch
decided is committed at once with the episodes marked as reflected. A run killed at any
instant loses at most the batch in flight; the next run starts where it stopped.

``--budget`` is honoured between batches: a batch that would not finish in the time left is
not started (its expected time is the mean of the batches so far).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ModelTimeout, ModelUnreachable
from ..prompt import Briefing
from ..reasoners.rates import Budget, Rates
from ..store import reflection as store
from ..store.ids import new_id, now
from . import judge
from .batches import ANSWER_TOKENS, batch_chars, pack
from .evidence import police_answer
from .judge import MUTABLE, RELATED_NOTE, Verdict
from .learn import Learner
from .prompt import Item, Shown, propose_messages, propose_schema

if TYPE_CHECKING:
    from ..memory import Memory
    from ..reasoners.base import StructuredReasoner
    from ..reply.closeness import Encode
    from ..turns.context import TurnContext

Progress = Callable[[str, int, int], None]  # (stage, done, total)
TOUCHED = 3  # existing beliefs a batch's notes are checked against, at most


@dataclass
class ReflectReport:
    """What a run did (``sadie reflect --json``)."""

    run_id: str | None = None
    model: str = ""
    episodes: int = 0  # read and marked as reflected
    batches: int = 0
    proposed: int = 0  # beliefs the model proposed
    all_verbatim: int = 0  # ... whose every quote was word for word
    dropped: int = 0  # ... dropped: no evidence survived
    quotes_dropped: dict[str, int] = field(default_factory=dict)  # reason → count
    new: int = 0
    merged: int = 0  # folded into a belief they repeat, with new evidence
    repeated: int = 0  # the same belief with nothing new
    rejected_before: int = 0
    retired_before: int = 0
    contested: int = 0
    retired: int = 0
    evidence_added: int = 0
    judged: int = 0  # verdict requests
    unusable: int = 0  # batches whose answer could not be read
    failed: int = 0  # requests that failed (timeouts); a failed batch waits for the next run
    prompt_tokens: int = 0
    eval_tokens: int = 0
    elapsed: float = 0.0
    left: int = 0  # episodes still waiting
    stopped: str | None = None  # "budget" or "stopped" when the run ended early
    new_ids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["elapsed"] = round(self.elapsed, 1)
        return data


async def reflect_memory(
    ctx: TurnContext,
    *,
    everything: bool = False,
    since: datetime | None = None,
    budget_seconds: float | None = None,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
    only: Sequence[str] | None = None,
) -> ReflectReport:
    """Reflect with the turn's model (never offline: a run needs structured outputs)."""
    from ..turns.context import pick_reasoner

    choice = await pick_reasoner(ctx)
    reasoner: Any = choice.reasoner
    if getattr(reasoner, "offline", True) or not hasattr(reasoner, "structured"):
        raise ModelUnreachable(
            "sadie reflect needs a model: " + (choice.notice or "the offline reasoner cannot"),
            fix="start Ollama (or set OLLAMA_HOST), then run it again",
        )
    memory = ctx.memory

    def encode(texts: Sequence[str]) -> Any:
        return memory.embedder.encode(list(texts))

    try:
        return await reflect(
            memory,
            reasoner,
            encode,
            num_ctx=max(ctx.settings.num_ctx, ctx.rates.get(reasoner.model).num_ctx),
            wait=ctx.settings.first_token_timeout,
            everything=everything,
            since=since,
            budget_seconds=budget_seconds,
            progress=progress,
            stop=stop,
            only=only,
        )
    finally:
        rates = getattr(reasoner, "rates", None)
        if rates is not None:
            rates.save()


async def reflect(
    memory: Memory,
    reasoner: StructuredReasoner,
    encode: Encode,
    *,
    num_ctx: int,
    wait: float,
    everything: bool = False,
    since: datetime | None = None,
    budget_seconds: float | None = None,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
    only: Sequence[str] | None = None,
) -> ReflectReport:
    started = time.monotonic()
    db = memory.db
    notify = progress or (lambda stage, done, total: None)
    report = ReflectReport(model=reasoner.model)
    episodes = store.episodes_to_read(db, everything=everything, since=since, only=only)
    batches = pack(episodes, batch_chars(num_ctx))
    if not batches:
        report.left = store.waiting_count(db)
        return report
    report.run_id = new_id()
    with db.transaction():
        store.start_run(db, report.run_id, reasoner.model, now())
    learner = Learner.of(db, report.run_id, reasoner.model, encode)
    rates: Rates = getattr(reasoner, "rates", None) or Rates()
    step = _Step(reasoner, learner, encode, rates, wait, report)
    done_episodes = 0
    notify("reflecting", 0, len(episodes))
    spent: list[float] = []
    status = "done"
    try:
        for batch in batches:
            if stop is not None and stop():
                report.stopped, status = "stopped", "stopped"
                break
            if budget_seconds is not None:
                left = budget_seconds - (time.monotonic() - started)
                if left <= 0 or (spent and sum(spent) / len(spent) > left):
                    report.stopped, status = "budget", "stopped"
                    break
            began = time.monotonic()
            marked = await step.batch(batch)
            ops = learner.commit_ops()
            with db.transaction():
                for op in ops:
                    op(db)
                if marked:
                    store.mark_reflected(db, [s.episode_id for s in batch], report.run_id, now())
                _fold(report, learner)
                store.update_run(db, report.run_id, _counts(report), status="running", at=None)
            if marked:
                report.episodes += len(batch)
            report.batches += 1
            spent.append(time.monotonic() - began)
            done_episodes += len(batch)
            notify("reflecting", done_episodes, len(episodes))
    except BaseException:
        status = "failed"
        raise
    finally:
        report.elapsed = time.monotonic() - started
        report.left = store.waiting_count(db)
        _fold(report, learner)
        with db.transaction():
            store.update_run(db, report.run_id, _counts(report), status=status, at=now())
        notify("done", len(episodes), len(episodes))
    return report


def _fold(report: ReflectReport, learner: Learner) -> None:
    c = learner.counts
    report.new = c["new"]
    report.merged = c["merged"]
    report.repeated = c["repeated"]
    report.rejected_before = c["rejected before"]
    report.retired_before = c["retired before"]
    report.contested = c["contested"]
    report.retired = c["retired"]
    report.evidence_added = c["evidence added"]
    report.new_ids = list(learner.new_ids)


def _counts(report: ReflectReport) -> dict[str, Any]:
    data = report.as_dict()
    data.pop("new_ids", None)
    return json.loads(json.dumps(data))


@dataclass
class _Step:
    """One batch's requests and decisions."""

    reasoner: StructuredReasoner
    learner: Learner
    encode: Encode
    rates: Rates
    wait: float
    report: ReflectReport

    @property
    def cap(self) -> float:
        # Reading (up to ``wait``) and then writing an answer at a few tokens a second.
        return self.wait * 2

    def budget(self, prompt_chars: int) -> Budget:
        """A request's budget: a stall is measured from the model's rates as in a turn, but
        the first token may take the whole ``first_token_timeout`` (``wait``): nobody waits on
        a reflection, and a model server busy with another request answers it after that one."""
        measured = self.rates.budget(
            self.reasoner.model, prompt_chars=prompt_chars, structured=True, cap=self.cap
        )
        return Budget(first=max(measured.first, self.wait), stall=measured.stall, cap=self.cap)

    async def _ask(self, messages: list[dict[str, str]], schema: dict, tokens: int) -> str:
        briefing = Briefing(system=messages[0]["content"], messages=messages, excerpts=[], shown={})
        budget = self.budget(sum(len(m["content"]) for m in messages))
        try:
            return await self.reasoner.structured(
                briefing, messages, schema, budget=budget, max_tokens=tokens
            )
        finally:
            self._tokens()

    def _tokens(self) -> None:
        self.report.prompt_tokens += int(getattr(self.reasoner, "last_prompt_count", 0) or 0)
        self.report.eval_tokens += int(getattr(self.reasoner, "last_eval_count", 0) or 0)

    async def batch(self, shown: list[Shown]) -> bool:
        """Propose, police, fold in and judge one batch; True when its episodes count as
        reflected (a request that timed out leaves them waiting)."""
        by_handle = {s.handle: s for s in shown}
        dates = {s.episode_id: s.date for s in shown}
        try:
            text = await self._ask(
                propose_messages(shown), propose_schema(list(by_handle)), ANSWER_TOKENS
            )
        except ModelTimeout:
            self.report.failed += 1
            return False
        policed = police_answer(text, by_handle, self.encode)
        report = self.report
        report.proposed += policed.proposed
        report.all_verbatim += policed.all_verbatim
        report.dropped += policed.dropped
        for reason, count in policed.quotes_dropped.items():
            report.quotes_dropped[reason] = report.quotes_dropped.get(reason, 0) + count
        if policed.unusable:
            report.unusable += 1
        learner = self.learner
        judged: set[str] = set()
        successors: dict[str, list[str]] = {}
        pending: list[tuple[str, list[Verdict]]] = []
        if policed.candidates:
            vectors = _unit(self.encode([c.statement for c in policed.candidates]))
            for candidate, vector in zip(policed.candidates, vectors, strict=True):
                target = learner.match(candidate.statement, vector)
                if target is not None:
                    learner.absorb(target, candidate, dates)
                    continue
                if learner.rejected_near(candidate.statement, vector):
                    learner.counts["rejected before"] += 1
                    continue
                episodes = sorted({q.episode_id for q in candidate.evidence})
                items = judge.items_for(
                    learner.db,
                    _known(learner),
                    vector,
                    exclude_beliefs=set(),
                    exclude_episodes=episodes,
                )
                verdicts: list[Verdict] = []
                if items:
                    verdicts = await self._judge(candidate.statement, items)
                same = judge.same_as(verdicts)
                if same is not None:
                    learner.absorb(same.item.id, candidate, dates)
                    continue
                belief_id = learner.create(candidate, vector, dates)
                judged.add(belief_id)
                for episode in episodes:
                    successors.setdefault(episode, []).append(belief_id)
                pending.append((belief_id, verdicts))
        for belief_id, verdicts in pending:
            learner.apply(belief_id, verdicts, successors)
        await self._touched(shown, judged, successors)
        return True

    async def _judge(self, statement: str, items: list[Item]) -> list[Verdict]:
        self.report.judged += 1
        try:
            asked = await judge.ask(self.reasoner, statement, items, self.budget)
        finally:
            self._tokens()
        if asked.reason:
            self.report.failed += 1
        return list(asked.verdicts)

    async def _touched(
        self, shown: list[Shown], judged: set[str], successors: dict[str, list[str]]
    ) -> None:
        """The beliefs this batch's notes speak to (not made by it), judged against them."""
        learner = self.learner
        chunks = store.chunks_of(learner.db, [s.episode_id for s in shown])
        if not chunks:
            return
        candidates = [
            (row, belief)
            for row, belief in enumerate(learner.wordings.ids)
            if belief not in judged and learner.beliefs[belief].mutable
        ]
        if not candidates:
            return
        matrix = _unit(np.asarray([c.vector for c in chunks], dtype=np.float32))
        rows = [row for row, _ in candidates]
        scores = learner.wordings.vectors[rows] @ matrix.T  # beliefs × chunks
        picked: list[tuple[float, str, list[tuple[int, float]]]] = []
        seen: set[str] = set()
        for (_, belief), line in zip(candidates, scores, strict=True):
            if belief in seen:
                continue
            own = learner.beliefs[belief].episodes
            near = [
                (int(j), float(line[j]))
                for j in np.argsort(-line)
                if line[j] >= RELATED_NOTE and chunks[j].episode_id not in own
            ][: judge.PER_KIND]
            if near:
                seen.add(belief)
                picked.append((near[0][1], belief, near))
        picked.sort(key=lambda t: -t[0])
        for _, belief, near in picked[:TOUCHED]:
            items = judge.handled(
                [
                    Item(
                        "",
                        "note",
                        chunks[j].episode_id,
                        chunks[j].date,
                        chunks[j].title,
                        chunks[j].text,
                        score,
                    )
                    for j, score in near
                ]
            )
            state = learner.beliefs[belief]
            if state.status not in MUTABLE:
                continue
            verdicts = await self._judge(state.statement, items)
            learner.apply(belief, verdicts, successors)


def _known(learner: Learner) -> Any:
    """The learner's wordings in the shape ``judge.items_for`` reads."""
    from ..store.beliefs import Known

    w = learner.wordings
    return Known(
        w.ids,
        w.statuses,
        [learner.beliefs[i].origin for i in w.ids],
        w.fingerprints,
        w.statements,
        w.vectors,
    )


def _unit(vectors: Any) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1)
    norms[norms == 0] = 1.0
    return (matrix / norms[:, None]).astype(np.float32)
