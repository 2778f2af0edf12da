"""The JSON shape of one search, shared by `sadie search --json` and `GET /v1/search`."""

from __future__ import annotations

from typing import Any

from .pipeline import RetrievalResult


def result_json(result: RetrievalResult, persona: str, turn_id: str | None) -> dict[str, Any]:
    """Every chunk with its channel scores, fused and final score and rank; beliefs and
    observations with theirs; the time window the query named (``in_window`` says, per chunk
    and observation, whether it is inside it: ``false`` ones only fill in when the window holds
    too few; ``null`` when the query named no window) and its recency intent."""
    window = result.window
    return {
        "query": result.query,
        "effective_query": result.effective_query,
        "persona": persona,
        "window": None
        if window is None
        else {
            "start": window.start.isoformat() if window.start else None,
            "end": window.end.isoformat() if window.end else None,
            "phrase": window.phrase,
        },
        "recency": None
        if result.recency is None
        else {"order": result.recency.order, "phrase": result.recency.phrase},
        "elapsed_ms": round(result.elapsed_ms, 1),
        "vector_used": result.vector_used,
        "turn_id": turn_id,
        "notices": list(result.notices),
        "chunks": [
            {
                "rank": c.rank,
                "chunk_id": c.chunk_id,
                "episode_id": c.episode_id,
                "title": c.title,
                "kind": c.kind,
                "date": c.occurred_at.date().isoformat(),
                "text": c.text,
                "scores": dict(c.scores),
                "fused": c.fused,
                "final": c.final,
                "in_window": c.in_window,
            }
            for c in result.chunks
        ],
        "beliefs": [
            {
                "id": b.id,
                "statement": b.statement,
                "status": b.status,
                "confidence": b.confidence,
                "score": b.score,
                "in_window": b.in_window,
            }
            for b in result.beliefs
        ],
        "observations": [
            {
                "id": o.id,
                "source": o.source,
                "observed_at": o.observed_at.isoformat(),
                "text": o.text,
                "score": o.score,
                "in_window": o.in_window,
            }
            for o in result.observations
        ],
    }
