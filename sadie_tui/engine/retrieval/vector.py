"""The vector channel: the query embedding against the HNSW index over chunk embeddings.

The query vector travels as one string parameter cast to ``FLOAT[384]`` (a Python list of 384
floats costs ~30 ms in DuckDB's parameter binding), and the statement keeps the shape the vss
optimiser recognises (``ORDER BY array_cosine_distance(embedding, <constant>) LIMIT k``), so
DuckDB answers it with ``HNSW_INDEX_SCAN`` instead of scanning every chunk.

Casting that string costs ~0.6 ms, so a retrieval that uses the vector in several statements
casts it once into a connection variable (``bind_query``) and passes the variable's SQL
expression instead of the vector; the optimiser still sees a constant.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

from ..ingest.embedder import vector_literal

if TYPE_CHECKING:
    from ..store.db import Database

PARAMETER = "?::FLOAT[384]"
SQL = (
    "SELECT id, array_cosine_distance(embedding, {vector}) AS distance"
    " FROM chunks ORDER BY distance LIMIT {limit}"
)


def vector_sql(limit: int, vector: str = PARAMETER) -> str:
    return SQL.format(limit=int(limit), vector=vector)


def bind_query(db: Database, query_vector: np.ndarray) -> str:
    """Cast ``query_vector`` once into this thread's variable on ``db``; returns the SQL
    expression that reads it back (each thread has its own, so retrievals never mix)."""
    name = f"sadie_query_{threading.get_ident()}"
    db.execute(f"SET VARIABLE {name} = {PARAMETER}", [vector_literal(query_vector)])
    return f"getvariable('{name}')::FLOAT[384]"


def vector_search(
    db: Database, query_vector: np.ndarray | str, limit: int
) -> list[tuple[int, float]]:
    """(chunk id, cosine similarity) of the ``limit`` nearest chunks, best first.

    ``query_vector`` is the vector or the expression ``bind_query`` returned for it."""
    if limit <= 0:
        return []
    if isinstance(query_vector, str):
        rows = db.fetchall(vector_sql(limit, query_vector))
    else:
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
