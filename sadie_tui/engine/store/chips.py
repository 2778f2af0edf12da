"""The chips repository: the ``chips`` table, and the look-ups a chip makes into the things it
can point at (wiki entries, episodes, briefs, Today cards, records, entities of the graph).

A titled thing is read from one of ``THING_TABLES`` as (id, title, text, day), where day is
its date (``None`` for wiki entries).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..jsonvalue import JSONObject
from ..wire import dump
from .db import Database, Row

#: (id, title, text, day) of a titled thing; day is None for a wiki entry.
Thing = tuple[str, str, str, datetime | None]

#: A record (an observation) has no title: it is read as one, "2026-03-02 calendar".
_RECORDS_SQL = (
    "(SELECT id, strftime(observed_at, '%Y-%m-%d') || ' ' || source AS title, text,"
    " observed_at FROM observations) AS observations"
)

#: Tables of titled things: what each is read from, and the SQL for a row's date.
THING_TABLES = {
    "wiki_entries": ("wiki_entries", "NULL"),
    "episodes": ("episodes", "occurred_at"),
    "briefs": ("briefs", "occurred_at"),
    "today_cards": ("today_cards", "occurred_at"),
    "observations": (_RECORDS_SQL, "observed_at"),
}


@dataclass(frozen=True)
class Chip:
    id: str
    conversation_id: str
    kind: str
    ref_id: str
    label: str
    snippet: str | None
    created_at: datetime
    added_by: str = "you"  # you | sadie (a wiki page a "who is" message named)

    def to_json(self) -> JSONObject:
        """Its JSON (``wire``): `chips list --json` and the API."""
        data: JSONObject = dump(self)
        return data


# --------------------------------------------------------------------------- chips

_CHIP_SQL = (
    "SELECT CAST(id AS VARCHAR), CAST(conversation_id AS VARCHAR), kind, ref_id, label, snippet,"
    " created_at, coalesce(added_by, 'you') FROM chips"
)


def _chip(row: Row) -> Chip:
    return Chip(*row[:8])


def insert_chip(
    db: Database,
    chip_id: str,
    conversation_id: str,
    *,
    kind: str,
    ref_id: str,
    label: str,
    snippet: str | None,
    created_at: datetime,
    added_by: str = "you",
) -> None:
    db.execute(
        "INSERT INTO chips (id, conversation_id, kind, ref_id, label, snippet, created_at,"
        " added_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [chip_id, conversation_id, kind, ref_id, label, snippet, created_at, added_by],
    )


def get_chip(db: Database, chip_id: str) -> Chip | None:
    row = db.fetchone(_CHIP_SQL + " WHERE id = ?", [chip_id])
    return _chip(row) if row else None


def find_chip(db: Database, conversation_id: str, kind: str, ref_id: str) -> Chip | None:
    """The conversation's chip for this thing, if it is attached already."""
    row = db.fetchone(
        _CHIP_SQL + " WHERE conversation_id = ? AND kind = ? AND ref_id = ?",
        [conversation_id, kind, ref_id],
    )
    return _chip(row) if row else None


def chips_of(db: Database, conversation_id: str) -> list[Chip]:
    """The conversation's chips, in the order they were attached."""
    rows = db.fetchall(
        _CHIP_SQL + " WHERE conversation_id = ? ORDER BY created_at, id", [conversation_id]
    )
    return [_chip(r) for r in rows]


def delete_chip(db: Database, chip_id: str) -> None:
    db.execute("DELETE FROM chips WHERE id = ?", [chip_id])


# --------------------------------------------------------------------------- titled things


def _thing(table: str) -> tuple[str, str]:
    """What the table's titled things are read from, and its date SQL, checked (both become
    SQL text)."""
    if table not in THING_TABLES:
        raise ValueError(f"not a table of titled things: {table!r}")
    return THING_TABLES[table]


def thing(db: Database, table: str, ref: str) -> Thing | None:
    """(id, title, text, day) of the row whose id is ``ref`` (``None`` if none or not a UUID)."""
    table, date_sql = _thing(table)
    row = db.fetchone(
        f"SELECT CAST(id AS VARCHAR), title, text, {date_sql} FROM {table}"
        " WHERE id = TRY_CAST(? AS UUID)",
        [ref],
    )
    return row


def things_titled(
    db: Database, table: str, title: str, *, ignore_case: bool = False
) -> list[Thing]:
    """(id, title, text, day) of at most two rows titled ``title``."""
    table, date_sql = _thing(table)
    match_sql = "lower(title) = lower(?)" if ignore_case else "title = ?"
    return db.fetchall(
        f"SELECT CAST(id AS VARCHAR), title, text, {date_sql} FROM {table}"
        f" WHERE {match_sql} LIMIT 2",
        [title],
    )


def search_things(
    db: Database, table: str, words: Sequence[str], id_guess: str, limit: int
) -> list[tuple[str, str, str, datetime | None, int]]:
    """(id, title, text, day, score) of rows holding every word in their title or text, or
    whose id starts with ``id_guess``: 4 for an id, 3 for the exact title, 2 for every word
    in the title, 1 for a text match; then the most recent. No words: the most recent."""
    table, date_sql = _thing(table)
    params: list[object] = []
    if words:
        in_title_sql = " AND ".join("contains(lower(title), ?)" for _ in words)
        anywhere_sql = " AND ".join(
            "(contains(lower(title), ?) OR contains(lower(text), ?))" for _ in words
        )
        phrase = " ".join(words)
        score_sql = (
            "CASE WHEN starts_with(CAST(id AS VARCHAR), ?) THEN 4"
            " WHEN lower(title) = ? THEN 3"
            f" WHEN {in_title_sql} THEN 2 ELSE 1 END"
        )
        params += [id_guess, phrase, *words]
        where_sql = f"WHERE ({anywhere_sql}) OR starts_with(CAST(id AS VARCHAR), ?)"
        params += [w for w in words for _ in (0, 1)] + [id_guess]
    else:
        score_sql, where_sql = "0", ""
    params.append(limit)
    return db.fetchall(
        f"SELECT CAST(id AS VARCHAR), title, text, {date_sql} AS day, {score_sql} AS score"
        f" FROM {table} {where_sql}"
        " ORDER BY score DESC, day DESC NULLS LAST, title LIMIT ?",
        params,
    )


# --------------------------------------------------------------------------- entities


def entity_by_id(db: Database, entity_id: int) -> tuple[int, str, str] | None:
    """(id, name, kind) of the entity."""
    return db.fetchone("SELECT id, name, kind FROM entities WHERE id = ?", [entity_id])


def entity_by_key(db: Database, key: str) -> tuple[int, str, str] | None:
    return db.fetchone("SELECT id, name, kind FROM entities WHERE key = ?", [key])


def entity_episode_count(db: Database, entity_id: int) -> int:
    """In how many episodes the entity is mentioned."""
    row = db.fetchone(
        "SELECT count(DISTINCT episode_id) FROM entity_mentions WHERE entity_id = ?", [entity_id]
    )
    return int(row[0]) if row else 0


def search_entities(
    db: Database, words: Sequence[str], limit: int
) -> list[tuple[int, str, str, int, datetime | None, int]]:
    """(id, name, kind, episodes, last mention, score) of entities whose key holds every word
    (3 for the exact key, 4 for the id), the most mentioned first. No words: all of them."""
    params: list[object] = []
    if words:
        phrase = " ".join(words)
        all_words_sql = " AND ".join("contains(e.key, ?)" for _ in words)
        score_sql = "CASE WHEN e.key = ? THEN 3 WHEN CAST(e.id AS VARCHAR) = ? THEN 4 ELSE 2 END"
        where_sql = f"WHERE ({all_words_sql}) OR CAST(e.id AS VARCHAR) = ?"
        params += [phrase, phrase, *words, phrase]
    else:
        score_sql, where_sql = "0", ""
    params.append(limit)
    return db.fetchall(
        "SELECT e.id, e.name, e.kind, count(DISTINCT m.episode_id) AS n,"
        f" max(ep.occurred_at) AS last, {score_sql} AS score"
        " FROM entities e LEFT JOIN entity_mentions m ON m.entity_id = e.id"
        " LEFT JOIN episodes ep ON ep.id = m.episode_id"
        f" {where_sql} GROUP BY e.id, e.name, e.kind, e.key"
        " ORDER BY score DESC, n DESC, e.name LIMIT ?",
        params,
    )


def entity_neighbours(db: Database, entity_id: int, limit: int) -> list[tuple[str, str, float]]:
    """(name, kind, weight) of the entities most often mentioned with this one."""
    return db.fetchall(
        "SELECT n.name, n.kind, max(x.weight) AS w FROM ("
        " SELECT dst AS other, weight FROM entity_edges WHERE src = ?"
        " UNION ALL SELECT src AS other, weight FROM entity_edges WHERE dst = ?) x"
        " JOIN entities n ON n.id = x.other WHERE n.id <> ?"
        " GROUP BY n.name, n.kind ORDER BY w DESC, n.name LIMIT ?",
        [entity_id, entity_id, entity_id, limit],
    )


def entity_mentions(db: Database, entity_id: int, limit: int) -> list[tuple[datetime, str, str]]:
    """(day, episode title, chunk text) of the entity's most recent mentions."""
    return db.fetchall(
        "SELECT ep.occurred_at, ep.title, c.text FROM entity_mentions m"
        " JOIN chunks c ON c.id = m.chunk_id JOIN episodes ep ON ep.id = m.episode_id"
        " WHERE m.entity_id = ? ORDER BY ep.occurred_at DESC, c.ordinal LIMIT ?",
        [entity_id, limit],
    )
