"""The keyword index: BM25, the chunk catalogue and a copy of the chunks' embeddings, together.

The three share row numbers (row ``i`` is chunk ``catalogue.chunk_ids[i]``) and the signature of
the chunks they were built from (their count and largest id), by which a stale index is found.
The embeddings copy (memory-mapped once saved) gives candidates' exact cosines without asking
the database.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .bm25 import Bm25, build_bm25, top_rows
from .catalogue import Catalogue, build_catalogue
from .tokens import query_tokens


@dataclass
class KeywordIndex:
    catalogue: Catalogue
    bm25: Bm25
    signature: tuple[int, int]
    # float32[n, dim]: row i's embedding (memory-mapped once saved), or None when not kept.
    vectors: np.ndarray | None = None

    @property
    def size(self) -> int:
        return self.catalogue.size

    @property
    def chunk_ids(self) -> np.ndarray:
        return self.catalogue.chunk_ids

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every row for the query tokens (zeros when none is indexed)."""
        return self.bm25.scores(tokens)

    def coverage(self, concepts: Sequence[Sequence[str]]) -> np.ndarray:
        """Per row, how many of ``concepts`` (``tokens.query_concepts``) it holds, in its text
        or its episode's title ("1:1 with Henrik" is about a one-to-one though its text never
        says so). Titles are read for the rows whose text holds one of them at least."""
        held = np.zeros(self.size, dtype=np.int32)
        if not concepts or self.size == 0:
            return held
        in_text = np.array([self.bm25.scores(list(tokens)) > 0 for tokens in concepts])
        rows = np.flatnonzero(in_text.any(axis=0))
        if rows.size:
            episodes, where = np.unique(self.catalogue.episode[rows], return_inverse=True)
            wanted = [set(tokens) for tokens in concepts]
            in_title = np.array(
                [[bool(self.catalogue.title_tokens(int(e)) & w) for w in wanted] for e in episodes]
            ).reshape(len(episodes), len(wanted))
            held[rows] = (in_text[:, rows].T | in_title[where]).sum(axis=1)
        return held

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        """(chunk id, score) of the best ``limit`` chunks with a positive score."""
        scores = self.bm25.scores(query_tokens(query))
        return [(int(self.chunk_ids[r]), s) for r, s in top_rows(scores, limit)]

    def cosines(self, rows: np.ndarray | None, vector: np.ndarray) -> np.ndarray | None:
        """Cosine of ``rows``' embeddings (every row's when None: the kept matrix is read in
        place, not copied) to a normalised ``vector`` (None: none are kept)."""
        if self.vectors is None:
            return None
        kept = self.vectors if rows is None else self.vectors[rows]
        return np.asarray(kept, dtype=np.float32) @ vector.astype(np.float32)


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
    ids = np.fromiter(chunk_ids, dtype=np.int64)
    catalogue = build_catalogue(ids, episodes, when, info)
    signature = (len(ids), int(ids.max()) if len(ids) else 0)
    return KeywordIndex(catalogue, build_bm25(list(texts)), signature, vectors)
