"""The derived-records repository: beliefs, observations, wiki entries, briefs, Today cards
and the soul summary, as the ingest path replaces them per source file and the memory reads
them.

Beliefs and observations carry an embedding; ``row_hashes`` gives the md5 of each stored row's
fields so that an unchanged file is recognised without rewriting (or re-embedding) it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime

from .db import Database, Row
from .ids import now
from .schema import TITLED_TABLES, VECTOR_TYPE

#: The fields of a stored belief / observation, joined as the md5 of ``row_hashes`` sees them.
_BELIEF_HASH_SQL = (
    "md5(CAST((statement || '|' || status || '|' || confidence::VARCHAR || '|'"
    " || evidence::VARCHAR) AS VARCHAR))"
)
_OBSERVATION_HASH_SQL = (
    "md5(CAST((source || '|' || strftime(observed_at, '%Y-%m-%dT%H:%M:%S') || '|' || text"
    " || '|' || coalesce(measure, '-')) AS VARCHAR))"
)
#: An observation's figure as stored: (measure, value, unit, first day, last day).
Measured = tuple[str, float, str, date, date]
_TITLED_COLUMNS = ("id", "title", "text", "source_key", "kind", "occurred_at")


# --------------------------------------------------------------------------- soul


def soul(db: Database) -> str:
    """The stored soul summary ("" when there is none)."""
    row = db.fetchone("SELECT text FROM soul ORDER BY id LIMIT 1")
    return row[0] if row else ""


def stored_soul(db: Database) -> str | None:
    """The soul summary the ingest path wrote, or ``None``."""
    row = db.fetchone("SELECT text FROM soul WHERE id = 1")
    return row[0] if row else None


def replace_soul(db: Database, text: str) -> None:
    db.execute("DELETE FROM soul")
    db.execute("INSERT INTO soul (id, text) VALUES (1, ?)", [text])


# --------------------------------------------------------------------------- beliefs, observations


def belief_hashes(db: Database) -> set[tuple[str, str]]:
    """(source_key, md5 of the row's fields) of every belief."""
    return {(k, h) for k, h in db.fetchall(f"SELECT source_key, {_BELIEF_HASH_SQL} FROM beliefs")}


def observation_hashes(db: Database) -> set[tuple[str, str]]:
    """(source_key, md5 of the row's fields) of every observation."""
    return {
        (k, h)
        for k, h in db.fetchall(f"SELECT source_key, {_OBSERVATION_HASH_SQL} FROM observations")
    }


def delete_beliefs_of(db: Database, file: str) -> None:
    """Every belief read from ``file`` (source keys ``file#n``), and the quotes the file gave
    them (no run's: a reflection's quotes of a stated belief stay, its id returns)."""
    db.execute(
        "DELETE FROM belief_evidence WHERE run_id IS NULL AND belief_id IN"
        " (SELECT id FROM beliefs WHERE source_key LIKE ?)",
        [file + "#%"],
    )
    db.execute("DELETE FROM beliefs WHERE source_key LIKE ?", [file + "#%"])


def stated_quotes(db: Database) -> set[tuple[str, str, str, str]]:
    """(belief source key, episode id, quote, stance) of every quote a belief file gave."""
    rows = db.fetchall(
        "SELECT b.source_key, CAST(v.episode_id AS VARCHAR), v.quote, v.stance"
        " FROM belief_evidence v JOIN beliefs b ON b.id = v.belief_id"
        " WHERE v.run_id IS NULL AND coalesce(b.origin, 'stated') = 'stated'"
    )
    return {(r[0], r[1], r[2], r[3]) for r in rows}


def delete_observations_of(db: Database, file: str) -> None:
    db.execute("DELETE FROM observations WHERE source_key LIKE ?", [file + "#%"])


def insert_belief(
    db: Database,
    *,
    id: str,
    statement: str,
    status: str,
    confidence: float,
    evidence: Sequence[str],
    source_key: str,
    embedding: str,
) -> None:
    """One belief the person wrote (``beliefs.jsonl``: origin ``stated``); ``embedding`` is a
    vector literal (``embedder.vector_literal``)."""
    at = now()
    db.execute(
        "INSERT INTO beliefs (id, statement, status, confidence, evidence, source_key, embedding,"
        f" origin, created_at, updated_at) VALUES (?, ?, ?, ?, ?::UUID[], ?, ?::{VECTOR_TYPE},"
        " 'stated', ?, ?)",
        [id, statement, status, confidence, evidence, source_key, embedding, at, at],
    )


def insert_observation(
    db: Database,
    *,
    id: str,
    source: str,
    observed_at: datetime,
    text: str,
    source_key: str,
    embedding: str,
    measure: Measured | None = None,
) -> None:
    """One observation; ``measure``: the figure it states (measure, value, unit, first and
    last day), as the ingest read it."""
    db.execute(
        "INSERT INTO observations (id, source, observed_at, text, source_key, embedding,"
        f" measure, value, unit, period_start, period_end) VALUES (?, ?, ?, ?, ?, ?::{VECTOR_TYPE},"
        " ?, ?, ?, ?, ?)",
        [id, source, observed_at, text, source_key, embedding, *(measure or (None,) * 5)],
    )


# --------------------------------------------------------------------------- titled texts


def _titled(table: str, columns: Sequence[str]) -> tuple[str, str]:
    """The table and column list, checked against the schema (they become SQL text)."""
    if table not in TITLED_TABLES:
        raise ValueError(f"not a titled table: {table!r}")
    unknown = [c for c in columns if c not in _TITLED_COLUMNS]
    if unknown:
        raise ValueError(f"not a column of {table}: {', '.join(unknown)}")
    return table, ", ".join(columns)


def titled_row(db: Database, table: str, columns: Sequence[str], source_key: str) -> Row | None:
    """The ``columns`` of the wiki entry / brief / Today card read from ``source_key``."""
    table, columns_sql = _titled(table, columns)
    return db.fetchone(f"SELECT {columns_sql} FROM {table} WHERE source_key = ?", [source_key])


def replace_titled(
    db: Database, table: str, columns: Sequence[str], values: Sequence[object], source_key: str
) -> None:
    """Write one wiki entry / brief / Today card in place of the one from ``source_key``."""
    table, columns_sql = _titled(table, columns)
    marks_sql = ", ".join("?" for _ in columns)
    db.execute(f"DELETE FROM {table} WHERE source_key = ?", [source_key])
    db.execute(f"INSERT INTO {table} ({columns_sql}) VALUES ({marks_sql})", list(values))


def wiki_titles(db: Database) -> list[tuple[str, str]]:
    """(title, kind) of every wiki entry."""
    return db.fetchall("SELECT title, kind FROM wiki_entries")


def wiki_texts(db: Database) -> list[tuple[str, str, str]]:
    """(id, title, text) of every wiki entry."""
    return db.fetchall("SELECT id::VARCHAR, title, text FROM wiki_entries ORDER BY title, id")
