"""One reflection run: the episodes waiting (or all of them, or those since a date) read in
batches; for each batch the model asks the salient questions it raises about the person,
answers each from the whole memory with beliefs (``step``), their evidence is policed, each survivor
is folded into the belief it repeats or judged against what might disagree with it and kept,
the beliefs the batch's notes touch are judged against them, and everything the batch
decided is committed at once with the episodes marked as reflected. A run killed at any
instant loses at most the batch in flight; the next run starts where it stopped.

``--budget`` is honoured between batches: a batch that would not finish in the time left is
not started (its expected time is the mean of the batches so far). ``stop`` is asked between
batches and, every ``STOP_POLL`` seconds, while a batch's requests are out: a stop then
cancels them (the model server stops on the hang-up) and the batch is lost, as on a kill.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, TypeGuard

import numpy as np

from ..errors import NeedsModel
from ..reasoners.offline import offline_reason
from ..reasoners.rates import Rates
from ..store import reflection as store
from ..store.ids import new_id, now
from .batches import RECALL_CHARS, RECALL_PASSAGES, batch_chars, pack
from .figures import check_records
from .learn import Learner
from .recall import recall_for
from .report import ReflectReport
from .step import Step

if TYPE_CHECKING:
    from ..context import TurnContext
    from ..jsonvalue import JSONObject
    from ..memory import Memory
    from ..reasoners.base import Reasoner, StructuredReasoner
    from ..reply.closeness import Encode

Progress = Callable[[str, int, int], None]  # (stage, done, total)
STOP_POLL = 0.1  # seconds between two questions to ``stop`` while a batch's requests are out


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
    # lazy: context loads only when reflect_memory runs, off the start-up path
    from ..context import pick_reasoner

    memory = ctx.memory

    def encode(texts: Sequence[str]) -> np.ndarray:
        return memory.embedder.encode(list(texts))

    # The records' figures first, without a model: done (and kept) even when none answers.
    records = check_records(memory.db, encode)
    choice = await pick_reasoner(ctx)
    reasoner = choice.reasoner
    if not _answers_structured(reasoner):
        raise NeedsModel("sadie reflect", offline_reason(reasoner))

    try:
        report = await reflect(
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
        report.records = records.as_dict()
        return report
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
    recall = recall_for(memory, RECALL_PASSAGES, RECALL_CHARS)
    step = Step(reasoner, learner, encode, rates, wait, report, recall)
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
            saved = copy.deepcopy((report, learner.counts, learner.new_ids))
            marked = await _unless_stopped(step.batch(batch), stop)
            if marked is None:  # stopped in flight: nothing of the batch is kept or counted
                _restore(report, learner, saved)
                learner.commit_ops()
                report.stopped, status = "stopped", "stopped"
                break
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


async def _unless_stopped(batch: Awaitable[bool], stop: Callable[[], bool] | None) -> bool | None:
    """The batch's outcome, or None when ``stop`` said so before it ended (its requests are
    cancelled)."""
    task = asyncio.ensure_future(batch)
    try:
        while stop is not None:
            done, _ = await asyncio.wait({task}, timeout=STOP_POLL)
            if done:
                break
            if stop():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                return None
        return await task
    finally:
        task.cancel()  # the run itself cancelled (ctrl+c): its batch goes with it


def _restore(
    report: ReflectReport, learner: Learner, saved: tuple[ReflectReport, Counter[str], list[str]]
) -> None:
    """Put back the counts as they were before a batch that was stopped in flight."""
    before, counts, new_ids = saved
    for name in vars(before):
        setattr(report, name, getattr(before, name))
    learner.counts, learner.new_ids = counts, new_ids


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
    report.set_aside = {
        reason: c[key]
        for reason, key in (
            ("without the note's words", "verdicts without the note's words"),
            ("quoting the belief itself", "verdicts quoting the belief itself"),
            ("older note", "older notes"),
        )
        if c[key]
    }
    report.new_ids = list(learner.new_ids)


def _counts(report: ReflectReport) -> JSONObject:
    data = report.as_dict()
    data.pop("new_ids", None)
    counts: JSONObject = json.loads(json.dumps(data))
    return counts


def _answers_structured(reasoner: Reasoner) -> TypeGuard[StructuredReasoner]:
    """Whether ``reasoner`` is a model that answers in a schema (the offline one is not)."""
    return not getattr(reasoner, "offline", True) and hasattr(reasoner, "structured")
