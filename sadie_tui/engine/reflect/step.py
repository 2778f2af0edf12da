"""One batch of a reflection run: the model asks the salient questions the batch raises about
the person, each is answered from what retrieval finds across the whole memory (``recall``),
the evidence is policed, plans and one-day events are set aside (``plans``), each survivor is
folded into the belief it repeats or judged and kept, and the beliefs the batch's notes speak
to are judged against them. A batch the model raises no question about is read directly
(``propose_messages``), as is every batch when there is no retrieval. The writes wait in the
``Learner`` for the run's commit.

The requests go in the order that keeps the server's prompt cache warm: the questions and
every answer first (they open with the same system prompt and the same batch), the verdicts
after.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..errors import ModelTimeout
from ..prompt import Briefing
from ..reasoners.rates import Budget, Rates
from ..reply.backing import stems
from ..store import reflection as store
from . import judge
from .batches import ANSWER_TOKENS, RECALL_PASSAGES
from .evidence import Candidate, police_answer
from .judge import MUTABLE, RELATED_NOTE, Verdict
from .learn import Learner
from .plans import not_a_belief
from .prompt import (
    Item,
    Shown,
    answer_messages,
    propose_messages,
    propose_schema,
    questions_messages,
    questions_schema,
)
from .recall import Recall
from .report import ReflectReport

# The words of an answer that repeats the instruction (or Park et al.'s question) rather than
# asking about the person: the request's own words, and its list of topics as a list.
_INSTRUCTION = stems(
    "salient high-level questions answer excerpts notes months concrete person habits people "
    "life values things"
)

if TYPE_CHECKING:
    from ..jsonvalue import JSONObject
    from ..reasoners.base import StructuredReasoner
    from ..reply.closeness import Encode
    from ..store.beliefs import Known

TOUCHED = 3  # existing beliefs a batch's notes are checked against, at most
# Asked of one batch. Park et al. ask three; one here: each costs an answer request (~50 s of
# a 1.5B model on 2 CPU cores), and two a batch took the demo's 26 episodes from 1,532 s to
# 2,175 s per 100 episodes with no belief more recovered (2026-12-05, README).
MAX_QUESTIONS = 1
# A question with at least ECHO_WORDS of the instruction's words, half its own or more,
# repeats the instruction.
ECHO_WORDS = 3
PER_ANSWER = 2  # beliefs one question's answer may give
# A question of at most ``QUESTION_CHARS`` is some 35 tokens with its JSON; an answer cut
# here still keeps the strings it finished (``_questions_of``).
QUESTION_TOKENS = 48


@dataclass
class Step:
    """One batch's requests and decisions, for one run."""

    reasoner: StructuredReasoner
    learner: Learner
    encode: Encode
    rates: Rates
    wait: float
    report: ReflectReport
    recall: Recall | None = field(default=None)  # None: every batch is read directly

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
        self.report.requests += 1
        self.report.prompt_tokens += int(getattr(self.reasoner, "last_prompt_count", 0) or 0)
        self.report.eval_tokens += int(getattr(self.reasoner, "last_eval_count", 0) or 0)

    async def batch(self, shown: list[Shown]) -> bool:
        """Ask and answer (or propose), police, fold in and judge one batch; True when its
        episodes count as reflected (a request that timed out leaves them waiting)."""
        dates = {s.episode_id: s.date for s in shown}
        try:
            answers = await self._answers(shown, dates)
        except ModelTimeout:
            self.report.failed += 1
            return False
        candidates = [c for text, handles in answers for c in self._policed(text, handles)]
        learner = self.learner
        judged: set[str] = set()
        successors: dict[str, list[str]] = {}
        pending: list[tuple[str, list[Verdict]]] = []
        if candidates:
            vectors = _unit(self.encode([c.statement for c in candidates]))
            for candidate, vector in zip(candidates, vectors, strict=True):
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

    async def _answers(
        self, shown: list[Shown], dates: dict[str, str]
    ) -> list[tuple[str, dict[str, Shown]]]:
        """The model's answers for the batch, each with the excerpts its handles name (as
        policed: a recalled passage's whole chunk); ``dates`` gains the recalled notes'."""
        by_handle = {s.handle: s for s in shown}
        questions = await self._questions(shown) if self.recall is not None else []
        if not questions:
            text = await self._ask(
                propose_messages(shown), propose_schema(list(by_handle)), ANSWER_TOKENS
            )
            return [(text, by_handle)]
        answers: list[tuple[str, dict[str, Shown]]] = []
        inside = set(dates)
        for question in questions:
            found = self.recall(question, inside) if self.recall is not None else []
            shown_found: list[Shown] = []
            handles = dict(by_handle)
            for n, r in enumerate(found[:RECALL_PASSAGES], len(shown) + 1):
                shown_found.append(Shown(f"E{n}", r.episode_id, r.date, r.title, r.text))
                handles[f"E{n}"] = Shown(f"E{n}", r.episode_id, r.date, r.title, r.whole)
                dates.setdefault(r.episode_id, r.date)
            self.report.recalled += len(shown_found)
            text = await self._ask(
                answer_messages(shown, shown_found, question, PER_ANSWER),
                propose_schema(list(handles), PER_ANSWER),
                ANSWER_TOKENS,
            )
            answers.append((text, handles))
        return answers

    async def _questions(self, shown: list[Shown]) -> list[str]:
        """The salient questions the batch raises (none when the answer cannot be read)."""
        text = await self._ask(
            questions_messages(shown, MAX_QUESTIONS),
            questions_schema(MAX_QUESTIONS),
            QUESTION_TOKENS,
        )
        questions = _questions_of(text)
        self.report.questions += len(questions)
        return questions

    def _policed(self, text: str, handles: Mapping[str, Shown]) -> list[Candidate]:
        """One answer's beliefs, their quotes policed, plans and one-day events set aside;
        the counts go to the report."""
        policed = police_answer(text, handles, self.encode)
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
        kept: list[Candidate] = []
        for candidate in policed.candidates:
            why_not = not_a_belief(candidate.statement)
            if why_not is None:
                kept.append(candidate)
            else:
                report.not_beliefs[why_not] = report.not_beliefs.get(why_not, 0) + 1
        return kept

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
        picked = picked[:TOUCHED]
        if not picked:
            return
        # One request for all of them (``judge.ask_many``), against the union of their notes;
        # each belief takes only the verdicts on its own notes. One belief: the one-belief
        # request, as for a new belief.
        rows = sorted({j for _, _, near in picked for j, _ in near})
        best = {j: max(s for _, _, near in picked for k, s in near if k == j) for j in rows}
        items = judge.handled(
            [
                Item(
                    "",
                    "note",
                    chunks[j].episode_id,
                    chunks[j].date,
                    chunks[j].title,
                    chunks[j].text,
                    best[j],
                )
                for j in rows
            ]
        )
        handle_of = dict(zip(rows, (i.handle for i in items), strict=True))
        if len(picked) == 1:
            _, belief, _ = picked[0]
            answers = [await self._judge(learner.beliefs[belief].statement, items)]
        else:
            answers = await self._judge_many(
                [learner.beliefs[b].statement for _, b, _ in picked], items
            )
        for (_, belief, near), verdicts in zip(picked, answers, strict=True):
            if learner.beliefs[belief].status not in MUTABLE:
                continue  # an earlier verdict of this batch retired it
            own = {handle_of[j] for j, _ in near}
            learner.apply(belief, [v for v in verdicts if v.item.handle in own], successors)

    async def _judge_many(self, statements: list[str], items: list[Item]) -> list[list[Verdict]]:
        self.report.judged += 1
        try:
            answers, reason = await judge.ask_many(self.reasoner, statements, items, self.budget)
        finally:
            self._tokens()
        if reason:
            self.report.failed += 1
        return answers


# A JSON string, for an answer cut at its token limit: its finished strings still stand.
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _questions_of(text: str) -> list[str]:
    """The questions of the model's answer, once each: each string split after its question
    marks (the 1.5B model ran a dozen questions into one string, measured), blank ones and
    those repeating the instruction left out; the words after a string's last question mark
    (a question the grammar's ``QUESTION_CHARS`` cut) are not one. An answer cut at its
    token limit (not JSON) keeps the strings it finished."""
    try:
        value = json.loads(text)
    except ValueError:
        found = [json.loads(f'"{m}"') for m in _STRING.findall(text.split("[", 1)[-1])]
        value = {"questions": found if "[" in text else []}
    items = value.get("questions") if isinstance(value, dict) else value
    if not isinstance(items, list):
        return []
    seen: dict[str, str] = {}
    for item in items:
        if not isinstance(item, str):
            continue
        for piece in re.findall(r"[^?]+\?", item) or [item]:
            question = " ".join(piece.split())
            if len(question) >= 8 and not echoes(question):
                seen.setdefault(question.casefold(), question)
    return list(seen.values())[:MAX_QUESTIONS]


def echoes(question: str) -> bool:
    """Whether ``question`` repeats the instruction instead of asking about the person: at
    least ``ECHO_WORDS`` of its content words, and half of them, are the instruction's."""
    words = stems(question)
    shared = len(words & _INSTRUCTION)
    return shared >= ECHO_WORDS and 2 * shared >= len(words)


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
