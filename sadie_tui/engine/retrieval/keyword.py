"""The keyword channel: Okapi BM25 over chunk text with ``bm25s``, persisted beside the database.

Tokens are lower-cased words of two or more characters, English stop words removed, stemmed
with PyStemmer's English (Snowball) stemmer. The index lives in ``<home>/bm25/`` and is
loaded lazily on the first search; it remembers the chunk count and largest chunk id it was
built from, so a missing or stale index (an ingest by another process, a crash before the
rebuild) is rebuilt on the next search instead of answering from old text.

Besides BM25 itself the index keeps a small catalogue of every chunk, in episode and ordinal
order: its episode (id, title, kind, salience), its date and a memory-mapped copy of its
embedding. That lets the pipeline find a chunk's neighbours, score whole episodes, test a time
window, label results and compute candidates' cosines without asking the database.
``passage_scores`` scores the best two-sentence passage of a chunk with the same statistics, so
a chunk whose one sentence answers the question is not drowned by its other fifteen.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..ingest.embedder import arrow_matrix

if TYPE_CHECKING:
    from ..memory import Memory

INDEX_DIR = "bm25"
FORMAT = 6  # bump when tokenisation or the catalogue change: older indexes then rebuild
K1 = 1.2
B = 0.75
PASSAGE_SENTENCES = 2
EPOCH = datetime(1970, 1, 1)

_WORD = re.compile(r"(?u)\b\w\w+\b")
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
# A word (as ``_WORD``: runs of two or more word characters) or a sentence break.
_WORD_OR_BREAK = re.compile(r"(?u)\w\w+|(?<=[.!?…])\s|\n")

# Function words that carry no topic. Wider than Lucene's 33-word list: pronouns and auxiliaries
# dominate conversational notes and only add noise to BM25.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could couldn did didn do does doesn doing don
    down during each few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how if in into is isn it its itself let me more most mustn my myself
    no nor not of off on once only or other ought our ours ourselves out over own same shan she
    should shouldn so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was wasn we were weren what when where which
    while who whom why will with won would wouldn you your yours yourself yourselves ll ve re
    im ive id youre thats dont doesnt didnt isnt wasnt cant wont shes hes theyre weve youve
    theyve youll theyll arent werent hasnt havent hadnt wouldnt couldnt shouldnt
    """.split()
)


# Words that frame a question rather than name its subject ("what kind of", "how long",
# "would she likely"): dropped from queries only, since in notes they can carry meaning.
QUESTION_FRAME = frozenset("kind type sort many much long often likely might would ever".split())


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


_POSSESSIVE = re.compile(r"['’]s\b")
_APOSTROPHE = re.compile(r"['’]")


def _fold(text: str) -> str:
    """Lower case; "Ines's" → "ines", "don't" → "dont"."""
    return _APOSTROPHE.sub("", _POSSESSIVE.sub("", text.lower()))


def tokenize(text: str) -> list[str]:
    """Stemmed content words of ``text`` (the same function for documents and queries)."""
    text = _fold(text)
    words = [w for w in _WORD.findall(text) if w not in STOPWORDS]
    return list(_stemmer().stemWords(words)) if words else []


def query_tokens(text: str) -> list[str]:
    """``tokenize`` for a question: its framing words dropped too."""
    text = _fold(text)
    words = [w for w in _WORD.findall(text) if w not in STOPWORDS and w not in QUESTION_FRAME]
    return list(_stemmer().stemWords(words)) if words else []


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s.strip()]


def to_seconds(when: datetime) -> float:
    """Naive datetime as seconds since 1970 (the same reading as DuckDB's ``epoch()``)."""
    return (when - EPOCH).total_seconds()


@dataclass
class KeywordIndex:
    """A bm25s index over chunks plus their catalogue; row ``i`` is chunk ``chunk_ids[i]``.

    Rows are in episode, then ordinal order, so an episode's chunks are consecutive and
    ``episode_starts`` marks where each episode begins.
    """

    chunk_ids: np.ndarray  # int64[n]
    episode: np.ndarray  # int32[n], 0..episodes-1
    when: np.ndarray  # float64[n], the episode's occurred_at in epoch seconds
    retriever: Any  # bm25s.BM25, or None when nothing is indexed
    idf: np.ndarray  # float32[vocabulary], BM25 idf by token id
    passage_length: float  # mean tokens in a passage of PASSAGE_SENTENCES sentences
    signature: tuple[int, int]
    # Per episode code: its id, title, kind and salience (what a result shows, without a join).
    episode_ids: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    salience: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # float32[n, 384]: row i's embedding (memory-mapped once saved), or None when not kept.
    vectors: np.ndarray | None = None

    def __post_init__(self) -> None:
        self._order = np.argsort(self.chunk_ids, kind="stable")
        n = len(self.chunk_ids)
        starts = np.flatnonzero(np.r_[True, self.episode[1:] != self.episode[:-1]]) if n else []
        self.episode_starts = np.asarray(starts, dtype=np.int64)

    @property
    def size(self) -> int:
        return len(self.chunk_ids)

    def rows_of(self, ids: Sequence[int]) -> np.ndarray:
        """Row of each chunk id (-1 for ids not in the index)."""
        ids_arr = np.asarray(ids, dtype=np.int64)
        if self.size == 0 or ids_arr.size == 0:
            return np.full(ids_arr.shape, -1, dtype=np.int64)
        pos = np.searchsorted(self.chunk_ids, ids_arr, sorter=self._order)
        pos = np.minimum(pos, self.size - 1)
        rows = self._order[pos]
        return np.where(self.chunk_ids[rows] == ids_arr, rows, -1)

    def neighbour_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(next row, previous row) in the same episode, -1 where there is none."""
        rows = np.asarray(rows, dtype=np.int64)
        nxt = rows + 1
        prv = rows - 1
        ok_next = (rows >= 0) & (nxt < self.size)
        ok_next[ok_next] = self.episode[nxt[ok_next]] == self.episode[rows[ok_next]]
        ok_prev = (rows >= 0) & (prv >= 0)
        ok_prev[ok_prev] = self.episode[prv[ok_prev]] == self.episode[rows[ok_prev]]
        return np.where(ok_next, nxt, -1), np.where(ok_prev, prv, -1)

    def occurred_at(self, row: int) -> datetime:
        return EPOCH + timedelta(seconds=float(self.when[row]))

    def episode_of(self, row: int) -> tuple[str, str, str, float]:
        """(episode id, title, kind, salience) of a row's episode."""
        code = int(self.episode[row])
        if code >= len(self.episode_ids):
            return "", "", "", 0.5
        return (
            self.episode_ids[code],
            self.titles[code],
            self.kinds[code],
            float(self.salience[code]),
        )

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every row for the query tokens (zeros when none is indexed)."""
        if self.retriever is None or not tokens:
            return np.zeros(self.size, dtype=np.float32)
        ids = self.retriever.get_tokens_ids(list(tokens))
        if not ids:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self.retriever.get_scores_from_ids(ids), dtype=np.float32)

    def cosines(self, rows: np.ndarray, vector: np.ndarray) -> np.ndarray | None:
        """Cosine of ``rows``' embeddings to a normalised ``vector`` (None: none are kept)."""
        if self.vectors is None:
            return None
        return np.asarray(self.vectors[rows], dtype=np.float32) @ vector.astype(np.float32)

    def episode_max(self, scores: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Each row's best score within its episode (how much the whole episode is about it):
        of every row, or of ``rows`` only (then only their episodes are looked at)."""
        if self.size == 0:
            return np.zeros(0, dtype=np.float32)
        if rows is None:
            return np.maximum.reduceat(scores, self.episode_starts)[self.episode]
        episodes, where = np.unique(self.episode[rows], return_inverse=True)
        ends = np.r_[self.episode_starts[1:], self.size]
        best = [scores[self.episode_starts[e] : ends[e]].max() for e in episodes]
        return np.asarray(best, dtype=scores.dtype)[where]

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        """(chunk id, score) of the best ``limit`` chunks with a positive score."""
        scores = self.scores(query_tokens(query))
        return [(int(self.chunk_ids[r]), s) for r, s in top_rows(scores, limit)]

    def passage_scores(self, texts: Sequence[str], tokens: Sequence[str]) -> np.ndarray:
        """BM25 of each text's best run of PASSAGE_SENTENCES sentences, with corpus idf."""
        out = np.zeros(len(texts), dtype=np.float64)
        if self.retriever is None or not tokens:
            return out
        vocab = self.retriever.vocab_dict
        weights = {t: float(self.idf[vocab[t]]) for t in set(tokens) if t in vocab}
        if weights:
            avg = self.passage_length or 1.0
            for i, text in enumerate(texts):
                out[i] = best_passage(text, weights, avg)
        return out


def best_passage(
    text: str, weights: Mapping[str, float], avg_length: float, span: int = PASSAGE_SENTENCES
) -> float:
    """BM25 (idf from ``weights``) of the best run of ``span`` consecutive sentences.

    One pass over the text's words and sentence breaks (the breaks ``sentences`` splits at);
    sentences without a content word do not count."""
    lengths: list[int] = []
    hits: list[dict[str, int]] = []
    length, bag = 0, {}  # the current sentence's
    stems = _stems
    for token in _WORD_OR_BREAK.findall(_fold(text)):
        if token.isspace():
            if length:
                lengths.append(length)
                hits.append(bag)
                length, bag = 0, {}
            continue
        if token in STOPWORDS:
            continue
        length += 1
        stem = stems.get(token) or _stem(token)
        if stem in weights:
            bag[stem] = bag.get(stem, 0) + 1
    if length:
        lengths.append(length)
        hits.append(bag)
    span = max(1, min(span, len(lengths)))
    best = 0.0
    for j in range(len(lengths) - span + 1):
        window = hits[j : j + span]
        if not any(window):
            continue
        counts: dict[str, int] = {}
        for sentence in window:
            for t, c in sentence.items():
                counts[t] = counts.get(t, 0) + c
        norm = K1 * (1 - B + B * sum(lengths[j : j + span]) / avg_length)
        score = sum(weights[t] * c * (K1 + 1) / (c + norm) for t, c in counts.items())
        best = max(best, score)
    return best


_stems: dict[str, str] = {}


def _stem(word: str) -> str:
    stem = _stems.get(word)
    if stem is None:
        if len(_stems) > 200_000:
            _stems.clear()
        stem = _stems[word] = _stemmer().stemWord(word)
    return stem


def top_rows(
    scores: np.ndarray, limit: int, mask: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """(row, score) of the best ``limit`` positive scores (within ``mask``), best first."""
    if limit <= 0 or scores.size == 0:
        return []
    values = scores if mask is None else np.where(mask, scores, 0.0)
    if values.size > limit:
        part = np.argpartition(-values, limit - 1)[:limit]
    else:
        part = np.arange(values.size)
    part = part[values[part] > 0]
    order = part[np.lexsort((part, -values[part]))]
    return [(int(r), float(values[r])) for r in order]


def build_index(
    chunk_ids: Iterable[int],
    texts: Iterable[str],
    episodes: Iterable[str] | None = None,
    when: Iterable[float] | None = None,
    info: Mapping[str, tuple[str, str, float]] | None = None,
    vectors: np.ndarray | None = None,
) -> KeywordIndex:
    """An index over chunks given in episode/ordinal order (one episode each when not given);
    ``info`` maps an episode id to its (title, kind, salience); ``vectors``, the chunks'
    embeddings in the same order, to keep beside it."""
    import bm25s

    ids = np.fromiter(chunk_ids, dtype=np.int64)
    text_list = list(texts)
    n = len(ids)
    episode_keys = list(episodes) if episodes is not None else [str(i) for i in range(n)]
    codes: dict[str, int] = {}
    episode = np.array([codes.setdefault(e, len(codes)) for e in episode_keys], dtype=np.int32)
    times = np.fromiter(when, dtype=np.float64) if when is not None else np.zeros(n)
    details = [(info or {}).get(e, ("", "", 0.5)) for e in codes]
    catalogue = {
        "episode_ids": list(codes),
        "titles": [d[0] for d in details],
        "kinds": [d[1] for d in details],
        "salience": np.array([d[2] for d in details], dtype=np.float64),
    }
    corpus = [tokenize(t) for t in text_list]
    signature = (n, int(ids.max()) if n else 0)
    sentence_count = sum(max(1, len(sentences(t))) for t in text_list)
    tokens_total = sum(len(c) for c in corpus)
    per_sentence = tokens_total / sentence_count if sentence_count else 0.0
    passage_length = per_sentence * PASSAGE_SENTENCES
    retriever = None
    idf = np.zeros(0, np.float32)
    if any(corpus):
        retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
        retriever.index(corpus, show_progress=False)
        idf = _idf(retriever, n)
    return KeywordIndex(
        ids, episode, times, retriever, idf, passage_length, signature, **catalogue, vectors=vectors
    )


def _idf(retriever: Any, n: int) -> np.ndarray:
    """Lucene idf per token id, from the document frequencies in the score matrix."""
    indptr = np.asarray(retriever.scores["indptr"])
    df = np.diff(indptr).astype(np.float64)
    return np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)


# --------------------------------------------------------------------------- persistence

_cache: dict[str, KeywordIndex] = {}
_cache_lock = threading.Lock()
_build_lock = threading.Lock()


def index_dir(home: Path) -> Path:
    return Path(home) / INDEX_DIR


# What the index was built from: the chunk count and the largest chunk id.
SIGNATURE_SQL = "count(*), coalesce(max(id), 0)"


def _signature(memory: Memory) -> tuple[int, int]:
    row = memory.db.fetchone(f"SELECT {SIGNATURE_SQL} FROM chunks")
    return (int(row[0]), int(row[1])) if row else (0, 0)


def _save(index: KeywordIndex, folder: Path) -> None:
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    np.save(tmp / "chunk_ids.npy", index.chunk_ids)
    np.save(tmp / "episode.npy", index.episode)
    np.save(tmp / "when.npy", index.when)
    np.save(tmp / "idf.npy", index.idf)
    if index.retriever is not None:
        index.retriever.save(str(tmp), show_progress=False)
    np.save(tmp / "salience.npy", index.salience)
    if index.vectors is not None:
        np.save(tmp / "vectors.npy", np.asarray(index.vectors, dtype=np.float32))
    episodes = {"ids": index.episode_ids, "titles": index.titles, "kinds": index.kinds}
    (tmp / "episodes.json").write_text(json.dumps(episodes), encoding="utf-8")
    meta = {
        "format": FORMAT,
        "count": index.signature[0],
        "max_id": index.signature[1],
        "passage_length": index.passage_length,
    }
    (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)


def _load(folder: Path) -> KeywordIndex | None:
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            return None
        retriever = None
        if (folder / "params.index.json").is_file():
            import bm25s

            retriever = bm25s.BM25.load(str(folder), show_progress=False)
        episodes = json.loads((folder / "episodes.json").read_text(encoding="utf-8"))
        vectors = np.load(folder / "vectors.npy", mmap_mode="r")
        if vectors.shape[0] != int(meta["count"]):
            return None
        return KeywordIndex(
            np.load(folder / "chunk_ids.npy"),
            np.load(folder / "episode.npy"),
            np.load(folder / "when.npy"),
            retriever,
            np.load(folder / "idf.npy"),
            float(meta["passage_length"]),
            (int(meta["count"]), int(meta["max_id"])),
            episode_ids=list(episodes["ids"]),
            titles=list(episodes["titles"]),
            kinds=list(episodes["kinds"]),
            salience=np.load(folder / "salience.npy"),
            vectors=vectors,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def rebuild_keyword_index(memory: Memory) -> KeywordIndex:
    """Build the index from every chunk and persist it (best effort on a read-only home)."""
    with _build_lock:
        with memory.db.lock:
            table = memory.db.execute(
                "SELECT c.id, c.text, c.episode_id::VARCHAR AS episode, epoch(e.occurred_at) AS at,"
                " e.title, e.kind, e.salience, c.embedding"
                " FROM chunks c JOIN episodes e ON e.id = c.episode_id"
                " ORDER BY e.occurred_at, c.episode_id, c.ordinal"
            ).to_arrow_table()
        names = ("id", "text", "episode", "at", "title", "kind", "salience")
        columns = {name: table.column(name).to_pylist() for name in names}
        details = zip(
            columns["episode"], columns["title"], columns["kind"], columns["salience"], strict=True
        )
        index = build_index(
            columns["id"],
            columns["text"],
            columns["episode"],
            (float(t) for t in columns["at"]),
            {episode: (title, kind, float(salience)) for episode, title, kind, salience in details},
            vectors=arrow_matrix(table.column("embedding")),
        )
        if not memory.db.read_only:
            try:
                _save(index, index_dir(memory.home))
            except OSError:
                pass  # the in-memory index still serves; the next process rebuilds it
        with _cache_lock:
            _cache[str(memory.home)] = index
    return index


def keyword_index(memory: Memory, signature: tuple[int, int] | None = None) -> KeywordIndex:
    """The current index for ``memory``: cached, else loaded, else rebuilt if stale or missing.

    ``signature``: the chunks' ``SIGNATURE_SQL`` when the caller just read it."""
    signature = signature or _signature(memory)
    key = str(memory.home)
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None and cached.signature == signature:
        return cached
    loaded = _load(index_dir(memory.home))
    if loaded is not None and loaded.signature == signature:
        with _cache_lock:
            _cache[key] = loaded
        return loaded
    return rebuild_keyword_index(memory)


def forget_cached(home: Path) -> None:
    """Drop the in-process copy (tests, and a home that was deleted)."""
    with _cache_lock:
        _cache.pop(str(home), None)
