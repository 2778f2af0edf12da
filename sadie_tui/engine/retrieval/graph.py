"""The graph channel: entities named in the query, one hop over co-occurrence edges and links.

A chunk scores for each entity it mentions: the entity's weight (1 for one named in the query;
for a neighbour, ``HOP_WEIGHT`` times its edge weight relative to the seed's strongest edge,
the ``HOP_FANOUT`` strongest neighbours only) × its rarity, ``ln(1 + chunks / chunks mentioning
it)``, × ``1 + ln(mentions in the chunk)``. Rarity matters: in a person's notes their partner's
name is everywhere and says little, while "Lisbon" picks out a handful of chunks.

A vault adds pages and links: a query names an entity by its name or an alias its page gives
("Ana" for ``People/Ana Ribeiro.md``); every chunk of the entity's page counts as a mention of
it; and the notes one link away from the page (linked from it, or linking to it) score as a
hop, ``HOP_WEIGHT`` × their rarity, for an entity named in the query.

The mentions and edges are read once into a ``GraphIndex`` (numpy arrays aligned with the
keyword index's rows) and cached per memory until the chunks change, so a query costs no
database round trip: at 100k chunks a name mentioned everywhere is a 100k-element ``add.at``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..store.search import (
    Mentions,
    alias_ids,
    entity_ids,
    entity_mentions,
    entity_page_chunks,
    linked_note_chunks,
    strongest_edges,
)

if TYPE_CHECKING:
    from ..store.db import Database
    from .keyword import KeywordIndex

HOP_WEIGHT = 0.25
HOP_FANOUT = 5  # neighbours kept per named entity, strongest edges first
MAX_WORDS = 6

_WORDS = re.compile(r"[\w-]+")


@dataclass
class GraphIndex:
    """One memory's graph, read once: what the channel scores a query against."""

    ids: dict[str, int]  # entity key -> entity id
    longest: int  # words in the longest key or alias
    mentions: dict[int, tuple[np.ndarray, np.ndarray]]  # entity id -> (rows, counts)
    neighbours: dict[int, list[tuple[int, float]]]  # entity id -> [(dst, weight / max)]
    size: int  # chunks in the memory
    signature: tuple[int, int]
    aliases: dict[str, int] = field(default_factory=dict)  # alias key -> entity id
    linked: dict[int, np.ndarray] = field(default_factory=dict)  # entity id -> rows a link away

    def named_in(self, query: str) -> dict[str, int]:
        """Known entities named in ``query``: whole words, case-insensitive (as the extractor).
        An alias names its entity under the entity's own key."""
        words = _WORDS.findall(query.casefold())
        keys = {i: k for k, i in self.ids.items()} if self.aliases else {}
        found: dict[str, int] = {}
        for n in range(1, min(self.longest, MAX_WORDS) + 1):
            for i in range(len(words) - n + 1):
                key = " ".join(words[i : i + n])
                if key in self.ids:
                    found[key] = self.ids[key]
                if key in self.aliases:
                    target = self.aliases[key]
                    found[keys.get(target, key)] = target
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
        for entity, weight in weights.items():
            linked = self.linked.get(entity)
            if weight >= 1.0 and linked is not None and len(linked):
                out[linked] += HOP_WEIGHT * weight * np.log1p(self.size / len(linked))
        return out


def _by_entity(found: Mentions, index: KeywordIndex) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Entity id → (rows, counts), rows following ``index``'s chunk rows (``found`` sorted by
    entity; chunks the index does not hold left out)."""
    rows = index.catalogue.rows_of(found.chunk_ids)
    keep = rows >= 0
    entity, rows, counts = found.entity_ids[keep], rows[keep], found.counts[keep]
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if len(entity):
        starts = np.flatnonzero(np.r_[True, entity[1:] != entity[:-1]])
        ends = np.r_[starts[1:], len(entity)]
        for a, b in zip(starts, ends, strict=True):
            out[int(entity[a])] = (rows[a:b], counts[a:b])
    return out


def build_graph(db: Database, index: KeywordIndex) -> GraphIndex:
    """Read entities, aliases, mentions, pages, links and edges; rows follow ``index``'s."""
    ids = entity_ids(db)
    aliases = alias_ids(db)
    longest = max((len(k.split()) for k in [*ids, *aliases]), default=0)
    mentions = _by_entity(entity_mentions(db), index)
    # A page's chunks are about its entity: mentions of it (count 1) where not already.
    for entity, (rows, _counts) in _by_entity(entity_page_chunks(db), index).items():
        have_rows, have_counts = mentions.get(entity, (rows[:0], rows[:0].astype(np.float64)))
        extra = np.setdiff1d(rows, have_rows)
        mentions[entity] = (np.r_[have_rows, extra], np.r_[have_counts, np.ones(len(extra))])
    linked = {e: rows for e, (rows, _c) in _by_entity(linked_note_chunks(db), index).items()}
    neighbours: dict[int, list[tuple[int, float]]] = {}
    for edge in strongest_edges(db, HOP_FANOUT):
        neighbours.setdefault(edge.src, []).append((edge.dst, edge.relative))
    return GraphIndex(
        ids, longest, mentions, neighbours, index.size, index.signature, aliases, linked
    )


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
