"""Beliefs and observations beside the chunks: derived conclusions and independent records.

Ranked by cosine against the query vector (or, while the model loads, by the share of the
query's words they contain), a few of each, one round trip for both. Contested beliefs only
for personas that ask for them; observations weighted by the persona's ``observation_weight``
and, when the query names a time window, those inside it first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np

from ..store.search import side_rows
from ..store.vectors import vector_literal
from .keyword.tokens import STOPWORDS
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
    in_window: bool | None = None  # an evidence episode is inside the question's window


@dataclass(frozen=True)
class ObservationHit:
    id: str
    source: str
    observed_at: datetime
    text: str
    score: float
    in_window: bool | None = None  # inside the question's time window (None: it named none)


def _content_words(text: str) -> list[str]:
    words = [w for w in re.findall(r"\w{3,}", text.lower()) if w not in STOPWORDS]
    return list(dict.fromkeys(words))[:12]


def _inside(when: datetime, window: TimeWindow | None) -> bool | None:
    if window is None:
        return None
    return (window.start is None or when >= window.start) and (
        window.end is None or when < window.end
    )


def search_side(
    memory: Memory,
    vector: np.ndarray | None,
    text: str,
    persona: Persona,
    window: TimeWindow | None,
    *,
    beliefs: bool = True,
    observations: bool = True,
    reach: timedelta = timedelta(0),
) -> tuple[tuple[BeliefHit, ...], tuple[ObservationHit, ...]]:
    """Beliefs and observations for the persona, in one round trip. ``beliefs`` /
    ``observations`` False: the memory has none, so that part is not asked for.

    Observations inside the query's time window come first, and so do beliefs with an
    evidence episode inside it (``reach`` past its end, like the chunks); outside ones fill in
    when the window holds too few (a record from another week is still a record), marked
    ``in_window=False``.
    """
    want_beliefs = persona.beliefs and beliefs
    want_observations = persona.observations and observations
    if not (want_beliefs or want_observations):
        return (), ()
    rows = side_rows(
        memory.db,
        vector_literal(vector) if vector is not None else None,
        _content_words(text) if vector is None else (),
        beliefs=want_beliefs,
        contested=persona.contested,
        observations=want_observations,
        observation_weight=persona.observation_weight,
        window=(window.start, window.end) if window is not None else None,
        limit=SIDE_LIMIT,
        evidence_window=(window.start, window.end + reach if window.end else None)
        if window is not None
        else None,
    )
    belief_hits: list[BeliefHit] = []
    observation_hits: list[ObservationHit] = []
    for row in rows:
        if row.score is None or float(row.score) < SIDE_FLOOR:
            continue
        score = round(float(row.score), 6)
        if row.kind == "b":
            belief_hits.append(
                BeliefHit(
                    row.id,
                    row.body,
                    row.other,
                    float(row.confidence or 0),
                    score,
                    None if window is None else bool(row.inside),
                )
            )
        else:
            assert row.observed_at is not None
            observation_hits.append(
                ObservationHit(
                    row.id,
                    row.other,
                    row.observed_at,
                    row.body,
                    score,
                    _inside(row.observed_at, window),
                )
            )
    belief_hits.sort(key=lambda b: (b.in_window is False, -b.score, b.id))
    return tuple(belief_hits), tuple(observation_hits)
