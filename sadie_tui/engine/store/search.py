"""The retrieval package's reads: every statement the channels and the pipeline run.

Functions take the ``Database`` and return typed rows. Values are bound parameters (the query
vector as one string cast to ``FLOAT[EMBEDDING_DIM]``: DuckDB binds a Python list of 384 floats
in ~30 ms, a string in microseconds), with one exception: a list of chunk ids is written into
the text as ``IN (1, 2, …)`` by ``_id_list``, each id forced through ``int()``. DuckDB prunes
the scan with a constant IN list (2.5 ms for 150 ids at 10k chunks) and not with a bound one
(``IN (SELECT unnest(?::BIGINT[]))``, ``= ANY(?)``, ``IN (?, …)`` or a registered Arrow table:
35–60 ms, a full scan of the text column). Arrow fetches (embedding matrices, mention columns)
go through ``Database.fetch_arrow`` alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .schema import EMBEDDING_DIM
from .vectors import arrow_matrix

if TYPE_CHECKING:
    from .db import Database

_VECTOR = f"?::FLOAT[{EMBEDDING_DIM}]"


def _id_list(ids: Sequence[int] | np.ndarray) -> str:
    """``(1, 2, …)``: chunk ids as SQL text, integers only (see the module docstring)."""
    return "(" + ", ".join(str(int(i)) for i in ids) + ")"


# --------------------------------------------------------------------------- chunks

# What the keyword index was built from: the chunk count and the largest chunk id.
_SIGNATURE = "count(*), coalesce(max(id), 0)"
_STATE = (
    f"SELECT 'chunks', {_SIGNATURE} FROM chunks"
    " UNION ALL SELECT 'side', (SELECT count(*) FROM beliefs), (SELECT count(*) FROM observations)"
)


def chunk_signature(db: Database) -> tuple[int, int]:
    """(chunk count, largest chunk id): a keyword index built from other chunks is stale."""
    row = db.fetchone(f"SELECT {_SIGNATURE} FROM chunks")
    return (int(row[0]), int(row[1])) if row else (0, 0)


class ChunkText(NamedTuple):
    chunk_id: int
    ordinal: int
    text: str


def chunk_texts(db: Database, ids: Sequence[int]) -> list[ChunkText]:
    """Ordinal and text of the chunks ``ids`` that exist, in no particular order."""
    if not len(ids):
        return []
    rows = db.fetchall("SELECT id, ordinal, text FROM chunks WHERE id IN " + _id_list(ids))
    return [ChunkText(int(cid), int(ordinal), text) for cid, ordinal, text in rows]


def chunk_embeddings(db: Database, ids: Sequence[int]) -> np.ndarray:
    """Embeddings of ``ids``, in that order (zeros for an id not found)."""
    if not len(ids):
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    table = db.fetch_arrow("SELECT id, embedding FROM chunks WHERE id IN " + _id_list(ids))
    found = table.column("id").to_numpy()
    matrix = arrow_matrix(table.column("embedding"))
    where = {int(c): i for i, c in enumerate(found)}
    out = np.zeros((len(ids), matrix.shape[1] if len(found) else EMBEDDING_DIM), dtype=np.float32)
    for j, cid in enumerate(ids):
        if int(cid) in where:
            out[j] = matrix[where[int(cid)]]
    return out


@dataclass(frozen=True)
class IndexSource:
    """Every chunk in episode, then ordinal order, with its episode's details."""

    chunk_ids: list[int]
    texts: list[str]
    episodes: list[str]
    occurred_at: list[float]  # the episode's, in epoch seconds
    titles: list[str]
    kinds: list[str]
    salience: list[float]
    embeddings: np.ndarray  # float32[n, EMBEDDING_DIM]


def keyword_index_source(db: Database) -> IndexSource:
    """What the keyword index is built from, in one statement."""
    table = db.fetch_arrow(
        "SELECT c.id, c.text, c.episode_id::VARCHAR AS episode, epoch(e.occurred_at) AS at,"
        " e.title, e.kind, e.salience, c.embedding"
        " FROM chunks c JOIN episodes e ON e.id = c.episode_id"
        " ORDER BY e.occurred_at, c.episode_id, c.ordinal",
    )
    names = ("id", "text", "episode", "at", "title", "kind", "salience")
    columns = {name: table.column(name).to_pylist() for name in names}
    return IndexSource(
        chunk_ids=columns["id"],
        texts=columns["text"],
        episodes=columns["episode"],
        occurred_at=[float(t) for t in columns["at"]],
        titles=columns["title"],
        kinds=columns["kind"],
        salience=[float(s) for s in columns["salience"]],
        embeddings=arrow_matrix(table.column("embedding")),
    )


# --------------------------------------------------------------------------- vector channel


def nearest_chunks_sql(limit: int) -> str:
    """The HNSW top-``limit`` statement (one parameter: the query vector as a string).

    ``limit`` is written into the text because the vss optimiser only answers
    ``ORDER BY array_cosine_distance(embedding, <constant>) LIMIT <constant>`` from the index."""
    return (
        f"SELECT id, array_cosine_distance(embedding, {_VECTOR}) AS distance"
        f" FROM chunks ORDER BY distance LIMIT {int(limit)}"
    )


class VectorHit(NamedTuple):
    chunk_id: int
    similarity: float  # 1 - cosine distance


def nearest_chunks(db: Database, vector: str, limit: int) -> list[VectorHit]:
    """The ``limit`` chunks nearest to ``vector`` (a vector literal) by HNSW, best first."""
    if limit <= 0:
        return []
    rows = db.fetchall(nearest_chunks_sql(limit), [vector])
    return [VectorHit(int(cid), 1.0 - float(dist)) for cid, dist in rows]


def nearest_chunks_exact(db: Database, vector: str, limit: int) -> list[VectorHit]:
    """The same ranking by a full scan (no index): the reference for the HNSW recall test."""
    rows = db.fetchall(
        f"SELECT id, 1 - array_cosine_distance(embedding, {_VECTOR}) AS s FROM chunks"
        " ORDER BY s DESC, id LIMIT ?",
        [vector, int(limit)],
    )
    return [VectorHit(int(cid), float(s)) for cid, s in rows]


@dataclass(frozen=True)
class MemoryState:
    """Read once per retrieval: the keyword index's signature, and whether there are any
    beliefs and observations to search beside the chunks."""

    signature: tuple[int, int]
    beliefs: bool
    observations: bool


def state_and_nearest(
    db: Database, vector: str | None, depth: int
) -> tuple[MemoryState, list[VectorHit]]:
    """The memory's state and, given a query vector literal, its ``depth`` HNSW hits, in one
    statement (each statement costs ~1 ms of its own, more than these answers)."""
    if vector is None:
        rows = db.fetchall(_STATE)
    else:
        rows = db.fetchall(
            # DOUBLE: a FLOAT column would round the largest chunk id past 2^24.
            f"SELECT 'hit', id, distance::DOUBLE FROM ({nearest_chunks_sql(depth)})"
            f" UNION ALL {_STATE}",
            [vector],
        )
    hits: list[VectorHit] = []
    counts: dict[str, tuple[int, int]] = {}
    for kind, a, b in rows:
        if kind == "hit":
            hits.append(VectorHit(int(a), 1.0 - float(b)))
        else:
            counts[kind] = (int(a or 0), int(b or 0))
    beliefs, observations = counts.get("side", (0, 0))
    return MemoryState(counts.get("chunks", (0, 0)), beliefs > 0, observations > 0), hits


# --------------------------------------------------------------------------- graph channel


def entity_ids(db: Database) -> dict[str, int]:
    """Entity key → entity id."""
    return {str(k): int(i) for k, i in db.fetchall("SELECT key, id FROM entities")}


@dataclass(frozen=True)
class Mentions:
    """Every entity mention, grouped by entity: aligned numpy columns."""

    entity_ids: np.ndarray
    chunk_ids: np.ndarray
    counts: np.ndarray  # float64


def entity_mentions(db: Database) -> Mentions:
    table = db.fetch_arrow(
        "SELECT entity_id, chunk_id, count FROM entity_mentions ORDER BY entity_id"
    )
    return Mentions(
        table.column("entity_id").to_numpy(),
        table.column("chunk_id").to_numpy(),
        table.column("count").to_numpy().astype(np.float64),
    )


def alias_ids(db: Database) -> dict[str, int]:
    """Alias key → the id of the entity it names (a person page's ``aliases``; the first page
    to claim an alias wins)."""
    rows = db.fetchall(
        "SELECT key, first(entity_id ORDER BY rowid) FROM entity_aliases GROUP BY key"
    )
    return {str(k): int(i) for k, i in rows}


# An entity's page: a note whose page key (its file stem) is the entity's key or an alias.
_PAGES_SQL = (
    "SELECT DISTINCT n.entity_id, p.id AS episode_id FROM"
    " (SELECT id AS entity_id, key FROM entities UNION SELECT entity_id, key FROM entity_aliases) n"
    " JOIN episodes p ON p.page = n.key"
)


def entity_page_chunks(db: Database) -> Mentions:
    """Every chunk of every entity's page (a page is about its entity), grouped by entity;
    counts are 1."""
    table = db.fetch_arrow(
        f"SELECT pg.entity_id, c.id AS chunk_id, 1 AS count FROM ({_PAGES_SQL}) pg"
        " JOIN chunks c ON c.episode_id = pg.episode_id ORDER BY pg.entity_id, c.id"
    )
    return Mentions(
        table.column("entity_id").to_numpy(),
        table.column("chunk_id").to_numpy(),
        table.column("count").to_numpy().astype(np.float64),
    )


def linked_note_chunks(db: Database) -> Mentions:
    """Note-to-note edges, one hop: for each entity, every chunk of the notes its page links
    to (found by file stem, case-insensitive) and of the notes that link to its page, the
    page itself left out; grouped by entity, counts are 1."""
    table = db.fetch_arrow(
        f"WITH pages AS ({_PAGES_SQL}),"
        " linked AS ("
        "  SELECT pg.entity_id, e.id AS episode_id FROM pages pg"
        "  JOIN note_links l ON l.episode_id = pg.episode_id"
        "  JOIN episodes e ON e.page = l.target"
        "  UNION"
        "  SELECT pg.entity_id, l.episode_id FROM pages pg"
        "  JOIN episodes p ON p.id = pg.episode_id JOIN note_links l ON l.target = p.page"
        " )"
        " SELECT DISTINCT k.entity_id, c.id AS chunk_id, 1 AS count FROM linked k"
        " JOIN chunks c ON c.episode_id = k.episode_id"
        " WHERE NOT EXISTS (SELECT 1 FROM pages pg WHERE pg.entity_id = k.entity_id"
        "  AND pg.episode_id = k.episode_id)"
        " ORDER BY k.entity_id, chunk_id"
    )
    return Mentions(
        table.column("entity_id").to_numpy(),
        table.column("chunk_id").to_numpy(),
        table.column("count").to_numpy().astype(np.float64),
    )


class Edge(NamedTuple):
    src: int
    dst: int
    relative: float  # weight / the source's strongest edge weight


def strongest_edges(db: Database, fanout: int) -> list[Edge]:
    """Each entity's ``fanout`` strongest edges, strongest first."""
    rows = db.fetchall(
        "SELECT src, dst, weight / max(weight) OVER (PARTITION BY src) FROM ("
        " SELECT src, dst, weight, row_number() OVER"
        " (PARTITION BY src ORDER BY weight DESC, dst) AS n FROM entity_edges"
        ") WHERE n <= ? ORDER BY src, weight DESC, dst",
        [int(fanout)],
    )
    return [Edge(int(src), int(dst), float(rel)) for src, dst, rel in rows]


# --------------------------------------------------------------------------- beliefs, observations


class SideRow(NamedTuple):
    kind: str  # 'b' (belief) or 'o' (observation)
    id: str
    body: str  # statement or text
    other: str  # a belief's status, an observation's source
    confidence: float | None
    observed_at: datetime | None
    score: float | None
    inside: int = 0  # inside the query's window (a belief: one of its evidence episodes is)


class _Params:
    """Numbered parameters, so the query vector is bound (and parsed) once for both parts."""

    def __init__(self) -> None:
        self.values: list[object] = []

    def add(self, value: object) -> str:
        self.values.append(value)
        return f"${len(self.values)}"


def _score_sql(
    column_sql: str, vector_sql: str | None, words: Sequence[str], params: _Params
) -> str:
    """Cosine to the query vector (``vector_sql``: its placeholder); without one, the share
    of ``words`` found in ``column_sql``."""
    if vector_sql is not None:
        return f"1 - array_cosine_distance(embedding, {vector_sql}::FLOAT[{EMBEDDING_DIM}])"
    if not words:
        return "0.0"
    parts_sql = " + ".join(f"(lower({column_sql}) LIKE {params.add(f'%{w}%')})::INT" for w in words)
    return f"({parts_sql}) / {params.add(float(len(words)))}"


def side_rows(
    db: Database,
    vector: str | None,
    words: Sequence[str],
    *,
    beliefs: bool,
    contested: bool,
    observations: bool,
    observation_weight: float,
    window: tuple[datetime | None, datetime | None] | None,
    limit: int,
    evidence_window: tuple[datetime | None, datetime | None] | None = None,
) -> list[SideRow]:
    """The best ``limit`` beliefs (active or accepted, and contested ones if asked) and observations (those
    inside ``window`` first, scores × ``observation_weight``) in one round trip, scored by
    cosine to ``vector`` (a vector literal) or, without one, by the share of ``words`` in them.
    With ``evidence_window``, beliefs with an evidence episode inside it come first too."""
    params = _Params()
    vector_sql = params.add(vector) if vector is not None else None
    with_vector = vector is not None
    parts: list[str] = []
    if beliefs:
        score_sql = _score_sql("statement", vector_sql, words, params)
        # A belief the person accepted counts as active; one they rejected never comes back.
        statuses_sql = (
            "('active', 'accepted', 'contested')" if contested else "('active', 'accepted')"
        )
        belief_inside_sql = "0"
        if evidence_window is not None:
            start, end = evidence_window
            conds_sql = ["list_contains(b.evidence, e.id)"]
            if start is not None:
                conds_sql.append(f"e.occurred_at >= {params.add(start)}")
            if end is not None:
                conds_sql.append(f"e.occurred_at < {params.add(end)}")
            belief_inside_sql = (
                f"(EXISTS (SELECT 1 FROM episodes e WHERE {' AND '.join(conds_sql)}))::INT"
            )
        parts.append(
            f"(SELECT 'b', b.id::VARCHAR, b.statement, b.status, b.confidence, NULL::TIMESTAMP,"
            f" {score_sql} AS s, {belief_inside_sql} AS inside FROM beliefs b"
            f" WHERE b.status IN {statuses_sql}"
            f"{' AND b.embedding IS NOT NULL' if with_vector else ''}"
            f" ORDER BY inside DESC, s DESC, b.id LIMIT {params.add(int(limit))})"
        )
    if observations:
        score_sql = _score_sql("text", vector_sql, words, params)
        inside_sql = "0"
        if window is not None:
            start, end = window
            conds_sql = []
            if start is not None:
                conds_sql.append(f"observed_at >= {params.add(start)}")
            if end is not None:
                conds_sql.append(f"observed_at < {params.add(end)}")
            inside_sql = f"({' AND '.join(conds_sql)})::INT"
        parts.append(
            f"(SELECT 'o', id::VARCHAR, text, source, NULL::DOUBLE, observed_at,"
            f" ({score_sql}) * {params.add(float(observation_weight))} AS s,"
            f" {inside_sql} AS inside"
            f" FROM observations{' WHERE embedding IS NOT NULL' if with_vector else ''}"
            f" ORDER BY inside DESC, s DESC, id LIMIT {params.add(int(limit))})"
        )
    if not parts:
        return []
    rows = db.fetchall(" UNION ALL ".join(parts), params.values or None)
    return [SideRow(*row[:8]) for row in rows]
