"""The beliefs repository: beliefs as the learning loop writes them and the faces read them,
with their evidence, links, former wordings and change log.

``store.derived`` writes the person's own beliefs (``beliefs.jsonl``, origin ``stated``); this
module writes the ones ``sadie reflect`` derives (origin ``derived``, source key
``reflect:<id>``, which no file's key ever matches, so an ingest never deletes them) and every
decision about either. Reflection runs and episode marks are ``store.reflection``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from .db import Database, Row
from .ids import new_id, now
from .schema import EMBEDDING_DIM, VECTOR_TYPE
from .vectors import arrow_matrix

if TYPE_CHECKING:
    import pyarrow as pa

_BELIEF_COLUMNS_SQL = (
    "CAST(b.id AS VARCHAR), b.statement, b.status, coalesce(b.origin, 'stated'), b.kind,"
    " b.confidence, b.created_at, b.updated_at,"
    " (SELECT count(*) FROM belief_evidence v WHERE v.belief_id = b.id AND v.stance = 'supports')"
    " + CASE WHEN coalesce(b.origin, 'stated') = 'stated' THEN len(b.evidence)"
    " - (SELECT count(DISTINCT v.episode_id) FROM belief_evidence v"
    " WHERE v.belief_id = b.id AND list_contains(b.evidence, v.episode_id)) ELSE 0 END"
    " + (SELECT count(*) FROM belief_links l WHERE l.belief_id = b.id AND l.kind = 'rests_on')"
)


@dataclass(frozen=True)
class BeliefRow:
    id: str
    statement: str
    status: str
    origin: str
    kind: str | None
    confidence: float
    created_at: datetime | None
    updated_at: datetime | None
    # supporting evidence: checked quotes, and a stated belief's listed files it quotes none of
    evidence: int


def list_beliefs(
    db: Database, *, status: str | None = None, origin: str | None = None
) -> list[BeliefRow]:
    """Every belief (``status`` / ``origin``: only those), by status, then confidence."""
    where: list[str] = []
    params: list[object] = []
    if status is not None:
        where.append("b.status = ?")
        params.append(status)
    if origin is not None:
        where.append("coalesce(b.origin, 'stated') = ?")
        params.append(origin)
    where_sql = (" WHERE " + " AND ".join(where)) if where else ""
    rows = db.fetchall(
        f"SELECT {_BELIEF_COLUMNS_SQL} FROM beliefs b{where_sql}"
        " ORDER BY CASE b.status WHEN 'accepted' THEN 0 WHEN 'active' THEN 1"
        " WHEN 'contested' THEN 2 WHEN 'retired' THEN 3 ELSE 4 END,"
        " b.confidence DESC, b.statement, b.id",
        params or None,
    )
    return [_belief(r) for r in rows]


def get_belief(db: Database, belief_id: str) -> BeliefRow | None:
    row = db.fetchone(
        f"SELECT {_BELIEF_COLUMNS_SQL} FROM beliefs b WHERE b.id = TRY_CAST(? AS UUID)",
        [belief_id],
    )
    return _belief(row) if row else None


def _belief(row: Row) -> BeliefRow:
    return BeliefRow(
        str(row[0]),
        row[1],
        row[2],
        row[3],
        row[4],
        float(row[5]),
        row[6],
        row[7],
        int(row[8] or 0),
    )


# --------------------------------------------------------------------------- what merging reads


@dataclass(frozen=True)
class Known:
    """Every belief's wordings as the merge compares them: one row per wording (a belief's
    statement, and each former wording of it), with unit vectors (zeros where none)."""

    ids: list[str]
    statuses: list[str]
    origins: list[str]
    fingerprints: list[str]
    statements: list[str]
    vectors: np.ndarray  # float32[n, EMBEDDING_DIM]


def known_wordings(db: Database) -> Known:
    table = db.fetch_arrow(
        "SELECT CAST(b.id AS VARCHAR) AS id, b.status, coalesce(b.origin, 'stated') AS origin,"
        " coalesce(b.fingerprint, '') AS fingerprint, b.statement, b.embedding"
        " FROM beliefs b"
        " UNION ALL SELECT CAST(a.belief_id AS VARCHAR), b.status, coalesce(b.origin, 'stated'),"
        " a.fingerprint, a.statement, a.embedding"
        " FROM belief_aliases a JOIN beliefs b ON b.id = a.belief_id"
    )
    columns = {n: table.column(n).to_pylist() for n in ("id", "status", "origin", "fingerprint")}
    statements = table.column("statement").to_pylist()
    vectors = _unit(_filled(table.column("embedding")))
    return Known(
        columns["id"],
        columns["status"],
        columns["origin"],
        columns["fingerprint"],
        statements,
        vectors,
    )


def _filled(column: pa.ChunkedArray) -> np.ndarray:
    """The embedding column as a matrix, zeros for a missing vector (a fixed-size list keeps
    a slot for a null value, so the rows stay aligned)."""
    if len(column) == 0:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    matrix = np.array(arrow_matrix(column), dtype=np.float32)
    matrix[column.combine_chunks().is_null().to_numpy(zero_copy_only=False)] = 0.0
    return matrix


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1)
    norms[norms == 0] = 1.0
    return np.asarray(matrix / norms[:, None], dtype=np.float32)


# --------------------------------------------------------------------------- evidence, links, log


@dataclass(frozen=True)
class EvidenceRow:
    belief_id: str
    episode_id: str
    quote: str
    verbatim: bool
    stance: str  # supports | contradicts
    run_id: str | None
    added_at: datetime
    title: str
    date: str  # YYYY-MM-DD of the episode ('' when it is gone)


def evidence_of(db: Database, belief_ids: Sequence[str]) -> list[EvidenceRow]:
    """The checked quotes of ``belief_ids``, oldest episode first."""
    if not belief_ids:
        return []
    rows = db.fetchall(
        "SELECT CAST(v.belief_id AS VARCHAR), CAST(v.episode_id AS VARCHAR), v.quote, v.verbatim,"
        " v.stance, CAST(v.run_id AS VARCHAR), v.added_at, coalesce(e.title, ''),"
        " coalesce(strftime(e.occurred_at, '%Y-%m-%d'), '')"
        " FROM belief_evidence v LEFT JOIN episodes e ON e.id = v.episode_id"
        " WHERE list_contains(?::UUID[], v.belief_id)"
        " ORDER BY e.occurred_at NULLS LAST, v.added_at",
        [list(belief_ids)],
    )
    return [EvidenceRow(*r) for r in rows]


def stated_evidence(db: Database, belief_id: str) -> list[tuple[str, str, str]]:
    """(episode id, title, date) of each file a stated belief lists as its evidence."""
    return db.fetchall(
        "SELECT CAST(e.id AS VARCHAR), e.title, strftime(e.occurred_at, '%Y-%m-%d')"
        " FROM beliefs b JOIN episodes e ON list_contains(b.evidence, e.id)"
        " WHERE b.id = TRY_CAST(? AS UUID) ORDER BY e.occurred_at",
        [belief_id],
    )


@dataclass(frozen=True)
class LinkRow:
    kind: str  # contradicts | replaced_by | supersedes | rests_on (a figure's records)
    target_id: str
    target_kind: str  # belief | observation | episode
    text: str  # the other belief's statement or the record's text
    quote: str | None
    created_at: datetime


def links_of(db: Database, belief_id: str) -> list[LinkRow]:
    rows = db.fetchall(
        "SELECT l.kind, l.target_id, l.target_kind,"
        " coalesce(b.statement, o.source || ' ' || strftime(o.observed_at, '%Y-%m-%d') || ': '"
        " || o.text, strftime(e.occurred_at, '%Y-%m-%d') || ' ' || e.title, ''), l.quote,"
        " l.created_at"
        " FROM belief_links l"
        " LEFT JOIN episodes e ON l.target_kind = 'episode' AND e.id = TRY_CAST(l.target_id AS UUID)"
        " LEFT JOIN beliefs b ON l.target_kind = 'belief' AND b.id = TRY_CAST(l.target_id AS UUID)"
        " LEFT JOIN observations o ON l.target_kind = 'observation'"
        " AND o.id = TRY_CAST(l.target_id AS UUID)"
        " WHERE l.belief_id = TRY_CAST(? AS UUID) ORDER BY l.created_at",
        [belief_id],
    )
    return [LinkRow(*r) for r in rows]


@dataclass(frozen=True)
class ChangeRow:
    at: datetime
    action: str
    reason: str | None
    run_id: str | None
    model: str | None
    before: str | None
    after: str | None


def changes_of(db: Database, belief_id: str) -> list[ChangeRow]:
    rows = db.fetchall(
        "SELECT changed_at, action, reason, CAST(run_id AS VARCHAR), model, before, after"
        " FROM belief_changes WHERE belief_id = TRY_CAST(? AS UUID) ORDER BY changed_at, id",
        [belief_id],
    )
    return [ChangeRow(*r) for r in rows]


# --------------------------------------------------------------------------- writes


def insert_derived(
    db: Database,
    *,
    id: str,
    statement: str,
    kind: str,
    confidence: float,
    evidence: Sequence[str],
    fingerprint: str,
    embedding: str | None,
    at: datetime,
    status: str = "active",
) -> None:
    """One belief ``sadie reflect`` derived; ``embedding`` is a vector literal (None: found
    without the embedding model)."""
    db.execute(
        "INSERT INTO beliefs (id, statement, status, confidence, evidence, source_key, embedding,"
        " origin, kind, fingerprint, created_at, updated_at)"
        f" VALUES (?, ?, ?, ?, ?::UUID[], ?, ?::{VECTOR_TYPE}, 'derived', ?, ?, ?, ?)",
        [
            id,
            statement,
            status,
            confidence,
            list(evidence),
            f"reflect:{id}",
            embedding,
            kind,
            fingerprint,
            at,
            at,
        ],
    )


def add_evidence(
    db: Database,
    belief_id: str,
    episode_id: str,
    quote: str,
    *,
    verbatim: bool,
    stance: str,
    run_id: str | None,
    at: datetime,
) -> None:
    """One checked quote; a supporting one also joins the belief's evidence episodes (which
    retrieval's time window reads)."""
    db.execute(
        "INSERT INTO belief_evidence VALUES (?, ?, ?, ?, ?, ?, ?)",
        [belief_id, episode_id, quote, verbatim, stance, run_id, at],
    )
    if stance == "supports":
        db.execute(
            "UPDATE beliefs SET evidence = list_append(evidence, ?::UUID)"
            " WHERE id = ?::UUID AND NOT list_contains(evidence, ?::UUID)",
            [episode_id, belief_id, episode_id],
        )


def update_belief(
    db: Database,
    belief_id: str,
    *,
    at: datetime,
    status: str | None = None,
    confidence: float | None = None,
    statement: str | None = None,
    fingerprint: str | None = None,
    embedding: str | None = None,
) -> None:
    """Change the given fields of one belief (and its ``updated_at``)."""
    sets_sql: list[str] = ["updated_at = ?"]
    params: list[object] = [at]
    for column_sql, value, cast_sql in (
        ("status", status, ""),
        ("confidence", confidence, ""),
        ("statement", statement, ""),
        ("fingerprint", fingerprint, ""),
        ("embedding", embedding, f"::{VECTOR_TYPE}"),
    ):
        if value is not None:
            sets_sql.append(f"{column_sql} = ?{cast_sql}")
            params.append(value)
    params.append(belief_id)
    db.execute(f"UPDATE beliefs SET {', '.join(sets_sql)} WHERE id = ?::UUID", params)


def add_alias(
    db: Database, belief_id: str, statement: str, fingerprint: str, embedding: str | None
) -> None:
    """A former wording of a belief (before an edit): still recognised when proposed again."""
    db.execute(
        f"INSERT INTO belief_aliases VALUES (?, ?, ?, ?::{VECTOR_TYPE})",
        [belief_id, statement, fingerprint, embedding],
    )


def embedding_literal(db: Database, belief_id: str) -> str | None:
    """A belief's embedding as a vector literal (None when it has none)."""
    row = db.fetchone(
        "SELECT CAST(embedding AS VARCHAR) FROM beliefs WHERE id = TRY_CAST(? AS UUID)",
        [belief_id],
    )
    return row[0] if row and row[0] is not None else None


def add_link(
    db: Database,
    belief_id: str,
    kind: str,
    target_id: str,
    target_kind: str,
    *,
    quote: str | None,
    run_id: str | None,
    at: datetime,
) -> None:
    db.execute(
        "INSERT INTO belief_links VALUES (?, ?, ?, ?, ?, ?, ?)",
        [belief_id, kind, target_id, target_kind, quote, run_id, at],
    )


def log_change(
    db: Database,
    belief_id: str,
    action: str,
    *,
    reason: str | None = None,
    run_id: str | None = None,
    model: str | None = None,
    before: str | None = None,
    after: str | None = None,
    at: datetime | None = None,
) -> None:
    """One line of a belief's history: what changed, by which run and model, and why."""
    db.execute(
        "INSERT INTO belief_changes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [new_id(), belief_id, run_id, model, action, reason, before, after, at or now()],
    )


def evidence_quotes(db: Database) -> list[tuple[str, str, str]]:
    """(belief id, episode id, quote) of every stored quote (so the same one is never added
    twice)."""
    return db.fetchall(
        "SELECT CAST(belief_id AS VARCHAR), CAST(episode_id AS VARCHAR), quote FROM belief_evidence"
    )


def belief_states(db: Database) -> list[tuple[str, str, str, str, float, list[str], str | None]]:
    """(id, statement, status, origin, confidence, evidence episode ids, date of the newest
    of them) of every belief: what a reflection run starts from."""
    rows = db.fetchall(
        "SELECT CAST(b.id AS VARCHAR), b.statement, b.status, coalesce(b.origin, 'stated'),"
        " b.confidence, CAST(b.evidence AS VARCHAR[]),"
        " (SELECT strftime(max(e.occurred_at), '%Y-%m-%d') FROM episodes e"
        "  WHERE list_contains(b.evidence, e.id))"
        " FROM beliefs b"
    )
    return [(r[0], r[1], r[2], r[3], float(r[4]), list(r[5] or []), r[6]) for r in rows]


def belief_id_by_statement(db: Database, statement: str) -> str | None:
    """The id of the belief worded ``statement`` exactly, if there is one."""
    row = db.fetchone("SELECT CAST(id AS VARCHAR) FROM beliefs WHERE statement = ?", [statement])
    return None if row is None else str(row[0])


def source_of(db: Database, table: str, row_id: str) -> str | None:
    """The source key (file, or file#line) of an episode or observation by its id."""
    if table not in ("episodes", "observations"):
        raise ValueError(f"no source keys in {table!r}")
    sql = f"SELECT source_key FROM {table} WHERE id = TRY_CAST(? AS UUID)"  # noqa: S608 - a fixed table name
    row = db.fetchone(sql, [row_id])
    return None if row is None else str(row[0])
