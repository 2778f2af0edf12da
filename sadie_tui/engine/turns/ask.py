"""Ask: one question, one structured answer, through the persona's stages.

Stages (a persona runs a subset, in order): ``reframe`` (time words resolved into an
explicit window, filler dropped), ``retrieve``, ``counter`` (seek counter-evidence:
observations and contested beliefs that bear on the question), ``draft`` (the reasoner),
``ground_check`` (citation policing), ``revise`` (one more draft when citations failed the
check). Ask writes only telemetry — never a conversation, never memory.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from ..errors import ModelError
from ..events import CitationView
from ..prompt import (
    EMPTY_ASK,
    TONE,
    Briefing,
    build_briefing,
    render_beliefs,
    render_observations,
)
from ..reasoners.offline import OfflineReasoner
from ..reply.backing import Evidence, declines, evidence
from ..reply.citations import PolicedCitations
from ..reply.grounding import Grounded, match_sentences, needs_pass, own_citations, repair, settle
from ..reply.unsupported import Span
from ..retrieval import retrieve
from ..retrieval.timewords import parse_time_window, strip_time_words
from ..telemetry import record_turn
from ..wiki_pages import wiki_for
from .common import (
    Filtered,
    checked_details,
    citation_views,
    cited_chunk_ids,
    count_details,
    excerpt_order,
    excerpts_of,
    found_views,
    grounding_score,
    keep_rates,
    no_answer,
)
from .host import TurnHost

ABSTAIN = "Your memory does not hold enough to answer that, so I won't guess."
_OPINION = re.compile(r"^\s*OPINION:\s*", re.M)
_FILLER = re.compile(r"^(hey|hi|so|ok|okay|um|uh|please|sadie)[,!\s]+", re.I)


@dataclass
class AskResult:
    question: str
    answer: str
    citations: list[CitationView]
    persona: str
    abstained: bool
    grounding: dict[str, Any]
    stages: list[dict[str, Any]]
    reframed_question: str | None
    opinion: str | None
    emotion: str
    model: str
    offline: bool
    chunks_considered: int = 0
    latency_ms: float = 0.0
    notices: list[str] = field(default_factory=list)
    found_by_sadie: list[CitationView] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["found_by_sadie"] = [c.as_json() for c in self.found_by_sadie]
        data["citations"] = [c.as_json() for c in self.citations]
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


def grounding_report(
    policed: PolicedCitations, spans: Sequence[Span] = (), details: int = 0
) -> dict[str, Any]:
    counts = {"verbatim": 0, "paraphrase": 0, "inference": 0}
    for c in policed.citations:
        counts[c.support] = counts.get(c.support, 0) + 1
    return {
        "score": grounding_score(policed, len(spans), details),
        "unsupported": [sp.as_json() for sp in spans],
        "counts": counts,
        "dropped": len(policed.dropped),
        "dropped_reasons": [d.get("reason", "") for d in policed.dropped],
        "parse_error": policed.parse_error,
    }


async def run_ask(
    companion: TurnHost, question: str, persona_name: str | None = None
) -> AskResult:
    started = time.perf_counter()
    memory = companion.memory
    persona = companion.persona(persona_name, companion.settings.ask_persona)
    emotion = companion.emotions.choose(question).value
    stages: list[dict[str, Any]] = []
    notices: list[str] = []

    def stage(name: str, t0: float, note: str = "") -> None:
        stages.append(
            {"name": name, "ms": round((time.perf_counter() - t0) * 1000, 1), "note": note}
        )

    reasoner, notice = await companion.pick_reasoner()
    if notice:
        notices.append(notice)
    result_base: dict[str, Any] = dict(
        question=question,
        persona=persona.name,
        emotion=emotion,
        model=reasoner.model,
        offline=reasoner.offline,
    )
    if await asyncio.to_thread(memory.is_empty):
        return AskResult(
            answer=EMPTY_ASK,
            citations=[],
            abstained=True,
            grounding={
                "score": 0.0,
                "unsupported": [],
                "counts": {},
                "dropped": 0,
                "dropped_reasons": [],
                "parse_error": None,
            },
            stages=[],
            reframed_question=None,
            opinion=None,
            notices=notices,
            **result_base,
        )

    now = datetime.now()
    query = question
    reframed: str | None = None
    if "reframe" in persona.stages:
        t0 = time.perf_counter()
        reframed = reframe(question, now)
        query = _FILLER.sub("", question.strip()) or question
        stage("reframe", t0, reframed)

    t0 = time.perf_counter()
    result = await asyncio.to_thread(retrieve, memory, query, persona, now=now)
    notices.extend(result.notices)
    stage("retrieve", t0, f"{len(result.chunks)} chunks")

    extra: list[str] = []
    if "counter" in persona.stages:
        t0 = time.perf_counter()
        counter = await asyncio.to_thread(_counter_evidence, companion, query, persona, result)
        if counter:
            extra.append(counter)
        stage("counter", t0, "found" if counter else "none")

    briefing = await asyncio.to_thread(
        ask_briefing, memory, question, query, persona, result, emotion, extra
    )

    cap = companion.settings.citation_pass_timeout
    max_chars = companion.settings.reply_max_chars

    async def draft(
        messages: list[dict[str, str]] | None = None, *, required: bool = False
    ) -> tuple[Grounded, str | None]:
        text, thought = await _complete(reasoner, briefing, question, messages)
        filtered = Filtered(briefing, max_chars)
        visible = filtered.unecho(filtered.whole(text))
        if required and not visible.strip():
            # Only reasoning (an unclosed <think>): a model error, answered offline below.
            raise no_answer(filtered, reasoner, thought)
        tail = filtered.filter
        return own_citations(visible, tail.tail, tail.diverted, briefing.shown), filtered.cut(
            reasoner
        )

    async def checked(grounded: Grounded) -> tuple[list[Span], Evidence]:
        """The pass when the tail gave nothing, the citations backed, the details checked."""
        if needs_pass(reasoner, grounded):
            t0 = time.perf_counter()
            await repair(reasoner, briefing, grounded, cap=cap)
            stage("citation_pass", t0, "repaired" if grounded.repaired else grounded.pass_reason)
        settle(briefing, grounded)
        return _weigh(grounded, briefing, question, reasoner.offline)

    grounded = own_citations("", "", True, {})
    cut: str | None = None
    spans: list[Span] = []
    weight = Evidence((), 0, 0)
    try:
        t0 = time.perf_counter()
        grounded, cut = await draft(required=True)
        stage("draft", t0, f"{len(grounded.text)} chars, tail {grounded.tail}")
        t0 = time.perf_counter()
        report = grounding_report(grounded.policed)
        stage("ground_check", t0, f"score {report['score']}")
        spans, weight = await checked(grounded)
        if "revise" in persona.stages and not reasoner.offline and spans:
            # Only a draft with details no source holds is sent back; the revision is kept
            # only when it is better supported, and a refusal never replaces support.
            t0 = time.perf_counter()
            # The same briefing, byte for byte, then the draft and the feedback: the model's
            # prompt cache reuses the whole prefix.
            messages = [
                *briefing.messages,
                {"role": "assistant", "content": grounded.text},
                {"role": "user", "content": _revision_note(spans)},
            ]
            kept = "draft kept"
            try:
                second, cut2 = await draft(messages)
            except ModelError as exc:
                # A revision that fails never costs the draft its place.
                second, cut2 = own_citations("", "", True, {}), None
                kept = f"draft kept ({exc.one_line()})"
            if second.text.strip():
                spans2, weight2 = await checked(second)
                if _better(second, weight2, grounded, weight):
                    grounded, cut, spans, weight = second, cut2, spans2, weight2
                    kept = "revision kept"
            stage("revise", t0, f"{kept}; {len(spans)} unsupported")
    except ModelError as exc:
        notices.append(exc.one_line() + "; answering offline")
        reasoner = OfflineReasoner(exc.message)
        result_base.update(model=reasoner.model, offline=True)
        grounded, cut = await draft()
        stage("draft", time.perf_counter(), "offline fallback")
        settle(briefing, grounded)
        spans, weight = [], Evidence((), 0, 0)

    policed = grounded.policed
    answer, opinion = split_opinion(grounded.text)
    if answer != grounded.text:
        spans = [] if reasoner.offline else checked_details(answer, briefing, grounded)
    report = grounding_report(policed, spans, count_details(answer))
    report.update(
        repaired=grounded.repaired,
        tail=grounded.tail,
        citation_pass=grounded.pass_reason or ("ok" if grounded.repaired else None),
        cut=cut,
        evidence=list(weight.details),
        sentences_matched=weight.sentences,
    )
    grounded_citations = [c for c in policed.citations if c.support in ("verbatim", "paraphrase")]
    # Evidence sadie finds itself counts like a citation: a right answer whose citations were
    # lost (a cut pass, a tail the model never wrote) is not thrown away.
    abstained = not result.chunks or not (grounded_citations or weight.support)
    citations = list(citation_views(grounded, result))
    found = list(found_views(grounded, result))
    if abstained:
        answer = ABSTAIN
        citations = []
        report["unsupported"] = []
    latency = (time.perf_counter() - started) * 1000
    await asyncio.to_thread(
        _telemetry,
        companion,
        question,
        reasoner.model,
        persona.name,
        briefing.version,
        report["score"],
        abstained,
        latency,
        result,
        citations,
        report,
    )
    await asyncio.to_thread(keep_rates, reasoner)
    return AskResult(
        answer=answer,
        citations=citations,
        abstained=abstained,
        grounding=report,
        stages=stages,
        reframed_question=reframed,
        opinion=opinion,
        chunks_considered=len(result.chunks),
        latency_ms=round(latency, 1),
        notices=notices,
        found_by_sadie=[] if abstained else found,
        **result_base,
    )


def ask_briefing(
    memory: Any,
    question: str,
    query: str,
    persona: Any,
    result: Any,
    emotion: str,
    extra: Sequence[str] = (),
) -> Briefing:
    """The briefing of an ask turn (blocking: the soul summary and wiki pages are read)."""
    return build_briefing(
        message=question,
        excerpts=excerpts_of(result),
        excerpt_order=excerpt_order(result),
        beliefs=result.beliefs,
        observations=result.observations,
        observation_weight_high=persona.observation_weight > 1.0,
        soul=memory.soul(),
        voice=persona.voice,
        tone=TONE.get(emotion, ""),
        mode="ask",
        extra_blocks=extra,
        attached=wiki_for(memory, query),
    )


async def _complete(
    reasoner: Any, briefing: Any, question: str, messages: list[dict[str, str]] | None = None
) -> tuple[str, bool]:
    """The reply's content, and whether reasoning came in the separate thinking field."""
    parts: list[str] = []
    thought = False
    async for piece in reasoner.stream(briefing, question, messages=messages):
        if piece.kind == "content":
            parts.append(piece.text)
        elif piece.kind == "thinking":
            thought = True
    return "".join(parts), thought


def _weigh(
    grounded: Grounded, briefing: Any, question: str, offline: bool
) -> tuple[list[Span], Evidence]:
    """A settled reply's unsupported details, and the evidence sadie finds for it."""
    if offline:
        return [], Evidence((), 0, 0)
    spans = checked_details(grounded.text, briefing, grounded)
    texts = [e.render() for e in [*briefing.excerpts, *briefing.attached_excerpts()]]
    weight = evidence(
        grounded.text,
        texts,
        question,
        unsupported_count=len(spans),
        sentences=len(match_sentences(grounded.text, briefing.excerpts)),
    )
    return spans, weight


def _better(second: Grounded, w2: Evidence, first: Grounded, w1: Evidence) -> bool:
    """Whether a revision replaces its draft: better supported (fewer unsupported details, no
    less support), and never a refusal in place of a draft that had support."""
    first_support = w1.support + len(first.policed.citations)
    if declines(second.text) and first_support:
        return False
    return w2.better_than(w1)


def _revision_note(spans: Sequence[Span]) -> str:
    details = ", ".join(dict.fromkeys(sp.text for sp in spans))
    return (
        f"(Check your draft: these details are in no excerpt: {details}. Answer again using "
        "only what the excerpts say, keep what they support, and cite them.)"
    )


def _counter_evidence(companion: TurnHost, query: str, persona: Any, result: Any) -> str:
    """Observations and contested beliefs that may cut against what the notes say."""
    from dataclasses import replace

    widened = replace(persona, observations=True, contested=True, beliefs=True)
    counter = retrieve(companion.memory, query, widened, k=1)
    contested = [b for b in counter.beliefs if b.status == "contested"]
    seen = {o.id for o in result.observations}
    observations = [o for o in counter.observations if o.id not in seen]
    blocks = [render_beliefs(contested), render_observations(observations, True)]
    text = "\n\n".join(b for b in blocks if b)
    return ("Counter-evidence to weigh before concluding:\n" + text) if text else ""


def _telemetry(
    companion: TurnHost,
    question: str,
    model: str,
    persona: str,
    version: str,
    grounding: float,
    abstained: bool,
    latency: float,
    result: Any,
    citations: list[CitationView],
    report: dict[str, Any],
) -> None:
    record_turn(
        companion.memory.db,
        kind="ask",
        query=question,
        model=model,
        persona=persona,
        prompt_version=version,
        grounding=grounding,
        abstained=abstained,
        latency_ms=latency,
        chunks=result.chunks,
        cited_chunk_ids=cited_chunk_ids(result, citations),
        tail=report.get("tail"),
        repaired=report.get("repaired"),
        citation_pass=report.get("citation_pass"),
        unsupported=len(report.get("unsupported") or ()),
        cut=report.get("cut"),
    )
