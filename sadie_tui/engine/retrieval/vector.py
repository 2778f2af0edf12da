"""The vector channel: the query embedding against the HNSW index over chunk embeddings.

The query vector travels as one string parameter cast to ``FLOAT[384]`` (a Python list of 384
floats costs ~30 ms in DuckDB's parameter binding), and the statement keeps the shape the vss
optimiser recognises (``ORDER BY array_cosine_distance(embedding, <constant>) LIMIT k``), so
DuckDB answers it with ``HNSW_INDEX_SCAN`` instead of scanning every chunk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ingest.embedder import vector_literal

if TYPE_CHECKING:
    from ..store.db import Database

SQL = (
    "SELECT id, array_cosine_distance(embedding, ?::FLOAT[384]) AS distance"
    " FROM chunks ORDER BY distance LIMIT {limit}"
)


def vector_sql(limit: int) -> str:
    return SQL.format(limit=int(limit))


def vector_search(db: Database, query_vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """(chunk id, cosine similarity) of the ``limit`` nearest chunks, best first."""
    if limit <= 0:
        return []
    rows = db.fetchall(vector_sql(limit), [vector_literal(query_vector)])
    return [(int(cid), 1.0 - float(dist)) for cid, dist in rows]


def exact_search(db: Database, query_vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """The same ranking by a full scan (no index): the reference for the HNSW recall test."""
    rows = db.fetchall(
        "SELECT id, 1 - array_cosine_distance(embedding, ?::FLOAT[384]) AS s FROM chunks"
        " ORDER BY s DESC, id LIMIT ?",
        [vector_literal(query_vector), int(limit)],
    )
    return [(int(cid), float(s)) for cid, s in rows]
