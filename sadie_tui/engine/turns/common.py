"""What both turns share that is not the reply's checking (``reply.check`` owns that): the
milliseconds of each step, the excerpts as the reasoner sees them, the chunks a reply cited
and the model's measured rate."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..prompt import Excerpt
from ..retrieval.recency import by_date

if TYPE_CHECKING:
    from ..events import CitationView
    from ..reasoners.base import Reasoner
    from ..retrieval import RetrievalResult


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


def cited_chunk_ids(result: RetrievalResult, views: Sequence[CitationView]) -> list[int]:
    """Retrieved chunks whose episode a surviving citation names (telemetry's ``cited``)."""
    cited = {v.episode_id.lower() for v in views}
    return [c.chunk_id for c in result.chunks if c.episode_id.lower() in cited]


def tokens_per_second(reasoner: Reasoner, tokens: int, seconds: float) -> float:
    """The model's own rate (``eval_count / eval_duration``) when it reports one; else the
    pieces over the whole generation (which counts the wait for the first token)."""
    count = getattr(reasoner, "last_eval_count", 0)
    eval_seconds = getattr(reasoner, "last_eval_seconds", 0.0)
    if count and eval_seconds > 0:
        return round(count / eval_seconds, 1)
    return round(tokens / max(seconds, 1e-6), 1)
