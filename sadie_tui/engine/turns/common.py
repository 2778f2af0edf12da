"""What both turns share once the model has answered: the reply passed through the stream
filter and the reply guard, the citations as screens show them, the grounding score, and
the sources the unsupported-details check compares against."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..errors import ModelNoAnswer
from ..events import CitationView
from ..prompt import Attached, Briefing, Excerpt
from ..reply.backing import moved, narrow_sources
from ..reply.guard import ReplyGuard
from ..reply.near_echo import NearEchoes
from ..reply.stream_filter import StreamFilter
from ..reply.unsupported import Span, find_details, unsupported_within
from ..retrieval.recency import by_date

if TYPE_CHECKING:
    from ..reasoners.base import Reasoner
    from ..reply.citations import PolicedCitations
    from ..reply.grounding import Grounded
    from ..retrieval import RetrievalResult

SUPPORT_WEIGHTS = {"verbatim": 1.0, "paraphrase": 0.6, "inference": 0.3}
# The most a reply scores when its answer is not established by what it cites.
DOUBTED = 0.5


class Steps:
    """Milliseconds spent in each named step before the model is asked (kept in the reply's
    metadata as ``steps_ms``, so ``bench/engine.py`` and a curious person can see where the
    time between Enter and the request goes)."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            spent = (time.perf_counter() - started) * 1000
            self.ms[name] = round(self.ms.get(name, 0.0) + spent, 2)


def excerpts_of(result: RetrievalResult) -> list[Excerpt]:
    """The chunks as the reasoner sees them: in rank order, or by date (newest or oldest
    first) when the question asks for the last or first time; notes outside the question's
    time window always after the ones inside, their headers saying so."""
    outside = result.window.phrase if result.window is not None else ""
    chunks = by_date(result.chunks, result.recency)
    return [
        Excerpt(
            c.episode_id,
            c.occurred_at.strftime("%Y-%m-%d"),
            c.title,
            c.text,
            outside if c.in_window is False else "",
        )
        for c in chunks
    ]


def excerpt_order(result: RetrievalResult) -> str:
    return result.recency.order if result.recency is not None else ""


class Filtered:
    """The stream filter then the reply guard, fed piece by piece (chat) or all at once (ask)."""

    def __init__(self, briefing: Briefing, max_chars: int) -> None:
        self.filter = StreamFilter()
        self._instructions = briefing.instructions()
        self.guard = ReplyGuard(self._instructions, max_chars=max_chars)
        self.near_echoes: list[str] = []  # the sentences ``unecho`` took out
        self._prose_done = False

    def unecho(self, text: str) -> str:
        """The finished ``text`` without the instruction sentences the model wrote back in
        other words (``near_echo``)."""
        kept, self.near_echoes = NearEchoes(self._instructions).strip(text)
        return kept

    @property
    def echoes(self) -> int:
        """How many echoes were kept from the screen: word for word, or in other words."""
        return len(self.guard.dropped) + len(self.near_echoes)

    def feed(self, piece: str) -> str:
        shown = self.guard.feed(self.filter.feed(piece))
        if self.filter.diverted and not self._prose_done and not self.guard.stopped:
            # The citations marker ends the prose: what the guard still holds shows now, not
            # after the tail has streamed (no visible text can follow the marker).
            self._prose_done = True
            shown += self.guard.finish()
        return shown

    @property
    def prose_done(self) -> bool:
        """The citations marker was seen: the visible reply is complete, the tail streams."""
        return self._prose_done

    def finish(self) -> str:
        if self.guard.stopped:
            return ""
        rest = self.filter.finish()
        if self._prose_done:
            return ""
        self._prose_done = True
        return self.guard.feed(rest) + self.guard.finish()

    def whole(self, text: str) -> str:
        visible = self.feed(text)
        return visible + self.finish()

    def cut(self, reasoner: Reasoner) -> str | None:
        """Why the reply was cut short: the guard's reason, or the model's token cap."""
        if self.guard.stopped:
            return self.guard.stopped
        return "tokens" if getattr(reasoner, "last_done_reason", "") == "length" else None


def no_answer(filtered: Filtered, reasoner: Reasoner, thought: bool) -> ModelNoAnswer:
    """The error for a reply that shows nothing once filtered (``thought``: reasoning came in
    the model's separate thinking field)."""
    out_of_tokens = getattr(reasoner, "last_done_reason", "") == "length"
    if thought or filtered.filter.saw_thinking:
        message = "the model only reasoned and gave no answer"
        if filtered.filter.thinking:
            message += " (its <think> block never closed)"
    elif filtered.echoes:
        # More tokens would only be more echoes: the model is not following its briefing.
        return ModelNoAnswer(
            "the model only wrote its instructions back", fix="ask again, or try another model"
        )
    else:
        message = "the model's reply had nothing to show"
    if out_of_tokens:
        return ModelNoAnswer(
            message + ": it ran out of tokens", fix="raise reply_tokens in config.toml"
        )
    return ModelNoAnswer(message, fix="ask again, or try another model")


def _titles(
    result: RetrievalResult, attached: Sequence[Attached] = ()
) -> dict[str, tuple[str, str]]:
    titles = {
        c.episode_id.lower(): (c.title, c.occurred_at.strftime("%Y-%m-%d")) for c in result.chunks
    }
    for item in attached:
        if item.excerpt is not None:
            key = item.excerpt.episode_id.lower()
            titles.setdefault(key, (item.excerpt.title, item.excerpt.date))
    return titles


def citation_views(
    grounded: Grounded, result: RetrievalResult, attached: Sequence[Attached] = ()
) -> tuple[CitationView, ...]:
    """The validated citations with the title and date of the episode each one names, the
    sentence each backs and that sentence's details the cited note does not hold."""
    titles = _titles(result, attached)
    backed = grounded.backed
    views = []
    for n, c in enumerate(grounded.policed.citations):
        backs, unbacked = "", tuple[str, ...]()
        if backed is not None and n < len(backed.sentences):
            start, end = backed.sentences[n]
            backs, unbacked = grounded.text[start:end], backed.unbacked[n]
        views.append(
            CitationView(
                c.episode_id,
                c.quote,
                c.support,
                c.claimed,
                *titles.get(c.episode_id.lower(), ("", "")),
                backs=backs,
                unbacked=unbacked,
                doubt=c.doubt,
            )
        )
    return tuple(views)


def checked_details(final_text: str, briefing: Briefing, grounded: Grounded) -> list[Span]:
    """The reply's unsupported details: in a sentence a citation backs, a detail must be in
    that citation's note or the person's message; elsewhere, anywhere in the briefing."""
    narrow: list[tuple[int, int, list[str]]] = []
    if grounded.backed is not None:
        narrow = moved(
            narrow_sources(grounded.backed, briefing.shown, briefing.headers(), briefing.own_words),
            grounded.text,
            final_text,
        )
    return unsupported_within(final_text, briefing_sources(briefing), narrow)


def found_views(
    grounded: Grounded, result: RetrievalResult, attached: Sequence[Attached] = ()
) -> tuple[CitationView, ...]:
    """sadie's own sentence matches, labelled ``found by sadie`` (never the model's)."""
    titles = _titles(result, attached)
    return tuple(
        CitationView(
            m.episode_id,
            m.quote,
            "verbatim" if m.verbatim else "paraphrase",
            "",
            *titles.get(m.episode_id.lower(), ("", "")),
            origin="sadie",
        )
        for m in grounded.found or ()
    )


def cited_chunk_ids(result: RetrievalResult, views: Sequence[CitationView]) -> list[int]:
    """Retrieved chunks whose episode a surviving citation names (telemetry's ``cited``)."""
    cited = {v.episode_id.lower() for v in views}
    return [c.chunk_id for c in result.chunks if c.episode_id.lower() in cited]


def grounding_score(
    policed: PolicedCitations, unsupported: int = 0, details: int = 0, *, doubt: bool = False
) -> float:
    """Weighted share of the model's citations that establish the sentence they back —
    verbatim 1, paraphrase 0.6, inference 0.3; a citation the claim check doubts
    (``reply.claims``) and a dropped one 0; 0 when the model cited nothing — times the share
    of the reply's checkable details (numbers, times, dates, amounts, names) found in a
    source; at most ``DOUBTED`` when the answer's claim is not established (``doubt``: the
    person reads that before the answer)."""
    total = len(policed.citations) + len(policed.dropped)
    if total == 0:
        return 0.0
    score = (
        sum(SUPPORT_WEIGHTS.get(c.support, 0.0) for c in policed.citations if not c.doubt) / total
    )
    if details > 0:
        score *= 1 - min(unsupported, details) / details
    if doubt:
        score = min(score, DOUBTED)
    return round(score, 3)


def briefing_sources(briefing: Briefing) -> list[str]:
    """Everything the model was told: excerpts with their headers, beliefs, observations,
    chips, the soul summary, recent messages and the person's own message."""
    return [m["content"] for m in briefing.messages]


def count_details(text: str) -> int:
    return len(find_details(text))


def tokens_per_second(reasoner: Reasoner, tokens: int, seconds: float) -> float:
    """The model's own rate (``eval_count / eval_duration``) when it reports one; else the
    pieces over the whole generation (which counts the wait for the first token)."""
    count = getattr(reasoner, "last_eval_count", 0)
    eval_seconds = getattr(reasoner, "last_eval_seconds", 0.0)
    if count and eval_seconds > 0:
        return round(count / eval_seconds, 1)
    return round(tokens / max(seconds, 1e-6), 1)


def keep_rates(reasoner: Reasoner) -> None:
    """Write the model's measured rates beside the memory (blocking: call it in a thread)."""
    rates = getattr(reasoner, "rates", None)
    if rates is not None:
        rates.save()
