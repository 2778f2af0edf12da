"""The vector channel: the query embedding against the HNSW index over chunk embeddings.

The query vector travels as one string parameter cast to ``FLOAT[EMBEDDING_DIM]`` (a Python
list of that many floats costs ~30 ms in DuckDB's parameter binding), and the statement keeps
the shape the vss optimiser recognises (``ORDER BY array_cosine_distance(embedding, <constant>) LIMIT k``), so
DuckDB answers it with ``HNSW_INDEX_SCAN`` instead of scanning every chunk. The statements are
``store.search``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..store.search import VectorHit, nearest_chunks, nearest_chunks_exact, nearest_chunks_sql
from ..store.vectors import vector_literal

if TYPE_CHECKING:
    from ..store.db import Database

vector_sql = nearest_chunks_sql  # the HNSW statement, for tests that EXPLAIN it


def vector_search(db: Database, query_vector: np.ndarray, limit: int) -> list[VectorHit]:
    """(chunk id, cosine similarity) of the ``limit`` nearest chunks, best first."""
    return nearest_chunks(db, vector_literal(query_vector), limit)


def exact_search(db: Database, query_vector: np.ndarray, limit: int) -> list[VectorHit]:
    """The same ranking by a full scan (no index): the reference for the HNSW recall test."""
    return nearest_chunks_exact(db, vector_literal(query_vector), limit)
