"""Fusion and reranking as pure functions over candidate arrays.

Every function takes numpy arrays aligned with one list of candidate chunks and returns a new
array (or an order); nothing here touches the database. The pipeline runs them in this order:

1. ``normalise`` each feature to 0–1 over the candidates (min–max);
2. ``fuse``: a weighted sum of the normalised features (the persona's channel weights);
3. ``spread_to_neighbours``: a chunk inherits a share of its successor's and predecessor's
   score in the same episode (a thought often starts at the end of one chunk and goes on in
   the next);
4. ``adjust``: episode salience and recency (the persona's half-life);
5. ``mmr``: maximal-marginal-relevance selection for diversity (the pipeline runs it over the
   chunks inside the query's time window first: the window is a filter, not a boost).

Min–max weighted score fusion, not reciprocal rank fusion: on LoCoMo, equal-weight RRF of BM25
and MiniLM loses to BM25 alone (it throws away how far ahead the best keyword match is), while
normalised score fusion beats both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

# Share of the next / previous chunk's score a chunk inherits (same episode only).
FORWARD = 0.6
BACKWARD = 0.3
# Salience 0..1 (0.5 neutral) moves a score by up to ±SALIENCE_SPAN / 2.
SALIENCE_SPAN = 0.2
# With a half-life, this share of the score decays with age; the rest is kept whatever the age.
RECENCY_SHARE = 0.3


def normalise(values: np.ndarray) -> np.ndarray:
    """Min–max to 0–1; a constant (or empty) feature carries no information and becomes 0."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    lo, hi = float(values.min()), float(values.max())
    if hi - lo <= 1e-12:
        return np.zeros_like(values)
    return (values - lo) / (hi - lo)


def fuse(features: Mapping[str, np.ndarray], weights: Mapping[str, float]) -> np.ndarray:
    """Weighted sum of the min–max normalised features (features without a weight are ignored)."""
    total: np.ndarray | None = None
    for name, weight in weights.items():
        if not weight or name not in features:
            continue
        part = weight * normalise(features[name])
        total = part if total is None else total + part
    if total is None:
        size = len(next(iter(features.values()))) if features else 0
        return np.zeros(size)
    return total


def rrf(
    ranks: Mapping[str, np.ndarray], weights: Mapping[str, float], k: float = 60.0
) -> np.ndarray:
    """Weighted reciprocal rank fusion (ranks 1-based, 0 = not found); kept for comparison."""
    total: np.ndarray | None = None
    for name, weight in weights.items():
        if not weight or name not in ranks:
            continue
        r = np.asarray(ranks[name], dtype=np.float64)
        part = np.where(r > 0, weight / (k + r), 0.0)
        total = part if total is None else total + part
    return total if total is not None else np.zeros(0)


def spread_to_neighbours(
    scores: np.ndarray,
    next_index: np.ndarray,
    prev_index: np.ndarray,
    forward: float = FORWARD,
    backward: float = BACKWARD,
) -> np.ndarray:
    """``max(own, forward·next, backward·prev)``; index -1 means no neighbour among candidates."""
    scores = np.asarray(scores, dtype=np.float64)
    nxt = np.where(next_index >= 0, scores[np.maximum(next_index, 0)], 0.0)
    prv = np.where(prev_index >= 0, scores[np.maximum(prev_index, 0)], 0.0)
    return np.asarray(np.maximum(scores, np.maximum(forward * nxt, backward * prv)))


def adjust(
    scores: np.ndarray,
    salience: np.ndarray,
    age_days: np.ndarray,
    half_life_days: float | None,
    *,
    salience_span: float = SALIENCE_SPAN,
    recency_share: float = RECENCY_SHARE,
) -> np.ndarray:
    """Scale by salience (0.5 neutral) and, with a half-life, by recency (future ages count 0)."""
    scores = np.asarray(scores, dtype=np.float64)
    factor = 1.0 + salience_span * (np.clip(np.asarray(salience, dtype=np.float64), 0, 1) - 0.5)
    if half_life_days and half_life_days > 0:
        age = np.maximum(np.asarray(age_days, dtype=np.float64), 0.0)
        decay = np.power(0.5, age / half_life_days)
        factor = factor * ((1.0 - recency_share) + recency_share * decay)
    return scores * factor


def mmr_pool(scores: np.ndarray, k: int) -> list[int]:
    """The head of the ranking MMR may pick from (in practice nothing deeper gets picked)."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    return [int(i) for i in order[: max(3 * k, 30)]]


def mmr(
    scores: np.ndarray,
    vectors: np.ndarray | None,
    k: int,
    lam: float | None,
) -> list[int]:
    """Indices of ``k`` candidates chosen by maximal marginal relevance.

    ``lam`` trades relevance (1.0) against novelty; None or 1.0 (or no vectors) is plain
    ranking by score. Relevance is the score scaled to 0–1 so ``lam`` means the same whatever
    the score range. Ties go to the earlier candidate.
    """
    scores = np.asarray(scores, dtype=np.float64)
    n = scores.size
    k = min(k, n)
    order = np.argsort(-scores, kind="stable")
    if lam is None or lam >= 1.0 or vectors is None or k <= 1:
        return [int(i) for i in order[:k]]
    rel = normalise(scores)
    pool = mmr_pool(scores, k)
    vecs = np.asarray(vectors, dtype=np.float64)
    chosen: list[int] = []
    best_sim = np.full(len(pool), -1.0)
    while pool and len(chosen) < k:
        values = lam * rel[pool] - (1.0 - lam) * np.maximum(best_sim, 0.0) if chosen else rel[pool]
        j = int(np.argmax(values))
        pick = pool.pop(j)
        best_sim = np.delete(best_sim, j)
        chosen.append(pick)
        if pool:
            sims = vecs[pool] @ vecs[pick]
            best_sim = np.maximum(best_sim, sims)
    return chosen


def ranks_of(ids: Sequence[int], hits: Sequence[int]) -> np.ndarray:
    """1-based rank of each id in ``hits`` (0 when absent), aligned with ``ids``."""
    where = {h: i + 1 for i, h in enumerate(hits)}
    return np.array([where.get(i, 0) for i in ids], dtype=np.int64)
