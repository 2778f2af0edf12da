"""The retrieval pipeline: one question in, the persona's chunks (plus beliefs and observations) out.

1. The query: a chat follow-up (``followup.is_follow_up``) is retrieved together with the
   previous user turn; a time phrase (``timewords``) becomes a window and is taken out of the
   text the keyword and graph channels see; "the week before" shifts the previous window.
2. Channels, each a ranked list with its own score: vector (HNSW top hits), keyword (BM25 of
   every chunk from the persisted ``bm25s`` index) and graph (entities named in the query, one
   hop, from a cached mention index). The window's own best keyword hits join the candidates
   (all of its chunks when it holds few), and so do the neighbours of each channel's first
   hits.
3. The candidates' rows come back in one statement and their exact cosines from the keyword
   index's memory-mapped copy of the embeddings (the HNSW hits and the memory's state came in
   one statement before: each statement costs about a millisecond; every statement is
   ``store.search``'s, typed rows back); every candidate then gets
   every feature — cosine, BM25, the BM25 of its best two-sentence passage and of its
   episode's best chunk, graph score — and ``fusion.fuse`` weighs them by the persona's channel
   weights (``KEYWORD_PARTS`` shares the keyword weight among its three views). The
   per-channel scores in the result stay the channel's own: ``None`` when that channel did not
   return the chunk.
4. Rerank (``fusion``): neighbour spread; salience and recency (the persona's half-life; none
   for an "oldest first" question, ``recency``); then MMR (unless the persona turns it off)
   picks the persona's chunk count. A time window (which reaches ``RECORDED_WITHIN`` past its
   end: a day is often written about afterwards) is a filter: its chunks are chosen first, and
   only when it holds fewer than the chunk count do outside ones fill the rest, ranked after
   every inside one and marked ``in_window=False``. ``rank`` is that selection order. A window
   holding no episode at all narrows nothing and the result says ``window=None``; a persona's
   ``window_days`` is a hard limit unless it would leave nothing.
5. Beliefs and observations (``beliefs_observations``), for the personas that want them.

``retrieve`` writes nothing; callers record telemetry (``telemetry.record_turn``). Measured on
LoCoMo and timed at 10k/100k chunks by ``sadie eval locomo`` and ``bench/retrieval.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np

from ..store.search import (
    MemoryState,
    VectorHit,
    chunk_embeddings,
    chunk_texts,
    state_and_nearest,
)
from ..store.vectors import vector_literal
from . import fusion
from .beliefs_observations import BeliefHit, ObservationHit, search_side
from .followup import is_follow_up, shifted_window
from .graph import graph_index
from .keyword import (
    EpisodeInfo,
    KeywordIndex,
    keyword_index,
    query_concepts,
    query_tokens,
    take_notices,
    to_seconds,
    top_rows,
)
from .keyword.tokens import keyword_text, tokenize
from .recency import RELEVANT_SHARE, Recency, parse_recency, strip_recency
from .timewords import TimeWindow, parse_time_window, strip_time_words

if TYPE_CHECKING:
    from ..memory import Memory
    from ..personas import Persona

CHANNEL_DEPTH = 50  # hits asked of the keyword and graph channels (at least; more for a large k)
# Hits asked of the vector channel (at least; k for a large k). Its weight is the smallest, and
# in DuckDB's HNSW scan a deeper list costs more than the rest of the channel (at 100k chunks:
# 3.5 ms for 10, 4.1 for 20, 5.9 for 30 or 50). With all six LoCoMo conversations in one
# memory (381 chunks) depths 10, 20 and 50 score the same (recall@10 0.884, 0.884, 0.883).
VECTOR_DEPTH = 10
WINDOW_ALL = 60  # a window holding this many chunks or fewer: all of them are candidates
NEIGHBOURS_OF = 10  # the neighbours of each channel's first hits join the candidates
PASSAGES = 30  # candidates (best BM25 first) whose best passage is scored
# Notes about a day are often written in the days after it ("last night we…"): a window
# reaches this far past its end.
RECORDED_WITHIN = timedelta(days=3)

# Recency questions: chunks whose BM25 is at least this share of the best join the candidates
# (newest or oldest first), and a chunk whose final score is this share of the best counts as
# relevant when the newest (oldest) relevant ones are kept in the selection (``DATED_KEEP``).
DATED_SHARE = 0.5
DATED_KEEP = 3

# How the keyword channel's weight is shared between its three views of the text.
# ``title``: the share of the question's words in the episode's title ("Physio — knee check"
# is about the knee); constant on LoCoMo (every title names both speakers), so it changes
# nothing there.
KEYWORD_PARTS = {"keyword": 0.3, "passage": 0.55, "episode": 0.15, "title": 0.15}


@dataclass(frozen=True)
class RetrievedChunk:
    chunk_id: int
    episode_id: str
    ordinal: int
    title: str
    kind: str
    occurred_at: datetime
    text: str
    salience: float
    scores: Mapping[str, float | None]
    fused: float
    final: float
    rank: int
    # Inside the question's time window (None: the question named none). Outside notes only
    # fill in when the window holds fewer than the persona's chunk count, ranked below.
    in_window: bool | None = None
    # On the topic of a recency question: holds the most of its words (None: no recency).
    on_topic: bool | None = None


@dataclass(frozen=True)
class RetrievalResult:
    query: str
    effective_query: str
    chunks: tuple[RetrievedChunk, ...]
    beliefs: tuple[BeliefHit, ...]
    observations: tuple[ObservationHit, ...]
    window: TimeWindow | None
    elapsed_ms: float
    vector_used: bool
    notices: tuple[str, ...] = ()  # what the person should know (a damaged index rebuilt)
    recency: Recency | None = None  # "the last time", "when did I first": order by date


# --------------------------------------------------------------------------- candidates


@dataclass(frozen=True, slots=True)
class CandidateChunk:
    """What a candidate shows: its text from the database, its episode from the catalogue."""

    ordinal: int
    text: str
    occurred_at: datetime
    episode: EpisodeInfo


@dataclass
class Candidates:
    """Everything the ranking needs about the candidate chunks, aligned by position."""

    ids: list[int]
    chunks: list[CandidateChunk]
    features: dict[str, np.ndarray]
    found: dict[str, dict[int, float]]  # channel -> chunk id -> the channel's own score
    inside: np.ndarray  # in the query's time window
    next_index: np.ndarray
    prev_index: np.ndarray
    salience: np.ndarray
    age_days: np.ndarray
    channel_hits: dict[str, list[int]] = field(default_factory=dict)  # each channel's ranking
    windowed: bool = False  # the query's window holds notes: ``inside`` is a filter
    recency: Recency | None = None
    on_topic: np.ndarray | None = None  # a recency question's topical candidates (``_topical``)
    rows: np.ndarray | None = None  # each candidate's keyword-index row
    vectors: np.ndarray | None = None  # the keyword index's embeddings (by row), if it keeps them

    def embeddings(self, ids: Sequence[int]) -> np.ndarray | None:
        """Embeddings of candidate ``ids`` from the keyword index's copy (None: no copy)."""
        if self.vectors is None or self.rows is None:
            return None
        position = {c: i for i, c in enumerate(self.ids)}
        rows = self.rows[[position[int(c)] for c in ids]]
        return np.asarray(self.vectors[rows], dtype=np.float32).reshape(len(ids), -1)


@dataclass
class Prepared:
    query: str
    effective: str
    text_query: str
    window: TimeWindow | None
    vector: np.ndarray | None
    recency: Recency | None = None


def prepare_query(
    memory: Memory, query: str, *, now: datetime, previous: str | None, use_vector: bool
) -> Prepared:
    """The text each channel sees: time words out of the keyword/graph text, follow-ups joined."""
    query = query.strip()
    window = parse_time_window(query, now)
    text = strip_time_words(query, window) if window else query
    recency = parse_recency(text)
    text = strip_recency(text, recency)
    effective = query
    if previous and previous.strip() and is_follow_up(query):
        previous = previous.strip()
        before = parse_time_window(previous, now)
        shifted = shifted_window(before, query) if window is None else None
        if shifted is not None:
            text = strip_time_words(text, shifted)
        window = window or shifted or before
        earlier = strip_time_words(previous, before) if before else previous
        effective = f"{previous} {query}"
        text = f"{earlier} {text}".strip()
    vector = memory.embedder.encode_one(effective) if use_vector else None
    return Prepared(query, effective, text or effective, window, vector, recency)


def _window_mask(index: KeywordIndex, window: TimeWindow | None) -> np.ndarray | None:
    if window is None:
        return None
    when = index.catalogue.when
    mask = np.ones(index.size, dtype=bool)
    if window.start is not None:
        mask &= when >= to_seconds(window.start)
    if window.end is not None:
        mask &= when < to_seconds(window.end + RECORDED_WITHIN)
    return mask


def _topical(index: KeywordIndex, text: str, allowed: np.ndarray | None) -> np.ndarray | None:
    """Per row, whether it is on the question's topic: it holds as many of the question's
    words as any row does (a word counts in any of its forms). None when no row holds one."""
    held = index.coverage(query_concepts(text))
    if allowed is not None:
        held = np.where(allowed, held, 0)
    most = int(held.max()) if held.size else 0
    return held == most if most > 0 else None


def _dated_matches(
    index: KeywordIndex,
    bm: np.ndarray,
    recency: Recency,
    k: int,
    allowed: np.ndarray | None,
    on_topic: np.ndarray | None,
) -> list[int]:
    """The rows on the question's topic (else those matching its words at least
    ``DATED_SHARE`` as well as the best), newest (or oldest) first: ``k`` of them."""
    best = float(bm.max()) if bm.size else 0.0
    if best <= 0:
        return []
    mask = on_topic.copy() if on_topic is not None else bm >= DATED_SHARE * best
    if allowed is not None:
        mask &= allowed
    rows = np.flatnonzero(mask)
    when = index.catalogue.when[rows]
    order = np.argsort(-when if recency.order == "newest" else when, kind="stable")
    return [int(r) for r in rows[order[:k]]]


def _title_share(titles: Sequence[str], tokens: Sequence[str]) -> np.ndarray:
    """Per candidate, the share of the question's distinct tokens in its episode's title."""
    wanted = set(tokens)
    if not wanted:
        return np.zeros(len(titles))
    seen: dict[str, float] = {}
    out = np.zeros(len(titles))
    for i, title in enumerate(titles):
        if title not in seen:
            seen[title] = len(wanted & set(tokenize(title))) / len(wanted)
        out[i] = seen[title]
    return out


def state_and_vector_hits(
    memory: Memory, vector: np.ndarray | None, depth: int
) -> tuple[MemoryState, list[VectorHit]]:
    """The memory's state and the vector channel's ``depth`` hits, in one statement.

    An encrypted memory has no HNSW index (vss cannot keep one in an encrypted file): its hits
    come from the keyword index's copy of the embeddings, an exact scan in numpy (a few
    milliseconds at 10k chunks, where DuckDB's scan of the column takes a quarter second)."""
    if vector is not None and memory.db.encrypted:
        state, _ = state_and_nearest(memory.db, None, depth)
        hits = exact_hits(keyword_index(memory, state.signature), vector, depth)
        if hits is not None:
            return state, hits
    literal = vector_literal(vector) if vector is not None else None
    return state_and_nearest(memory.db, literal, depth)


def exact_hits(index: KeywordIndex, vector: np.ndarray, depth: int) -> list[VectorHit] | None:
    """The ``depth`` chunks nearest ``vector`` by cosine, best first, from the index's copy of
    the embeddings (None when it keeps none)."""
    sims = index.cosines(None, vector) if index.size else None
    if sims is None:
        return None
    top = np.argpartition(-sims, depth - 1)[:depth] if sims.size > depth else np.arange(sims.size)
    best = top[np.argsort(-sims[top], kind="stable")]
    ids = index.catalogue.chunk_ids
    return [VectorHit(int(ids[r]), float(sims[r])) for r in best]


def channel_depth(k: int) -> int:
    return max(CHANNEL_DEPTH, 3 * k)


def vector_depth(k: int) -> int:
    return max(VECTOR_DEPTH, k)


def gather(
    memory: Memory,
    prepared: Prepared,
    persona: Persona,
    *,
    k: int,
    now: datetime,
    state_hits: tuple[MemoryState, list[VectorHit]] | None = None,
) -> tuple[Candidates | None, TimeWindow | None]:
    """Run the channels and build the candidate features (None for an empty memory).

    ``state_hits``: what ``state_and_vector_hits`` answered for this query, when the caller
    already asked."""
    depth = channel_depth(k)
    state, vector_hits = state_hits or state_and_vector_hits(
        memory, prepared.vector, vector_depth(k)
    )
    index = keyword_index(memory, state.signature)
    if index.size == 0:
        return None, None
    catalogue = index.catalogue
    window = prepared.window
    in_window = _window_mask(index, window)
    if in_window is not None and not in_window.any():
        window, in_window = None, None  # the window holds nothing: do not narrow
    allowed = None
    if persona.window_days:
        allowed = catalogue.when >= to_seconds(now - timedelta(days=persona.window_days))
        if not allowed.any():
            allowed = None

    # Keyword: BM25 of every chunk at once; its best hits, and the window's.
    # Irregular verb forms only for "the last / first time": they widen a date-ordered pool
    # there; in general ("say" → "said") they add noise (LoCoMo recall@10 0.900 → 0.896).
    tokens = query_tokens(prepared.text_query, forms=prepared.recency is not None)
    bm = index.scores(tokens)
    keyword_hits = top_rows(bm, depth, allowed)
    rows: dict[int, None] = dict.fromkeys(r for r, _ in keyword_hits)
    if in_window is not None:
        mask = in_window if allowed is None else in_window & allowed
        inside_rows = np.flatnonzero(mask)
        if inside_rows.size <= WINDOW_ALL:
            rows.update(dict.fromkeys(int(r) for r in inside_rows))
        else:
            rows.update(dict.fromkeys(r for r, _ in top_rows(bm, depth, mask)))
            # The window's nearest by meaning too: it is a filter, so it must hold enough.
            near = (
                index.cosines(inside_rows, prepared.vector) if prepared.vector is not None else None
            )
            if near is not None:
                best = inside_rows[np.argsort(-near, kind="stable")[: vector_depth(k) + k]]
                rows.update(dict.fromkeys(int(r) for r in best))

    # "The last time…" / "when did I first…": the newest (oldest) chunks on the question's
    # topic (``_topical``), whatever their similarity rank.
    on_topic = None
    if prepared.recency is not None:
        on_topic = _topical(index, prepared.text_query, allowed)
        found_rows = _dated_matches(index, bm, prepared.recency, k, allowed, on_topic)
        rows.update(dict.fromkeys(found_rows))

    # Vector: the HNSW top hits (``state_and_vector_hits``).
    vector_rows = [int(r) for r in catalogue.rows_of([c for c, _ in vector_hits]) if r >= 0]
    rows.update(dict.fromkeys(vector_rows))

    # Graph: named entities and their neighbours, scored for every chunk from the cache.
    graph_all: np.ndarray | None = None
    graph_hits: list[tuple[int, float]] = []
    if persona.graph and persona.weights.get("graph", 0) > 0:
        graph = graph_index(memory.db, str(memory.home), index)
        seeds = graph.named_in(prepared.text_query)
        if seeds:
            graph_all = graph.scores(graph.expand(seeds.values()))
            graph_hits = top_rows(graph_all, depth, allowed)
            rows.update(dict.fromkeys(r for r, _ in graph_hits))

    # Neighbours of each channel's first hits: a thought cut by a chunk boundary.
    heads = [r for r, _ in keyword_hits[:NEIGHBOURS_OF]] + vector_rows[:NEIGHBOURS_OF]
    heads += [r for r, _ in graph_hits[:NEIGHBOURS_OF]]
    nxt, prv = catalogue.neighbour_rows(np.array(heads, dtype=np.int64))
    rows.update(dict.fromkeys(int(r) for r in np.r_[nxt, prv] if r >= 0))

    cand_rows = np.array(list(rows), dtype=np.int64)
    if allowed is not None:
        cand_rows = cand_rows[allowed[cand_rows]]
    if cand_rows.size == 0:
        return None, window
    ids = [int(i) for i in index.chunk_ids[cand_rows]]
    found_chunks, cosines = _fetch(memory, index, cand_rows, prepared.vector)
    keep = [i for i, cid in enumerate(ids) if cid in found_chunks]
    cand_rows, ids = cand_rows[keep], [ids[i] for i in keep]
    chunks = [found_chunks[cid] for cid in ids]

    # Every candidate gets every feature.
    keyword_scores = bm[cand_rows].astype(np.float64)
    passage = np.zeros(len(ids))
    with_terms = np.flatnonzero(keyword_scores > 0)
    if with_terms.size:
        best = with_terms[np.argsort(-keyword_scores[with_terms], kind="stable")][:PASSAGES]
        texts = [
            keyword_text(chunks[i].text, chunks[i].episode.title, chunks[i].episode.kind)
            for i in best
        ]
        passage[best] = index.bm25.passage_scores(texts, tokens)
    features: dict[str, np.ndarray] = {
        "keyword": keyword_scores,
        "passage": passage,
        "episode": catalogue.episode_max(bm, cand_rows).astype(np.float64),
        "graph": graph_all[cand_rows] if graph_all is not None else np.zeros(len(ids)),
        "title": _title_share([c.episode.title for c in chunks], tokens),
    }
    if cosines is not None:
        features["vector"] = np.array([cosines[c] for c in ids], dtype=np.float64)

    position = {int(r): i for i, r in enumerate(cand_rows)}
    nxt, prv = catalogue.neighbour_rows(cand_rows)
    found = {
        "vector": dict(vector_hits),
        "keyword": {int(index.chunk_ids[r]): s for r, s in keyword_hits},
        "graph": {int(index.chunk_ids[r]): s for r, s in graph_hits},
    }
    cands = Candidates(
        ids=ids,
        chunks=chunks,
        features=features,
        found=found,
        inside=(in_window[cand_rows] if in_window is not None else np.zeros(len(ids), dtype=bool)),
        next_index=np.array([position.get(int(r), -1) for r in nxt], dtype=np.int64),
        prev_index=np.array([position.get(int(r), -1) for r in prv], dtype=np.int64),
        salience=np.array([c.episode.salience for c in chunks], dtype=np.float64),
        age_days=(to_seconds(now) - catalogue.when[cand_rows]) / 86400.0,
        channel_hits={
            "vector": [c for c, _ in vector_hits],
            "keyword": [int(index.chunk_ids[r]) for r, _ in keyword_hits],
            "graph": [int(index.chunk_ids[r]) for r, _ in graph_hits],
        },
        rows=cand_rows,
        vectors=index.vectors,
        windowed=in_window is not None,
        recency=prepared.recency,
        on_topic=on_topic[cand_rows] if on_topic is not None else None,
    )
    return cands, window


def _fetch(
    memory: Memory, index: KeywordIndex, rows: np.ndarray, vector: np.ndarray | None
) -> tuple[dict[int, CandidateChunk], dict[int, float] | None]:
    """The candidates' text (episode details come from the index's catalogue) and exact cosine
    to the query, from the index's copy of the embeddings (read from the database only for an
    index built without one)."""
    ids = [int(i) for i in index.chunk_ids[rows]]
    texts = {found.chunk_id: found for found in chunk_texts(memory.db, ids)}
    catalogue = index.catalogue
    chunks: dict[int, CandidateChunk] = {}
    for cid, row in zip(ids, rows.tolist(), strict=True):
        found = texts.get(cid)
        if found is not None:
            chunks[cid] = CandidateChunk(
                found.ordinal, found.text, catalogue.occurred_at(row), catalogue.episode_of(row)
            )
    if vector is None:
        return chunks, None
    kept = index.cosines(rows, vector)
    if kept is None:
        kept = fetch_vectors(memory, ids) @ vector.astype(np.float32)
    return chunks, {
        cid: float(c) for cid, c in zip(ids, kept.tolist(), strict=True) if cid in chunks
    }


def _embeddings(memory: Memory, cands: Candidates, ids: Sequence[int]) -> np.ndarray:
    kept = cands.embeddings(ids)
    return kept if kept is not None else fetch_vectors(memory, ids)


def fetch_vectors(memory: Memory, ids: Sequence[int]) -> np.ndarray:
    """Embeddings of ``ids``, in that order (for the MMR rerank)."""
    return chunk_embeddings(memory.db, ids)


# --------------------------------------------------------------------------- ranking


def channel_weights(persona: Persona, vector_used: bool) -> dict[str, float]:
    """Feature weights from the persona's channel weights, scaled to sum to 1 (so fused scores
    run 0–1 whatever the persona's scale), the keyword weight shared among its three views."""
    w = dict(persona.weights)
    out = {part: w.get("keyword", 0.0) * share for part, share in KEYWORD_PARTS.items()}
    out["vector"] = w.get("vector", 0.0) if vector_used else 0.0
    out["graph"] = w.get("graph", 0.0) if persona.graph else 0.0
    total = sum(out.values())
    return {k: v / total for k, v in out.items()} if total > 0 else out


def rank(
    cands: Candidates,
    persona: Persona,
    k: int,
    *,
    vector_used: bool,
    vectors_of: Callable[[list[int]], np.ndarray] | None = None,
) -> tuple[list[int], np.ndarray, np.ndarray]:
    """(chosen candidate positions in rank order, fused scores, final scores).

    A time window is a filter: the chunks inside it are chosen first, and only when they are
    fewer than ``k`` do the best outside ones fill the rest, after every inside one. An
    "oldest first" question ("when did I first…") drops the persona's recency decay, so it
    cannot push the oldest note away. ``vectors_of`` gives chunk embeddings for the MMR pool;
    without it MMR is skipped.
    """
    fused = fusion.fuse(cands.features, channel_weights(persona, vector_used))
    spread = fusion.spread_to_neighbours(fused, cands.next_index, cands.prev_index)
    oldest = cands.recency is not None and cands.recency.order == "oldest"
    half_life = None if oldest else persona.half_life_days
    final = fusion.adjust(spread, cands.salience, cands.age_days, half_life)
    everyone = np.arange(len(cands.ids))
    if not cands.windowed or not cands.inside.any():
        return (
            _dated(cands, final, _select(cands, final, everyone, k, persona, vectors_of), k),
            fused,
            final,
        )
    inside = everyone[cands.inside]
    chosen = _dated(cands, final, _select(cands, final, inside, k, persona, vectors_of), k, inside)
    if len(chosen) < k:
        outside = everyone[~cands.inside]
        chosen += _select(cands, final, outside, k - len(chosen), persona, vectors_of)
    return chosen, fused, final


def _dated(
    cands: Candidates,
    final: np.ndarray,
    chosen: list[int],
    k: int,
    among: np.ndarray | None = None,
) -> list[int]:
    """For a recency question, the ``DATED_KEEP`` newest (oldest) relevant candidates are in
    the selection (in place of its last ones), and the relevant ones come first, newest
    (oldest) first: among the notes on the topic, "first" is the oldest. Relevant: on the
    topic (``_topical``), else scoring at least ``RELEVANT_SHARE`` of the best."""
    if cands.recency is None or not chosen:
        return chosen
    pool = np.arange(len(cands.ids)) if among is None else among
    by_topic = cands.on_topic is not None and bool(cands.on_topic[pool].any())
    if by_topic:
        assert cands.on_topic is not None
        relevant = pool[cands.on_topic[pool]]
    else:
        best = float(final[pool].max())
        relevant = pool[final[pool] >= RELEVANT_SHARE * best]
    when = -cands.age_days[relevant]  # larger is newer
    order = np.argsort(-when if cands.recency.order == "newest" else when, kind="stable")
    dated = [int(i) for i in relevant[order]]
    keep = dated[:DATED_KEEP]
    missing = [i for i in keep if i not in chosen]
    if missing:
        room = max(0, min(k, len(chosen) + len(missing)) - len(missing))
        chosen = [i for i in chosen if i not in missing][:room] + missing
    if not by_topic:
        return chosen  # no topic words to tell relevance by: the rank order stays
    picked = set(chosen)
    first = [i for i in dated if i in picked]
    placed = set(first)
    return first + [i for i in chosen if i not in placed]


def _select(
    cands: Candidates,
    final: np.ndarray,
    positions: np.ndarray,
    k: int,
    persona: Persona,
    vectors_of: Callable[[list[int]], np.ndarray] | None,
) -> list[int]:
    """``k`` of the candidates at ``positions``, by MMR when the persona uses it."""
    if positions.size == 0 or k <= 0:
        return []
    scores = final[positions]
    if persona.mmr is None or vectors_of is None:
        return [int(positions[j]) for j in fusion.mmr(scores, None, k, None)]
    pool = fusion.mmr_pool(scores, k)
    vectors = vectors_of([cands.ids[int(positions[j])] for j in pool])
    picked = fusion.mmr(scores[pool], vectors, k, persona.mmr)
    return [int(positions[pool[j]]) for j in picked]


def retrieve(
    memory: Memory,
    query: str,
    persona: Persona,
    *,
    k: int | None = None,
    now: datetime | None = None,
    previous: str | None = None,
    use_vector: bool = True,
) -> RetrievalResult:
    started = time.perf_counter()
    now = now or datetime.now()
    k = k or persona.chunks
    prepared = prepare_query(memory, query, now=now, previous=previous, use_vector=use_vector)
    state_hits = state_and_vector_hits(memory, prepared.vector, vector_depth(k))
    state = state_hits[0]
    cands, window = gather(memory, prepared, persona, k=k, now=now, state_hits=state_hits)
    chunks: tuple[RetrievedChunk, ...] = ()
    if cands is not None:
        chosen, fused, final = rank(
            cands,
            persona,
            k,
            vector_used=prepared.vector is not None,
            vectors_of=lambda ids: _embeddings(memory, cands, ids),
        )
        chunks = tuple(_chunk(cands, i, n + 1, fused, final) for n, i in enumerate(chosen))
        if not cands.windowed:
            chunks = tuple(replace(c, in_window=None) for c in chunks)
    beliefs, observations = search_side(
        memory,
        prepared.vector,
        prepared.text_query,
        persona,
        window,
        beliefs=state.beliefs,
        observations=state.observations,
        reach=RECORDED_WITHIN,
    )
    return RetrievalResult(
        query=query,
        effective_query=prepared.effective,
        chunks=chunks,
        beliefs=beliefs,
        observations=observations,
        window=window,
        elapsed_ms=(time.perf_counter() - started) * 1000,
        vector_used=prepared.vector is not None,
        notices=tuple(take_notices(memory.home)),
        recency=prepared.recency,
    )


def _chunk(
    c: Candidates, i: int, rank_no: int, fused: np.ndarray, final: np.ndarray
) -> RetrievedChunk:
    cid = c.ids[i]
    chunk = c.chunks[i]
    episode = chunk.episode
    return RetrievedChunk(
        chunk_id=cid,
        episode_id=episode.episode_id,
        ordinal=chunk.ordinal,
        title=episode.title,
        kind=episode.kind,
        occurred_at=chunk.occurred_at,
        text=chunk.text,
        salience=episode.salience,
        scores={name: c.found[name].get(cid) for name in ("vector", "keyword", "graph")},
        fused=round(float(fused[i]), 6),
        final=round(float(final[i]), 6),
        rank=rank_no,
        in_window=bool(c.inside[i]),
        on_topic=bool(c.on_topic[i]) if c.on_topic is not None else None,
    )
