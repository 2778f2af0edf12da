"""Ask: one question, one structured answer, through the persona's stages.

Stages (a persona runs a subset, in order): ``reframe`` (time words resolved into an
explicit window, filler dropped), ``retrieve``, ``counter`` (seek counter-evidence:
observations and contested beliefs that bear on the question), ``draft`` (the reasoner),
``ground_check`` (citation policing), ``revise`` (one more draft when the draft has details
no source holds; skipped for a model whose revisions are seldom kept, the ``revise`` habit of
``reasoners.rates``). Ask writes only telemetry — never a conversation, never memory.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from ..context import TurnContext, pick_reasoner
from ..empty_memory import FILL_NOTICE
from ..errors import ModelError
from ..events import CitationView
from ..jsonvalue import JSONObject
from ..prompt import EMPTY_ASK, Briefing, render_beliefs, render_observations
from ..reasoners.offline import OfflineReasoner
from ..reasoners.rates import REVISE
from ..reply.check import (
    NO_CITATIONS,
    Checked,
    Filtered,
    Weighed,
    answer_report,
    grounding_report,
    run_pass,
    settled,
    titles_of,
)
from ..retrieval import retrieve
from ..retrieval.timewords import parse_time_window, strip_time_words
from ..wire import dump
from .steps import (
    Telemetry,
    Unfinished,
    asks_tail,
    briefing_for,
    fit_for,
    habits,
    persona_for,
    record,
    record_unfinished,
)

if TYPE_CHECKING:
    from ..memory import Memory
    from ..passages import Fit
    from ..personas import Persona
    from ..reasoners.base import Reasoner
    from ..reply.check import Grounded, Span, Titles
    from ..retrieval import RetrievalResult

ABSTAIN = "Your memory does not hold enough to answer that, so I won't guess."
_OPINION = re.compile(r"^\s*OPINION:\s*", re.M)
_FILLER = re.compile(r"^(hey|hi|so|ok|okay|um|uh|please|sadie)[,!\s]+", re.I)


@dataclass(frozen=True)
class Stage:
    """One stage an ask ran: its name, its milliseconds and a note."""

    name: str
    ms: float
    note: str = ""


@dataclass
class AskResult:
    """One question answered: the answer, its citations and how its grounding went. Also its
    JSON shape (`sadie --ask --json`, ``POST /v1/ask``), field for field."""

    question: str
    answer: str
    citations: list[CitationView]
    persona: str
    abstained: bool
    grounding: JSONObject
    stages: list[Stage]
    reframed_question: str | None
    opinion: str | None
    emotion: str
    model: str
    offline: bool
    chunks_considered: int = 0
    latency_ms: float = 0.0
    notices: list[str] = field(default_factory=list)
    found_by_sadie: list[CitationView] = field(default_factory=list)

    def as_json(self) -> JSONObject:
        """Its JSON (``wire``): what `sadie --ask --json` prints and ``POST /v1/ask`` answers."""
        data: JSONObject = dump(self)
        return data


def reframe(question: str, now: datetime) -> str:
    """The question with filler dropped and its time words made explicit."""
    text = _FILLER.sub("", question.strip())
    window = parse_time_window(text, now)
    if window is None:
        return text
    core = strip_time_words(text, window) or text
    start = window.start.strftime("%Y-%m-%d") if window.start else "the beginning"
    end = (
        datetime.fromordinal(window.end.toordinal() - 1).strftime("%Y-%m-%d")
        if window.end
        else "now"
    )
    return f"{core.rstrip('?. ')} (between {start} and {end})?"


def split_opinion(text: str) -> tuple[str, str | None]:
    match = _OPINION.search(text)
    if not match:
        return text.strip(), None
    return text[: match.start()].strip(), text[match.end() :].strip() or None


class Stages:
    """The stages an ask ran, each with its milliseconds and a note (``AskResult.stages``)."""

    def __init__(self) -> None:
        self.done: list[Stage] = []

    def add(self, name: str, t0: float, note: str = "") -> None:
        ms = round((time.perf_counter() - t0) * 1000, 1)
        self.done.append(Stage(name, ms, note))


@dataclass(frozen=True)
class Plan:
    """What the ask will answer from: the query retrieval used, the reframed question, what
    retrieval found and the briefing."""

    query: str
    reframed: str | None
    result: RetrievalResult
    briefing: Briefing


@dataclass(frozen=True)
class Answer:
    """A drafted answer, checked (``reply.check``): its citations settled and shown, the
    details no source holds and the evidence sadie found for it; how the draft was cut."""

    checked: Checked
    weighed: Weighed
    cut: str | None

    @property
    def grounded(self) -> Grounded:
        return self.checked.grounded


async def ask_turn(ctx: TurnContext, question: str, persona_name: str | None = None) -> AskResult:
    """One question, one structured answer (the module's docstring gives the stages)."""
    started = time.perf_counter()
    persona = persona_for(persona_name, ctx.settings.ask_persona)
    emotion = ctx.emotions.choose(question).value
    choice = await pick_reasoner(ctx)
    notices = [choice.notice] if choice.notice else []
    if await asyncio.to_thread(ctx.memory.is_empty):
        notices.append(FILL_NOTICE)  # how to fill it, beside the answer the spec fixes
        empty = _empty_memory(question, persona, emotion, choice.reasoner, notices)
        unfinished = Unfinished("ask", question, empty.model, persona.name, started, True)
        await asyncio.to_thread(record_unfinished, ctx, unfinished)
        return empty
    stages = Stages()
    reasoner = choice.reasoner
    tail = asks_tail(ctx, reasoner)
    plan = await asyncio.to_thread(_plan, ctx, question, persona, emotion, stages, tail)
    notices.extend(plan.result.notices)
    try:
        answer = await _draft_and_revise(ctx, reasoner, question, persona, plan, stages)
    except ModelError as exc:
        notices.append(exc.one_line() + "; answering offline")
        reasoner = OfflineReasoner(exc.message)
        answer = await _offline(ctx, reasoner, question, plan, stages)
    return await _result(
        ctx, question, persona, emotion, reasoner, plan, answer, stages, notices, started
    )


def _spans(report: JSONObject) -> list[JSONObject]:
    found = report.get("unsupported")
    return [sp for sp in found if isinstance(sp, dict)] if isinstance(found, list) else []


def _shifted(span: JSONObject, by: int) -> JSONObject:
    start, end = span.get("start"), span.get("end")
    if isinstance(start, int) and isinstance(end, int):
        return {**span, "start": start + by, "end": end + by}
    return span


def _empty_memory(
    question: str, persona: Persona, emotion: str, reasoner: Reasoner, notices: list[str]
) -> AskResult:
    return AskResult(
        question=question,
        answer=EMPTY_ASK,
        citations=[],
        persona=persona.name,
        abstained=True,
        grounding=grounding_report(NO_CITATIONS),
        stages=[],
        reframed_question=None,
        opinion=None,
        emotion=emotion,
        model=reasoner.model,
        offline=reasoner.offline,
        notices=notices,
    )


def _plan(
    ctx: TurnContext,
    question: str,
    persona: Persona,
    emotion: str,
    stages: Stages,
    tail: bool = True,
) -> Plan:
    """Reframe, retrieve, seek counter-evidence (as the persona's stages say), and brief
    (blocking; ``tail``: ask the model for the citations tail)."""
    now = datetime.now()
    query, reframed = question, None
    if "reframe" in persona.stages:
        t0 = time.perf_counter()
        reframed = reframe(question, now)
        query = _FILLER.sub("", question.strip()) or question
        stages.add("reframe", t0, reframed)
    t0 = time.perf_counter()
    result = retrieve(ctx.memory, query, persona, now=now)
    stages.add("retrieve", t0, f"{len(result.chunks)} chunks")
    extra: list[str] = []
    if "counter" in persona.stages:
        t0 = time.perf_counter()
        counter = _counter_evidence(ctx, query, persona, result)
        if counter:
            extra.append(counter)
        stages.add("counter", t0, "found" if counter else "none")
    fit = fit_for(ctx.settings, "ask")
    briefing = ask_briefing(
        ctx.memory, question, query, persona, result, emotion, extra, fit, tail=tail
    )
    return Plan(query, reframed, result, briefing)


async def _draft(
    ctx: TurnContext,
    reasoner: Reasoner,
    question: str,
    briefing: Briefing,
    messages: list[dict[str, str]] | None = None,
    *,
    required: bool = False,
) -> tuple[Grounded, str | None]:
    """One draft, through the stream filter and the guard, with its own citations; how it
    was cut short, if it was. ``required``: a draft that shows nothing is a model error."""
    filtered = Filtered(briefing, ctx.settings.reply_max_chars)
    shown, thought = await _complete(reasoner, briefing, question, messages, filtered)
    # Only reasoning (an unclosed <think>) when ``required``: a model error, answered offline.
    grounded = filtered.read(shown, briefing, reasoner, thought=thought, required=required)
    return grounded, filtered.cut(reasoner)


async def _checked(
    ctx: TurnContext,
    reasoner: Reasoner,
    question: str,
    briefing: Briefing,
    grounded: Grounded,
    cut: str | None,
    stages: Stages,
    titles: Titles,
) -> Answer:
    """The pass when the tail gave nothing, the citations settled, the details checked and
    the evidence weighed."""
    t0 = time.perf_counter()
    cap = ctx.settings.citation_pass_timeout
    ran = False
    async with aclosing(run_pass(grounded, briefing, reasoner, cap=cap)) as ticks:
        async for _checking in ticks:
            ran = True
    if ran:
        stages.add("citation_pass", t0, "repaired" if grounded.repaired else grounded.pass_reason)
    checked = await asyncio.to_thread(settled, grounded, briefing, titles, ctx.encode)
    return Answer(checked, checked.weighed(question, offline=reasoner.offline), cut)


async def _draft_and_revise(
    ctx: TurnContext,
    reasoner: Reasoner,
    question: str,
    persona: Persona,
    plan: Plan,
    stages: Stages,
) -> Answer:
    """Draft, check, and revise once when the draft has details no source holds: the
    revision is kept only when it is better supported, and a refusal never replaces
    support. A revision that fails never costs the draft its place."""
    briefing, titles = plan.briefing, titles_of(plan.result)
    t0 = time.perf_counter()
    grounded, cut = await _draft(ctx, reasoner, question, briefing, required=True)
    stages.add("draft", t0, f"{len(grounded.text)} chars, tail {grounded.tail}")
    t0 = time.perf_counter()
    stages.add("ground_check", t0, f"score {grounding_report(grounded.policed)['score']}")
    answer = await _checked(ctx, reasoner, question, briefing, grounded, cut, stages, titles)
    if "revise" not in persona.stages or reasoner.offline or not answer.weighed.spans:
        return answer
    t0 = time.perf_counter()
    rates = habits(ctx, reasoner)
    if not rates.pays(reasoner.model, REVISE):
        # The revision costs as long as a draft and this model's are rarely better supported
        # (the ``revise`` habit, ``reasoners.rates``): the draft stands.
        kept_so_far = rates.habit(reasoner.model, REVISE)
        rates.skipped(reasoner.model, REVISE)
        stages.add("revise", t0, f"skipped: this model's revisions were kept {kept_so_far} times")
        return answer
    # The same briefing, byte for byte, then the draft and the feedback: the model's prompt
    # cache reuses the whole prefix.
    messages = [
        *briefing.messages,
        {"role": "assistant", "content": grounded.text},
        {"role": "user", "content": _revision_note(answer.weighed.spans)},
    ]
    kept = "draft kept"
    second: Grounded | None = None
    cut2: str | None = None
    try:
        second, cut2 = await _draft(ctx, reasoner, question, briefing, messages)
    except ModelError as exc:
        kept = f"draft kept ({exc.one_line()})"
    if second is not None and second.text.strip():
        revised = await _checked(ctx, reasoner, question, briefing, second, cut2, stages, titles)
        if revised.weighed.better_than(answer.weighed):
            answer, kept = revised, "revision kept"
    rates.tried(reasoner.model, REVISE, paid=kept == "revision kept")
    stages.add("revise", t0, f"{kept}; {len(answer.weighed.spans)} unsupported")
    return answer


async def _offline(
    ctx: TurnContext, reasoner: Reasoner, question: str, plan: Plan, stages: Stages
) -> Answer:
    """The model failed: sadie's own answer from the excerpts, verbatim quotes only."""
    grounded, cut = await _draft(ctx, reasoner, question, plan.briefing)
    stages.add("draft", time.perf_counter(), "offline fallback")
    checked = settled(grounded, plan.briefing, titles_of(plan.result))
    return Answer(checked, checked.weighed(question, offline=True), cut)


async def _result(
    ctx: TurnContext,
    question: str,
    persona: Persona,
    emotion: str,
    reasoner: Reasoner,
    plan: Plan,
    answer: Answer,
    stages: Stages,
    notices: list[str],
    started: float,
) -> AskResult:
    """The answer (or the abstention), its grounding report and its telemetry."""
    grounded, result, briefing = answer.grounded, plan.result, plan.briefing
    text, opinion = split_opinion(grounded.text)
    if grounded.answered and not reasoner.offline:
        # It said the notes do not say, citing the sentence that does: answered from it.
        text, opinion = grounded.answered, None
        grounded.doubt = ""
    report = answer_report(answer.weighed, text, briefing, offline=reasoner.offline, cut=answer.cut)
    supported = [c for c in grounded.policed.citations if c.support in ("verbatim", "paraphrase")]
    # Evidence sadie finds itself counts like a citation: a right answer whose citations were
    # lost (a cut pass, a tail the model never wrote) is not thrown away.
    abstained = not result.chunks or not (supported or answer.weighed.evidence.support)
    sources = answer.checked.sources
    citations = [] if abstained else list(sources.views)
    if abstained:
        text = ABSTAIN
        report["unsupported"] = []
    elif report["doubt"]:
        # The person reads the doubt before the answer (the details' offsets move with it).
        lead = f"{report['doubt']}\n\n"
        text = lead + text
        report["unsupported"] = [_shifted(sp, len(lead)) for sp in _spans(report)]
    latency = (time.perf_counter() - started) * 1000
    score, spans = report["score"], report["unsupported"]
    telemetry = Telemetry(
        kind="ask",
        query=question,
        model=reasoner.model,
        persona=persona.name,
        briefing=briefing,
        result=result,
        grounded=grounded,
        grounding=float(score) if isinstance(score, (int, float)) else 0.0,
        latency_ms=latency,
        cited=tuple(citations),
        abstained=abstained,
        unsupported=len(spans) if isinstance(spans, list) else 0,
        cut=answer.cut,
    )
    await asyncio.to_thread(record, ctx, reasoner, telemetry)
    return AskResult(
        question=question,
        answer=text,
        citations=citations,
        persona=persona.name,
        abstained=abstained,
        grounding=report,
        stages=stages.done,
        reframed_question=plan.reframed,
        opinion=opinion,
        emotion=emotion,
        model=reasoner.model,
        offline=reasoner.offline,
        chunks_considered=len(result.chunks),
        latency_ms=round(latency, 1),
        notices=notices,
        found_by_sadie=[] if abstained else list(sources.found),
    )


def ask_briefing(
    memory: Memory,
    question: str,
    query: str,
    persona: Persona,
    result: RetrievalResult,
    emotion: str,
    extra: Sequence[str] = (),
    fit: Fit | None = None,
    *,
    tail: bool = True,
) -> Briefing:
    """The briefing of an ask turn (blocking: the soul summary and wiki pages are read); the
    wiki pages are those the query (the question less its filler) names; ``fit``: how much
    of what was retrieved the model reads (``passages``); ``tail``: whether it asks for the
    citations tail."""
    return briefing_for(
        memory,
        question,
        result,
        persona,
        emotion,
        mode="ask",
        wiki_query=query,
        extra=extra,
        fit=fit,
        tail=tail,
    )


async def _complete(
    reasoner: Reasoner,
    briefing: Briefing,
    question: str,
    messages: list[dict[str, str]] | None,
    filtered: Filtered,
) -> tuple[str, bool]:
    """What the reply shows once ``filtered``, and whether reasoning came in the separate
    thinking field. The model's stream is closed as soon as the reply guard stops it (a loop,
    a runaway length), as chat does: a small model repeating a paragraph until its token cap
    cost a question 126 s."""
    parts: list[str] = []
    thought = False
    pieces = reasoner.stream(briefing, question, messages=messages)
    try:
        async for piece in pieces:
            if piece.kind == "content":
                parts.append(filtered.feed(piece.text))
                if filtered.guard.stopped:
                    break
            elif piece.kind == "thinking":
                thought = True
    finally:
        close = getattr(pieces, "aclose", None)  # a generator: its request ends with it
        if close is not None:
            await close()
    parts.append(filtered.finish())
    return "".join(parts), thought


def _revision_note(spans: Sequence[Span]) -> str:
    details = ", ".join(dict.fromkeys(sp.text for sp in spans))
    return (
        f"(Check your draft: these details are in no excerpt: {details}. Answer again using "
        "only what the excerpts say, keep what they support, and cite them.)"
    )


def _counter_evidence(
    ctx: TurnContext, query: str, persona: Persona, result: RetrievalResult
) -> str:
    """Observations and contested beliefs that may cut against what the notes say."""
    widened = replace(persona, observations=True, contested=True, beliefs=True)
    counter = retrieve(ctx.memory, query, widened, k=1)
    contested = [b for b in counter.beliefs if b.status == "contested"]
    seen = {o.id for o in result.observations}
    observations = [o for o in counter.observations if o.id not in seen]
    blocks = [render_beliefs(contested), render_observations(observations, True)]
    text = "\n\n".join(b for b in blocks if b)
    return ("Counter-evidence to weigh before concluding:\n" + text) if text else ""
