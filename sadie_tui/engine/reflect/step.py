"""One batch of a reflection run: the model proposes, the evidence is policed, each survivor
is folded into the belief it repeats or judged and kept, and the beliefs the batch's notes
speak to are judged against them. The writes wait in the ``Learner`` for the run's commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..errors import ModelTimeout
from ..prompt import Briefing
from ..reasoners.rates import Budget, Rates
from ..store import reflection as store
from . import judge
from .batches import ANSWER_TOKENS
from .evidence import police_answer
from .judge import MUTABLE, RELATED_NOTE, Verdict
from .learn import Learner
from .prompt import Item, Shown, propose_messages, propose_schema
from .report import ReflectReport

if TYPE_CHECKING:
    from ..jsonvalue import JSONObject
    from ..reasoners.base import StructuredReasoner
    from ..reply.closeness import Encode
    from ..store.beliefs import Known

TOUCHED = 3  # existing beliefs a batch's notes are checked against, at most


@dataclass
class Step:
    """One batch's requests and decisions, for one run."""

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

    async def _ask(self, messages: list[dict[str, str]], schema: JSONObject, tokens: int) -> str:
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
            why = report.unusable_why
            why[policed.unusable] = why.get(policed.unusable, 0) + 1
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
            # Notes it rests on, or was already judged against (a quote for or against it).
            own = learner.beliefs[belief].episodes | learner.quoted.get(belief, set())
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


def _known(learner: Learner) -> Known:
    """The learner's wordings in the shape ``judge.items_for`` reads."""
    # lazy: store.beliefs loads only when _known runs, off the start-up path
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


def _unit(vectors: npt.ArrayLike) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1)
    norms[norms == 0] = 1.0
    return np.asarray(matrix / norms[:, None], dtype=np.float32)
