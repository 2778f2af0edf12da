"""Beliefs and observations beside the chunks: derived conclusions and independent records.

Ranked by cosine against the query vector (or, while the model loads, by the share of the
query's words they contain), a few of each, one round trip for both. Contested beliefs only
for personas that ask for them; observations weighted by the persona's ``observation_weight``
and, when the query names a time window, those inside it first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ..ingest.embedder import vector_literal
from .keyword import STOPWORDS
from .timewords import TimeWindow

if TYPE_CHECKING:
    from ..memory import Memory
    from ..personas import Persona

SIDE_LIMIT = 5  # beliefs / observations returned
SIDE_FLOOR = 0.2  # below this score a belief or observation is not about the question


@dataclass(frozen=True)
class BeliefHit:
    id: str
    statement: str
    status: str
    confidence: float
    score: float


@dataclass(frozen=True)
class ObservationHit:
    id: str
    source: str
    observed_at: datetime
    text: str
    score: float


def _content_words(text: str) -> list[str]:
    words = [w for w in re.findall(r"\w{3,}", text.lower()) if w not in STOPWORDS]
    return list(dict.fromkeys(words))[:12]


class _Params:
    """Numbered parameters, so the query vector is bound (and parsed) once for both parts."""

    def __init__(self) -> None:
        self.values: list[Any] = []

    def add(self, value: Any) -> str:
        self.values.append(value)
        return f"${len(self.values)}"


def _score_sql(column: str, vector_ref: str | None, text: str, params: _Params) -> str:
    """Cosine to the query vector; without one, the share of the query's words in ``column``."""
    if vector_ref is not None:
        return f"1 - array_cosine_distance(embedding, {vector_ref}::FLOAT[384])"
    words = _content_words(text)
    if not words:
        return "0.0"
    parts = " + ".join(f"(lower({column}) LIKE {params.add(f'%{w}%')})::INT" for w in words)
    return f"({parts}) / {float(len(words))}"


def search_side(
    memory: Memory,
    vector: np.ndarray | None,
    text: str,
    persona: Persona,
    window: TimeWindow | None,
    *,
    beliefs: bool = True,
    observations: bool = True,
) -> tuple[tuple[BeliefHit, ...], tuple[ObservationHit, ...]]:
    """Beliefs and observations for the persona, in one round trip. ``beliefs`` /
    ``observations`` False: the memory has none, so that part is not asked for.

    Observations inside the query's time window come first; outside ones fill in when the
    window holds too few (a record from another week is still a record).
    """
    want_beliefs = persona.beliefs and beliefs
    want_observations = persona.observations and observations
    if not (want_beliefs or want_observations):
        return (), ()
    params = _Params()
    vector_ref = params.add(vector_literal(vector)) if vector is not None else None
    with_vector = vector is not None
    parts: list[str] = []
    if want_beliefs:
        score = _score_sql("statement", vector_ref, text, params)
        statuses = "('active', 'contested')" if persona.contested else "('active')"
        parts.append(
            f"(SELECT 'b', id::VARCHAR, statement, status, confidence, NULL::TIMESTAMP,"
            f" {score} AS s, 0 AS inside FROM beliefs WHERE status IN {statuses}"
            f"{' AND embedding IS NOT NULL' if with_vector else ''}"
            f" ORDER BY s DESC, id LIMIT {SIDE_LIMIT})"
        )
    if want_observations:
        score = _score_sql("text", vector_ref, text, params)
        inside = "0"
        if window is not None:
            conds = []
            if window.start is not None:
                conds.append(f"observed_at >= {params.add(window.start)}")
            if window.end is not None:
                conds.append(f"observed_at < {params.add(window.end)}")
            inside = f"({' AND '.join(conds)})::INT"
        parts.append(
            f"(SELECT 'o', id::VARCHAR, text, source, NULL::DOUBLE, observed_at,"
            f" ({score}) * {float(persona.observation_weight)} AS s, {inside} AS inside"
            f" FROM observations{' WHERE embedding IS NOT NULL' if with_vector else ''}"
            f" ORDER BY inside DESC, s DESC, id LIMIT {SIDE_LIMIT})"
        )
    rows = memory.db.fetchall(" UNION ALL ".join(parts), params.values or None)
    belief_hits: list[BeliefHit] = []
    observation_hits: list[ObservationHit] = []
    for kind, rid, body, other, confidence, when, s, _inside in rows:
        if s is None or float(s) < SIDE_FLOOR:
            continue
        if kind == "b":
            belief_hits.append(BeliefHit(rid, body, other, float(confidence), round(float(s), 6)))
        else:
            observation_hits.append(ObservationHit(rid, other, when, body, round(float(s), 6)))
    belief_hits.sort(key=lambda b: (-b.score, b.id))
    return tuple(belief_hits), tuple(observation_hits)
