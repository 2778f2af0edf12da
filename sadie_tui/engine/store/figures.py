"""The SQL behind the figures computed from records (``reflect.figures``), and the rows it
writes: record-backed beliefs (origin ``records``) and their links to the rows they rest on.

Every figure is one query over ``observations`` (``WINDOW_SQL``, shown in README so anyone
can run it on their own memory): each observation's figure is spread over the days it covers
(a month's average over the month, a night's over its day); each day takes the figure of
the most specific observation covering it (the fewest days; the newest on a tie), so a night
recorded inside a month is not counted twice; a total (EUR) is shared out over its days.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from .db import Database
from .schema import VECTOR_TYPE

#: The figure of ``measure`` over the days ``start`` .. ``end`` (inclusive): the mean a day
#: (per night, per week, or EUR a day for a total), the days covered, the rows it rests on.
WINDOW_SQL = """
WITH days AS (
    SELECT id, observed_at, date_diff('day', period_start, period_end) + 1 AS span,
           CASE WHEN unit = 'EUR' THEN value / (date_diff('day', period_start, period_end) + 1)
                ELSE value END AS per_day,
           unnest(generate_series(period_start::TIMESTAMP, period_end::TIMESTAMP,
                                  INTERVAL 1 DAY))::DATE AS day
    FROM observations WHERE measure = $measure
), best AS (
    SELECT day, arg_min(per_day, span * 1e10 - epoch(observed_at)) AS value,
           arg_min(id, span * 1e10 - epoch(observed_at)) AS id
    FROM days GROUP BY day
)
SELECT avg(value), count(*), list(DISTINCT CAST(id AS VARCHAR) ORDER BY CAST(id AS VARCHAR))
FROM best WHERE day BETWEEN $start AND $end
"""


@dataclass(frozen=True)
class Window:
    """A figure over a window: the mean, the days with a figure, the rows it rests on."""

    mean: float | None
    days: int
    rows: tuple[str, ...]


def window(db: Database, measure: str, start: date, end: date) -> Window:
    row = db.fetchone(WINDOW_SQL, {"measure": measure, "start": start, "end": end})
    if row is None or not row[1]:
        return Window(None, 0, ())
    return Window(float(row[0]), int(row[1]), tuple(row[2] or ()))


def first_day(db: Database, measure: str, since: date) -> date | None:
    """The first day on or after ``since`` that an observation of ``measure`` covers."""
    row = db.fetchone(
        "SELECT min(greatest(period_start, ?)) FROM observations"
        " WHERE measure = ? AND period_end >= ?",
        [since, measure, since],
    )
    return row[0] if row else None


def last_day(db: Database, measure: str) -> date | None:
    """The last day any observation of ``measure`` covers."""
    row = db.fetchone("SELECT max(period_end) FROM observations WHERE measure = ?", [measure])
    return row[0] if row else None


def unmeasured(db: Database) -> list[tuple[str, str, str, datetime]]:
    """(id, source, text, observed_at) of every observation with no figure read (stored
    before figures were kept, or stating none)."""
    return db.fetchall(
        "SELECT CAST(id AS VARCHAR), source, text, observed_at FROM observations"
        " WHERE measure IS NULL ORDER BY observed_at"
    )


def set_measure(
    db: Database, obs_id: str, measure: str, value: float, unit: str, start: date, end: date
) -> None:
    db.execute(
        "UPDATE observations SET measure = ?, value = ?, unit = ?, period_start = ?,"
        " period_end = ? WHERE id = ?::UUID",
        [measure, value, unit, start, end, obs_id],
    )


def counts(db: Database) -> tuple[int, int]:
    """(observations with a figure, observations without)."""
    row = db.fetchone("SELECT count(measure), count(*) - count(measure) FROM observations")
    return (int(row[0]), int(row[1])) if row else (0, 0)


def record_episodes(db: Database) -> list[tuple[str, str, datetime]]:
    """(id, title, occurred_at) of every record (a JSONL line: an appointment, a purchase, a
    run), oldest first: what recurring appointments are counted from."""
    return db.fetchall(
        "SELECT CAST(id AS VARCHAR), title, occurred_at FROM episodes"
        " WHERE kind = 'record' ORDER BY occurred_at, id"
    )


def notes_text(db: Database) -> list[tuple[str, str, datetime]]:
    """(id, text, occurred_at) of every episode that is not a record: where a self-report
    may be written."""
    return db.fetchall(
        "SELECT CAST(id AS VARCHAR), text, occurred_at FROM episodes"
        " WHERE kind <> 'record' ORDER BY occurred_at, id"
    )


def claim_dates(db: Database, belief_id: str) -> list[date]:
    """The days a belief was said: its supporting quotes' notes, or a stated belief's listed
    files."""
    rows = db.fetchall(
        "SELECT DISTINCT CAST(e.occurred_at AS DATE) AS d FROM beliefs b JOIN episodes e"
        " ON list_contains(b.evidence, e.id) WHERE b.id = ?::UUID"
        " UNION SELECT DISTINCT CAST(e.occurred_at AS DATE) FROM belief_evidence v"
        " JOIN episodes e ON e.id = v.episode_id"
        " WHERE v.belief_id = ?::UUID AND v.stance = 'supports' ORDER BY 1",
        [belief_id, belief_id],
    )
    return [r[0] for r in rows]


def upsert_record_belief(
    db: Database,
    *,
    id: str,
    key: str,
    statement: str,
    kind: str,
    embedding: str | None,
    at: datetime,
) -> str | None:
    """Write a record-backed belief (origin ``records``, source key ``records:<key>``, which no
    file's key matches). Returns its former statement when it changed, else None."""
    row = db.fetchone("SELECT statement FROM beliefs WHERE id = ?::UUID", [id])
    if row is None:
        db.execute(
            "INSERT INTO beliefs (id, statement, status, confidence, evidence, source_key,"
            " embedding, origin, kind, fingerprint, created_at, updated_at)"
            f" VALUES (?, ?, 'active', 0.9, [], ?, ?::{VECTOR_TYPE}, 'records', ?, NULL, ?, ?)",
            [id, statement, f"records:{key}", embedding, kind, at, at],
        )
        return None
    if row[0] == statement:
        return None
    db.execute(
        f"UPDATE beliefs SET statement = ?, embedding = coalesce(?::{VECTOR_TYPE}, embedding),"
        " updated_at = ? WHERE id = ?::UUID",
        [statement, embedding, at, id],
    )
    return str(row[0])


def replace_rests_on(
    db: Database, belief_id: str, targets: Sequence[tuple[str, str]], at: datetime
) -> None:
    """A record-backed belief's ``rests_on`` links: one per (row id, ``observation`` or
    ``episode``) its figure is computed from."""
    db.execute(
        "DELETE FROM belief_links WHERE belief_id = ?::UUID AND kind = 'rests_on'", [belief_id]
    )
    for target_id, target_kind in targets:
        db.execute(
            "INSERT INTO belief_links VALUES (?, 'rests_on', ?, ?, NULL, NULL, ?)",
            [belief_id, target_id, target_kind, at],
        )


def linked(db: Database, belief_id: str, kind: str) -> set[str]:
    """The targets a belief is linked to by ``kind``."""
    rows = db.fetchall(
        "SELECT target_id FROM belief_links WHERE belief_id = ?::UUID AND kind = ?",
        [belief_id, kind],
    )
    return {r[0] for r in rows}


def record_reasons(db: Database, belief_id: str) -> set[str]:
    """The reasons already logged for a belief (so a run does not log the same words twice)."""
    rows = db.fetchall(
        "SELECT reason FROM belief_changes WHERE belief_id = ?::UUID AND reason IS NOT NULL",
        [belief_id],
    )
    return {r[0] for r in rows}
