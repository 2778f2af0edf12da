"""The graph channel: entities named in the query, one hop over co-occurrence edges.

A chunk scores for each entity it mentions: the entity's weight (1 for one named in the query;
for a neighbour, ``HOP_WEIGHT`` times its edge weight relative to the seed's strongest edge,
the ``HOP_FANOUT`` strongest neighbours only) × its rarity, ``ln(1 + chunks / chunks mentioning
it)``, × ``1 + ln(mentions in the chunk)``. Rarity matters: in a person's notes their partner's
name is everywhere and says little, while "Lisbon" picks out a handful of chunks.

The mentions and edges are read once into a ``GraphIndex`` (numpy arrays aligned with the
keyword index's rows) and cached per memory until the chunks change, so a query costs no
database round trip: at 100k chunks a name mentioned everywhere is a 100k-element ``add.at``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..store.search import entity_ids, entity_mentions, strongest_edges

if TYPE_CHECKING:
    from ..store.db import Database
    from .keyword import KeywordIndex

HOP_WEIGHT = 0.25
HOP_FANOUT = 5  # neighbours kept per named entity, strongest edges first
MAX_WORDS = 6

_WORDS = re.compile(r"[\w-]+")


@dataclass
class GraphIndex:
    ids: dict[str, int]  # entity key -> entity id
    longest: int  # words in the longest key
    mentions: dict[int, tuple[np.ndarray, np.ndarray]]  # entity id -> (rows, counts)
    neighbours: dict[int, list[tuple[int, float]]]  # entity id -> [(dst, weight / max)]
    size: int  # chunks in the memory
    signature: tuple[int, int]

    def named_in(self, query: str) -> dict[str, int]:
        """Known entities named in ``query``: whole words, case-insensitive (as the extractor)."""
        words = _WORDS.findall(query.casefold())
        found: dict[str, int] = {}
        for n in range(1, min(self.longest, MAX_WORDS) + 1):
            for i in range(len(words) - n + 1):
                key = " ".join(words[i : i + n])
                if key in self.ids:
                    found[key] = self.ids[key]
        return found

    def expand(self, seeds: Iterable[int], hop_weight: float = HOP_WEIGHT) -> dict[int, float]:
        """Entity weights: 1 for each seed, ``hop_weight`` × relative edge weight one hop out."""
        weights = {int(s): 1.0 for s in seeds}
        if hop_weight > 0:
            for seed in list(weights):
                for dst, rel in self.neighbours.get(seed, []):
                    if dst not in weights or weights[dst] < 1.0:
                        weights[dst] = max(weights.get(dst, 0.0), hop_weight * rel)
        return weights

    def scores(self, weights: Mapping[int, float]) -> np.ndarray:
        """Score of every chunk row for the weighted entities."""
        out = np.zeros(self.size, dtype=np.float64)
        for entity, weight in weights.items():
            found = self.mentions.get(entity)
            if found is None or not len(found[0]):
                continue
            rows, counts = found
            idf = np.log1p(self.size / len(rows))
            # rows are unique within one entity, so a plain fancy-index add is exact (and fast)
            out[rows] += weight * idf * (1.0 + np.log(np.maximum(counts, 1)))
        return out


def build_graph(db: Database, index: KeywordIndex) -> GraphIndex:
    """Read entities, mentions and edges; mention rows follow ``index``'s chunk rows."""
    ids = entity_ids(db)
    longest = max((len(k.split()) for k in ids), default=0)
    found = entity_mentions(db)
    rows = index.catalogue.rows_of(found.chunk_ids)
    keep = rows >= 0
    entity, rows, counts = found.entity_ids[keep], rows[keep], found.counts[keep]
    mentions: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if len(entity):
        starts = np.flatnonzero(np.r_[True, entity[1:] != entity[:-1]])
        ends = np.r_[starts[1:], len(entity)]
        for a, b in zip(starts, ends, strict=True):
            mentions[int(entity[a])] = (rows[a:b], counts[a:b])
    neighbours: dict[int, list[tuple[int, float]]] = {}
    for edge in strongest_edges(db, HOP_FANOUT):
        neighbours.setdefault(edge.src, []).append((edge.dst, edge.relative))
    return GraphIndex(ids, longest, mentions, neighbours, index.size, index.signature)


_cache: dict[str, GraphIndex] = {}
_lock = threading.Lock()


def graph_index(db: Database, cache_key: str, index: KeywordIndex) -> GraphIndex:
    """The cached graph of a memory, rebuilt when its chunks (the index signature) change."""
    with _lock:
        hit = _cache.get(cache_key)
    if hit is not None and hit.signature == index.signature:
        return hit
    graph = build_graph(db, index)
    with _lock:
        _cache[cache_key] = graph
    return graph


def forget_cached(cache_key: str) -> None:
    with _lock:
        _cache.pop(cache_key, None)
