"""Reflection's own tables: the runs, which episodes have been reflected on, and the reads a
run makes of the rest of the memory (the episodes to read, what might disagree with a belief).

An episode is waiting for reflection when it has no ``episode_reflection`` row or its row's
``reflected_at`` is empty: the ingest path empties it for every new or changed episode
(``mark_pending``), and a run fills it in the same commit as the beliefs it drew from it
(``mark_reflected``), so a run killed mid-way leaves the batch in flight waiting, and nothing
else.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..jsonvalue import JSON, JSONObject
from .db import Database
from .schema import EMBEDDING_DIM

_VECTOR = f"?::FLOAT[{EMBEDDING_DIM}]"


@dataclass(frozen=True)
class EpisodeText:
    id: str
    title: str
    date: str  # YYYY-MM-DD
    kind: str
    text: str
    occurred_at: datetime


def episodes_to_read(
    db: Database,
    *,
    everything: bool = False,
    since: datetime | None = None,
    only: Sequence[str] | None = None,
) -> list[EpisodeText]:
    """The episodes a run reads, oldest first: those waiting for reflection; every one with
    ``everything``; with ``since``, every one dated on or after it; with ``only``, those."""
    where: list[str] = []
    params: list[object] = []
    if only is not None:
        where.append("list_contains(?::UUID[], e.id)")
        params.append(list(only))
    elif since is not None:
        where.append("e.occurred_at >= ?")
        params.append(since)
    elif not everything:
        where.append("r.reflected_at IS NULL")
    where_sql = (" WHERE " + " AND ".join(where)) if where else ""
    rows = db.fetchall(
        "SELECT CAST(e.id AS VARCHAR), e.title, strftime(e.occurred_at, '%Y-%m-%d'), e.kind,"
        " e.text, e.occurred_at FROM episodes e"
        f" LEFT JOIN episode_reflection r ON r.episode_id = e.id{where_sql}"
        " ORDER BY e.occurred_at, e.id",
        params or None,
    )
    return [EpisodeText(*r) for r in rows]


def episode_dates(db: Database) -> dict[str, datetime]:
    """Every episode's date, by id."""
    return {
        r[0]: r[1] for r in db.fetchall("SELECT CAST(id AS VARCHAR), occurred_at FROM episodes")
    }


def waiting_count(db: Database) -> int:
    """How many episodes wait for the next reflection."""
    row = db.fetchone(
        "SELECT count(*) FROM episodes e LEFT JOIN episode_reflection r ON r.episode_id = e.id"
        " WHERE r.reflected_at IS NULL"
    )
    return int(row[0]) if row else 0


def mark_pending(db: Database, episode_ids: Sequence[str]) -> None:
    """New or changed episodes wait for the next reflection (the ingest path, in its commit)."""
    if not episode_ids:
        return
    db.execute(
        "INSERT INTO episode_reflection (episode_id, reflected_at, run_id)"
        " SELECT DISTINCT unnest(?::UUID[]), NULL::TIMESTAMP, NULL::UUID"
        " ON CONFLICT (episode_id) DO UPDATE SET reflected_at = NULL, run_id = NULL",
        [list(episode_ids)],
    )


def mark_reflected(db: Database, episode_ids: Sequence[str], run_id: str, at: datetime) -> None:
    if not episode_ids:
        return
    db.execute(
        "INSERT INTO episode_reflection (episode_id, reflected_at, run_id)"
        " SELECT DISTINCT unnest(?::UUID[]), ?::TIMESTAMP, ?::UUID"
        " ON CONFLICT (episode_id) DO UPDATE SET reflected_at = excluded.reflected_at,"
        " run_id = excluded.run_id",
        [list(episode_ids), at, run_id],
    )


# --------------------------------------------------------------------------- runs


# Runs this process is making now: the only ``running`` rows that are not leftovers.
_running_here: set[str] = set()
_running_lock = threading.Lock()


def start_run(db: Database, run_id: str, model: str, at: datetime) -> None:
    with _running_lock:
        _running_here.add(str(run_id))
    db.execute(
        "INSERT INTO reflection_runs (id, model, started_at, status, counts)"
        " VALUES (?, ?, ?, 'running', '{}')",
        [run_id, model, at],
    )


def update_run(
    db: Database, run_id: str, counts: JSONObject, *, status: str, at: datetime | None
) -> None:
    """The run's counters so far and its state (``running``, ``done``, ``stopped``,
    ``failed``; ``interrupted`` is set on open for a run whose process ended without saying,
    ``interrupt_leftover_runs``); ``at``: when it ended."""
    if status != "running":
        with _running_lock:
            _running_here.discard(str(run_id))
    db.execute(
        "UPDATE reflection_runs SET counts = ?, status = ?, finished_at = ? WHERE id = ?::UUID",
        [json.dumps(counts), status, at, run_id],
    )


def interrupt_leftover_runs(db: Database) -> int:
    """Mark ``interrupted`` every reflection run still ``running`` that this process is not
    making: one process writes to a memory at a time, so its process ended (killed, crashed)
    before it could say how the run ended. Call on opening a memory for writing."""
    with _running_lock:
        live = sorted(_running_here)
    rows = db.fetchall(
        "UPDATE reflection_runs SET status = 'interrupted' WHERE status = 'running'"
        " AND NOT list_contains(?::UUID[], id) RETURNING id",
        [live],
    )
    return len(rows)


def run_counts(db: Database, run_id: str) -> JSONObject | None:
    """The counters a run recorded (``update_run``), or None for no such run."""
    row = db.fetchone(
        "SELECT CAST(counts AS VARCHAR) FROM reflection_runs WHERE id = TRY_CAST(? AS UUID)",
        [run_id],
    )
    counts: JSON = json.loads(row[0]) if row and row[0] else None
    return counts if isinstance(counts, dict) else None


# --------------------------------------------------------------------------- what may disagree


@dataclass(frozen=True)
class Near:
    """Something of the memory near a belief: a chunk of a note, or a record."""

    kind: str  # note | record
    id: str  # the episode's id, or the observation's
    title: str  # the episode's title, or the record's source
    date: str  # YYYY-MM-DD
    text: str
    similarity: float


def near_notes(
    db: Database, vector: str, *, limit: int, floor: float, exclude: Sequence[str] = ()
) -> list[Near]:
    """The chunks nearest ``vector`` (a vector literal) from episodes not in ``exclude``, one
    per episode, at least ``floor`` alike (an exact scan of cosines: a handful of beliefs per
    batch, so no index is needed and none can miss)."""
    rows = db.fetchall(
        "SELECT CAST(c.episode_id AS VARCHAR), e.title, strftime(e.occurred_at, '%Y-%m-%d'),"
        f" c.text, 1 - array_cosine_distance(c.embedding, {_VECTOR}) AS s"
        " FROM chunks c JOIN episodes e ON e.id = c.episode_id"
        " WHERE NOT list_contains(?::UUID[], c.episode_id)"
        " QUALIFY row_number() OVER (PARTITION BY c.episode_id ORDER BY s DESC, c.id) = 1"
        " ORDER BY s DESC, c.id LIMIT ?",
        [vector, list(exclude), int(limit) * 3],
    )
    return [Near("note", r[0], r[1], r[2], r[3], float(r[4])) for r in rows if r[4] >= floor][
        :limit
    ]


def near_records(db: Database, vector: str, *, limit: int, floor: float) -> list[Near]:
    """The observations (records from devices and services) nearest ``vector``."""
    rows = db.fetchall(
        "SELECT CAST(id AS VARCHAR), source, strftime(observed_at, '%Y-%m-%d'), text,"
        f" 1 - array_cosine_distance(embedding, {_VECTOR}) AS s FROM observations"
        " WHERE embedding IS NOT NULL ORDER BY s DESC, id LIMIT ?",
        [vector, int(limit)],
    )
    return [Near("record", r[0], r[1], r[2], r[3], float(r[4])) for r in rows if r[4] >= floor]


@dataclass(frozen=True)
class ChunkVector:
    episode_id: str
    title: str
    date: str
    text: str
    vector: np.ndarray  # float32[EMBEDDING_DIM]


def chunks_of(db: Database, episode_ids: Sequence[str]) -> list[ChunkVector]:
    """The chunks of ``episode_ids`` with their embeddings (a batch's notes, to find the
    beliefs they touch)."""
    if not episode_ids:
        return []
    # lazy: vectors loads only when chunks_of runs, off the start-up path
    from .vectors import arrow_matrix

    table = db.fetch_arrow(
        "SELECT CAST(c.episode_id AS VARCHAR) AS episode, e.title,"
        " strftime(e.occurred_at, '%Y-%m-%d') AS date, c.text, c.embedding"
        " FROM chunks c JOIN episodes e ON e.id = c.episode_id"
        " WHERE list_contains(?::UUID[], c.episode_id) ORDER BY e.occurred_at, c.episode_id,"
        " c.ordinal",
        [list(episode_ids)],
    )
    matrix = arrow_matrix(table.column("embedding"))
    cols = {n: table.column(n).to_pylist() for n in ("episode", "title", "date", "text")}
    return [
        ChunkVector(cols["episode"][i], cols["title"][i], cols["date"][i], cols["text"][i], row)
        for i, row in enumerate(matrix)
    ]


def last_run(db: Database) -> tuple[str, str, JSONObject] | None:
    """The latest reflection run: its model, the day it started and its counts."""
    row = db.fetchone(
        "SELECT model, strftime(started_at, '%Y-%m-%d'), counts FROM reflection_runs"
        " ORDER BY started_at DESC LIMIT 1"
    )
    if row is None:
        return None
    counts = json.loads(row[2] or "{}")
    return str(row[0]), str(row[1]), counts if isinstance(counts, dict) else {}
