"""The keyword channel: Okapi BM25 over chunk text with ``bm25s``, persisted beside the database.

Tokens are lower-cased words of two or more characters, English stop words removed, stemmed
with PyStemmer's English (Snowball) stemmer. The index lives in ``<home>/bm25/`` and is
loaded lazily on the first search; it remembers the chunk count and largest chunk id it was
built from, so a missing or stale index (an ingest by another process, a crash before the
rebuild) is rebuilt on the next search instead of answering from old text.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..memory import Memory

INDEX_DIR = "bm25"
FORMAT = 1  # bump when tokenisation changes: older indexes then rebuild themselves
K1 = 1.2
B = 0.75

_WORD = re.compile(r"(?u)\b\w\w+\b")

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
    im ive id youre thats dont doesnt didnt isnt wasnt cant wont
    """.split()
)


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def tokenize(text: str) -> list[str]:
    """Stemmed content words of ``text`` (the same function for documents and queries)."""
    words = [w for w in _WORD.findall(text.lower().replace("’", "'").replace("'", "")) if w not in STOPWORDS]
    return list(_stemmer().stemWords(words)) if words else []


@dataclass
class KeywordIndex:
    """A bm25s index over chunks; row ``i`` of the index is chunk ``chunk_ids[i]``."""

    chunk_ids: np.ndarray
    retriever: Any  # bm25s.BM25, or None for an empty memory
    signature: tuple[int, int]

    @property
    def size(self) -> int:
        return len(self.chunk_ids)

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every chunk for the query tokens (zeros when none is indexed)."""
        if self.retriever is None or not tokens:
            return np.zeros(self.size, dtype=np.float32)
        ids = self.retriever.get_tokens_ids(list(tokens))
        if not ids:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self.retriever.get_scores_from_ids(ids), dtype=np.float32)

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        """(chunk id, score) of the best ``limit`` chunks with a positive score."""
        scores = self.scores(tokenize(query))
        return top_positive(self.chunk_ids, scores, limit)


def top_positive(ids: np.ndarray, scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    if limit <= 0 or scores.size == 0:
        return []
    if scores.size > limit:
        part = np.argpartition(-scores, limit - 1)[:limit]
    else:
        part = np.arange(scores.size)
    order = part[np.lexsort((ids[part], -scores[part]))]
    return [(int(ids[i]), float(scores[i])) for i in order if scores[i] > 0]


def build_index(chunk_ids: Iterable[int], texts: Iterable[str]) -> KeywordIndex:
    import bm25s

    ids = np.fromiter(chunk_ids, dtype=np.int64)
    corpus = [tokenize(t) for t in texts]
    signature = (len(ids), int(ids.max()) if len(ids) else 0)
    if not any(corpus):
        return KeywordIndex(ids, None, signature)
    retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
    retriever.index(corpus, show_progress=False)
    return KeywordIndex(ids, retriever, signature)


# --------------------------------------------------------------------------- persistence

_cache: dict[str, KeywordIndex] = {}
_cache_lock = threading.Lock()


def index_dir(home: Path) -> Path:
    return Path(home) / INDEX_DIR


def _signature(memory: Memory) -> tuple[int, int]:
    row = memory.db.fetchone("SELECT count(*), coalesce(max(id), 0) FROM chunks")
    return (int(row[0]), int(row[1])) if row else (0, 0)


def _save(index: KeywordIndex, folder: Path) -> None:
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    np.save(tmp / "chunk_ids.npy", index.chunk_ids)
    if index.retriever is not None:
        index.retriever.save(str(tmp), show_progress=False)
    meta = {"format": FORMAT, "count": index.signature[0], "max_id": index.signature[1]}
    (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)


def _load(folder: Path) -> KeywordIndex | None:
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            return None
        ids = np.load(folder / "chunk_ids.npy")
        retriever = None
        if (folder / "params.index.json").is_file():
            import bm25s

            retriever = bm25s.BM25.load(str(folder), show_progress=False, verbosity=0)
        return KeywordIndex(ids, retriever, (int(meta["count"]), int(meta["max_id"])))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def rebuild_keyword_index(memory: Memory) -> KeywordIndex:
    """Build the index from every chunk and persist it (best effort on a read-only home)."""
    rows = memory.db.fetchall("SELECT id, text FROM chunks ORDER BY id")
    index = build_index((r[0] for r in rows), (r[1] for r in rows))
    if not memory.db.read_only:
        try:
            _save(index, index_dir(memory.home))
        except OSError:
            pass  # the in-memory index still serves; the next process rebuilds it
    with _cache_lock:
        _cache[str(memory.home)] = index
    return index


def keyword_index(memory: Memory) -> KeywordIndex:
    """The current index for ``memory``: cached, else loaded, else rebuilt if stale or missing."""
    signature = _signature(memory)
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
