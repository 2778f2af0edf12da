"""Fusion, neighbour spread, window boost, salience/recency and MMR as pure functions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sadie_tui.engine.retrieval import fusion


def test_normalise_min_max_and_constant() -> None:
    assert fusion.normalise(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert fusion.normalise(np.array([5.0, 5.0])).tolist() == [0.0, 0.0]
    assert fusion.normalise(np.array([])).tolist() == []


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40))
def test_normalise_stays_in_unit_range_and_keeps_order(values: list[float]) -> None:
    out = fusion.normalise(np.array(values))
    assert ((out >= 0) & (out <= 1)).all()
    for i in range(len(values)):
        for j in range(len(values)):
            if values[i] < values[j]:
                assert out[i] <= out[j]


def test_fuse_weighs_normalised_features() -> None:
    features = {
        "keyword": np.array([10.0, 0.0, 5.0]),
        "vector": np.array([0.2, 0.6, 0.4]),
        "graph": np.array([0.0, 0.0, 0.0]),  # constant: carries nothing
    }
    out = fusion.fuse(features, {"keyword": 0.7, "vector": 0.3, "graph": 0.5})
    assert out == pytest.approx([0.7, 0.3, 0.35 + 0.15])
    # A channel without weight or without a feature is ignored.
    assert fusion.fuse(features, {"keyword": 1.0, "missing": 2.0}).tolist() == [1.0, 0.0, 0.5]
    assert fusion.fuse(features, {}).tolist() == [0.0, 0.0, 0.0]


def test_rrf_weighted() -> None:
    ranks = {"keyword": np.array([1, 0, 2]), "vector": np.array([2, 1, 0])}
    out = fusion.rrf(ranks, {"keyword": 1.0, "vector": 0.5}, k=60)
    assert out == pytest.approx([1 / 61 + 0.5 / 62, 0.5 / 61, 1 / 62])


def test_ranks_of() -> None:
    assert fusion.ranks_of([7, 8, 9], [9, 7]).tolist() == [2, 0, 1]


def test_spread_to_neighbours() -> None:
    scores = np.array([0.1, 1.0, 0.2, 0.5])
    nxt = np.array([1, 2, -1, -1])  # 0→1→2 one episode; 3 alone
    prv = np.array([-1, 0, 1, -1])
    out = fusion.spread_to_neighbours(scores, nxt, prv, forward=0.6, backward=0.3)
    # chunk 0 inherits 0.6 of its successor; chunk 2 0.3 of its predecessor; 3 keeps its own.
    assert out == pytest.approx([0.6, 1.0, 0.3, 0.5])


def test_adjust_salience_and_recency() -> None:
    scores = np.array([1.0, 1.0, 1.0, 1.0])
    salience = np.array([0.5, 1.0, 0.0, 0.5])
    age = np.array([0.0, 0.0, 0.0, 30.0])
    no_decay = fusion.adjust(scores, salience, age, None, salience_span=0.2)
    assert no_decay == pytest.approx([1.0, 1.1, 0.9, 1.0])
    decayed = fusion.adjust(scores, salience, age, 30.0, salience_span=0.2, recency_share=0.3)
    # one half-life old: 0.7 + 0.3 · 0.5
    assert decayed == pytest.approx([1.0, 1.1, 0.9, 0.85])
    future = fusion.adjust(np.array([1.0]), np.array([0.5]), np.array([-10.0]), 30.0)
    assert future == pytest.approx([1.0])


def test_mmr_without_lambda_is_plain_ranking() -> None:
    scores = np.array([0.2, 0.9, 0.5, 0.9])
    assert fusion.mmr(scores, None, 3, None) == [1, 3, 2]
    assert fusion.mmr(scores, np.eye(4), 2, 1.0) == [1, 3]


def test_mmr_prefers_novelty() -> None:
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    scores = np.array([1.0, 0.95, 0.6])
    # Pure relevance takes the near-duplicate; MMR takes the different one second.
    assert fusion.mmr(scores, vectors, 2, None) == [0, 1]
    assert fusion.mmr(scores, vectors, 2, 0.5) == [0, 2]
    assert fusion.mmr(scores, vectors, 5, 0.5) == [0, 2, 1]


@given(st.lists(st.floats(0, 1), min_size=1, max_size=25), st.integers(1, 12), st.floats(0.0, 1.0))
def test_mmr_returns_distinct_indices(values: list[float], k: int, lam: float) -> None:
    rng = np.random.default_rng(len(values))
    vectors = rng.normal(size=(len(values), 4))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chosen = fusion.mmr(np.array(values), vectors, k, lam)
    assert len(chosen) == min(k, len(values))
    assert len(set(chosen)) == len(chosen)
    assert chosen[0] == int(np.argmax(values))
