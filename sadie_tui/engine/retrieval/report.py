"""One search as the faces see it: ``Search``, the shape of `sadie search --json` and
``GET /v1/search``, declared once (its JSON, a remote session's decoding and the OpenAPI
schema are derived from it by ``wire``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from ..jsonvalue import JSONObject
from ..wire import dump
from .beliefs_observations import BeliefHit, ObservationHit
from .pipeline import RetrievalResult, RetrievedChunk
from .recency import Recency
from .timewords import TimeWindow


@dataclass(frozen=True)
class SearchChunk:
    """One retrieved chunk with every channel's score, its fused and final score and rank.
    ``in_window``: inside the time window the query named (``false`` ones only fill in when
    the window holds too few; ``null`` when the query named no window)."""

    rank: int
    chunk_id: int
    episode_id: str
    title: str
    kind: str
    date: date
    text: str
    scores: dict[str, float | None]
    fused: float
    final: float
    in_window: bool | None

    @classmethod
    def of(cls, chunk: RetrievedChunk) -> SearchChunk:
        """The chunk as a search shows it."""
        return cls(
            rank=chunk.rank,
            chunk_id=chunk.chunk_id,
            episode_id=chunk.episode_id,
            title=chunk.title,
            kind=chunk.kind,
            date=chunk.occurred_at.date(),
            text=chunk.text,
            scores=dict(chunk.scores),
            fused=chunk.fused,
            final=chunk.final,
            in_window=chunk.in_window,
        )


@dataclass(frozen=True)
class Search:
    """The chunks, beliefs and observations retrieval picked for one query, with the time
    window the query named and its recency intent; ``turn_id`` is the telemetry row (``None``
    on a read-only memory)."""

    query: str
    effective_query: str
    persona: str
    window: TimeWindow | None
    recency: Recency | None
    elapsed_ms: float
    vector_used: bool
    turn_id: str | None
    notices: tuple[str, ...]
    chunks: tuple[SearchChunk, ...]
    beliefs: tuple[BeliefHit, ...]
    observations: tuple[ObservationHit, ...]

    def as_json(self) -> JSONObject:
        """Its JSON (``wire``): `sadie search --json` and ``GET /v1/search``."""
        data: JSONObject = dump(self)
        return data


def search_report(result: RetrievalResult, persona: str, turn_id: str | None) -> Search:
    """``result`` as a search shows it (the time taken to a tenth of a millisecond)."""
    return Search(
        query=result.query,
        effective_query=result.effective_query,
        persona=persona,
        window=result.window,
        recency=result.recency,
        elapsed_ms=round(result.elapsed_ms, 1),
        vector_used=result.vector_used,
        turn_id=turn_id,
        notices=tuple(result.notices),
        chunks=tuple(SearchChunk.of(c) for c in result.chunks),
        beliefs=tuple(result.beliefs),
        observations=tuple(result.observations),
    )
