"""Retrieval: vector, keyword and graph channels, fused and reranked per persona.

``retrieve`` is the entry point; the channel modules and ``fusion`` are usable on their own.
"""

from .pipeline import (
    BeliefHit,
    ObservationHit,
    RetrievalResult,
    RetrievedChunk,
    is_follow_up,
    retrieve,
)
from .timewords import TimeWindow, parse_time_window, strip_time_words

__all__ = [
    "BeliefHit",
    "ObservationHit",
    "RetrievalResult",
    "RetrievedChunk",
    "TimeWindow",
    "is_follow_up",
    "parse_time_window",
    "retrieve",
    "strip_time_words",
]
