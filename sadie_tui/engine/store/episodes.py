"""The episodes repository: episodes, their chunks and embeddings, and the entity graph
(entities, mentions, co-occurrence edges, the links between notes and the aliases a person's
page gives its entity) as the ingest path writes them and the memory, doctor and screens read
them.

Batches arrive as Arrow tables built by the ingest pipeline (column names as in the schema;
ids as strings, cast to UUID here), so a whole ingest goes in with a handful of statements.

No transaction here deletes a key and writes it again: DuckDB 1.5 cannot revert such a
commit when the commit itself fails (a full disk), and aborts the process instead of raising
(duckdb/duckdb#25933). Replaced episodes are deleted in a commit of their own
(``delete_episodes``) before the new rows go in; edges are upserted, not rewritten.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..jsonvalue import JSONObject
from .db import Database
from .schema import CREATE_VECTOR_INDEX, DROP_VECTOR_INDEX, EMBEDDING_DIM, VECTOR_TYPE

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class EpisodeRecord:
    """One episode as a reader sees it (the citation's episode screen)."""

    id: str
    title: str
    date: str  # YYYY-MM-DD of occurred_at
    kind: str
    source: str
    text: str
    occurred_at: datetime


def episode_texts(db: Database, episode_ids: Sequence[str]) -> dict[str, str]:
    """The whole text of each of ``episode_ids`` (lower-case id → text)."""
    ids = sorted({i.lower() for i in episode_ids})
    if not ids:
        return {}
    marks_sql = ", ".join("?" for _ in ids)
    rows = db.fetchall(
        f"SELECT id::VARCHAR, text FROM episodes WHERE id::VARCHAR IN ({marks_sql})", ids
    )
    return {str(i).lower(): str(t or "") for i, t in rows}


def get_episode(db: Database, episode_id: str) -> EpisodeRecord | None:
    """The episode with this id, or ``None`` when it is gone (or the id is not a UUID)."""
    row = db.fetchone(
        "SELECT CAST(id AS VARCHAR), title, strftime(occurred_at, '%Y-%m-%d'), kind, source,"
        " text, occurred_at FROM episodes WHERE id = TRY_CAST(? AS UUID)",
        [episode_id],
    )
    return EpisodeRecord(*row) if row else None


def content_hashes(db: Database) -> dict[str, str]:
    """source_key → content hash of every stored episode."""
    return dict(db.fetchall("SELECT source_key, content_hash FROM episodes"))


def stored_episodes(db: Database) -> dict[str, tuple[str, str]]:
    """source_key → (episode id, content hash) of every stored episode."""
    rows = db.fetchall("SELECT source_key, CAST(id AS VARCHAR), content_hash FROM episodes")
    return {key: (eid, digest) for key, eid, digest in rows}


def text_digests(db: Database, source_keys: list[str]) -> dict[str, tuple[str, str]]:
    """md5 of the text → (episode id, source_key) for the episodes of these source keys: how a
    renamed note finds the episode it was."""
    if not source_keys:
        return {}
    rows = db.fetchall(
        "SELECT md5(text), CAST(id AS VARCHAR), source_key FROM episodes"
        " WHERE source_key IN (SELECT unnest(?::VARCHAR[]))",
        [source_keys],
    )
    return {digest: (eid, key) for digest, eid, key in rows}


def episodes_under(db: Database, paths: list[str]) -> list[str]:
    """Ids of the episodes read from these paths: the file itself, its JSONL lines
    (``path#n``) and, for a folder, everything under it."""
    if not paths:
        return []
    rows = db.fetchall(
        "SELECT CAST(e.id AS VARCHAR) FROM episodes e, (SELECT unnest(?::VARCHAR[]) AS p) g"
        " WHERE e.source_key = g.p OR starts_with(e.source_key, g.p || '#')"
        " OR starts_with(e.source_key, g.p || '/')",
        [paths],
    )
    return sorted({row[0] for row in rows})


def count_episodes(db: Database) -> int:
    row = db.fetchone("SELECT count(*) FROM episodes")
    return int(row[0]) if row else 0


def count_chunks(db: Database) -> int:
    row = db.fetchone("SELECT count(*) FROM chunks")
    return int(row[0]) if row else 0


def chunk_texts(db: Database) -> list[tuple[int, str]]:
    """(chunk id, text) of every chunk, by id."""
    return [(int(i), t) for i, t in db.fetchall("SELECT id, text FROM chunks ORDER BY id")]


def delete_episodes(db: Database, ids: list[str]) -> None:
    """Delete the episodes with these ids, with their chunks and mentions. Run it in a
    transaction of its own before ``insert_episodes`` writes the same ids again."""
    if not ids:
        return
    with db.transaction():
        for table in ("entity_mentions", "note_links", "entity_aliases"):
            db.execute(f"DELETE FROM {table} WHERE episode_id IN (SELECT unnest(?::UUID[]))", [ids])
        db.execute("DELETE FROM chunks WHERE episode_id IN (SELECT unnest(?::UUID[]))", [ids])
        db.execute("DELETE FROM episodes WHERE id IN (SELECT unnest(?::UUID[]))", [ids])


def insert_episodes(db: Database, episodes: pa.Table) -> None:
    """Write the episodes of an Arrow table (id, kind, title, source, source_key, occurred_at,
    salience, content_hash, tags, text, page, metadata as JSON text or null); none of their
    ids may be stored already."""
    with db.registered("_new_episodes", episodes):
        db.execute(
            "INSERT INTO episodes (id, kind, title, source, source_key, occurred_at, salience,"
            " content_hash, tags, text, page, metadata) SELECT id::UUID, kind, title, source,"
            " source_key, occurred_at, salience, content_hash, tags, text, page,"
            " metadata::JSON FROM _new_episodes"
        )


def insert_note_links(db: Database, links: pa.Table) -> None:
    """Write an Arrow table of links between notes (episode_id, target: the page key linked)."""
    with db.registered("_arrow_in", links):
        db.execute("INSERT INTO note_links SELECT episode_id::UUID, target FROM _arrow_in")


def episode_metadata(db: Database, episode_id: str) -> JSONObject:
    """What the episode's note says besides its text (links, embeds, aliases, page kind);
    empty for a note without any, or an id that is gone."""

    row = db.fetchone("SELECT metadata FROM episodes WHERE id = TRY_CAST(? AS UUID)", [episode_id])
    if not row or row[0] is None:
        return {}
    value = json.loads(row[0]) if isinstance(row[0], str) else row[0]
    return value if isinstance(value, dict) else {}


def page_entities(db: Database) -> list[tuple[str, str]]:
    """(page name, kind) of every stored note that is an entity's page (a person's page)."""
    rows = db.fetchall(
        "SELECT name, kind FROM (SELECT json_extract_string(metadata, '$.page_name') AS name,"
        " json_extract_string(metadata, '$.page_kind') AS kind FROM episodes"
        " WHERE metadata IS NOT NULL) WHERE name IS NOT NULL AND kind IS NOT NULL"
    )
    return [(str(name), str(kind)) for name, kind in rows]


def alias_keys(db: Database) -> dict[str, str]:
    """Alias key → the key of the entity it names (the first page to claim it wins)."""
    rows = db.fetchall(
        "SELECT a.key, first(e.key ORDER BY a.rowid) FROM entity_aliases a"
        " JOIN entities e ON e.id = a.entity_id GROUP BY a.key"
    )
    return {str(alias): str(key) for alias, key in rows}


def insert_aliases(db: Database, rows: pa.Table) -> None:
    """Write an Arrow table of aliases (key, entity_id, episode_id: the page that gives it)."""
    with db.registered("_arrow_in", rows):
        db.execute(
            "INSERT INTO entity_aliases SELECT key, entity_id, episode_id::UUID FROM _arrow_in"
        )


def set_entity_kinds(db: Database, kinds: dict[int, str]) -> None:
    """Give entities the kind their page declares (a page outranks the words around a name)."""
    for entity_id, kind in kinds.items():
        db.execute(
            "UPDATE entities SET kind = ? WHERE id = ? AND kind <> ?", [kind, entity_id, kind]
        )


def reserve_chunk_ids(db: Database, count: int) -> int:
    """The first of ``count`` consecutive chunk ids, all taken from the sequence."""
    row = db.fetchone("SELECT nextval('chunk_ids')")
    first = int(row[0]) if row else 1
    # Reserve the whole id range so later nextval() calls cannot collide.
    db.execute("SELECT max(nextval('chunk_ids')) FROM range(?)", [max(0, count - 1)])
    return first


def insert_chunks(db: Database, chunks: pa.Table) -> None:
    """Write an Arrow table of chunks (id, episode_id, ordinal, text, embedding)."""
    with db.registered("_new_chunks", chunks):
        db.execute(
            "INSERT INTO chunks (id, episode_id, ordinal, text, embedding)"
            " SELECT id, episode_id::UUID, ordinal, text, embedding FROM _new_chunks"
        )


def entities(db: Database) -> list[tuple[str, str, str]]:
    """(key, name, kind) of every entity."""
    return db.fetchall("SELECT key, name, kind FROM entities")


def people_named(db: Database, keys: Sequence[str]) -> list[str]:
    """The names of the people whose entity key is one of ``keys`` (a message's words and
    word runs, case-folded)."""
    if not keys:
        return []
    marks_sql = ", ".join("?" for _ in keys)
    rows = db.fetchall(
        f"SELECT name FROM entities WHERE kind = 'person' AND key IN ({marks_sql}) ORDER BY name",
        list(keys),
    )
    return [str(r[0]) for r in rows]


def entity_ids(db: Database) -> dict[str, int]:
    """key → id of every entity."""
    return {key: int(i) for key, i in db.fetchall("SELECT key, id FROM entities")}


def count_entities(db: Database) -> int:
    row = db.fetchone("SELECT count(*) FROM entities")
    return int(row[0]) if row else 0


def insert_entities(db: Database, rows: pa.Table) -> None:
    """Write an Arrow table of new entities (id, name, key, kind)."""
    with db.registered("_arrow_in", rows):
        db.execute("INSERT INTO entities SELECT id, name, key, kind FROM _arrow_in")


def insert_mentions(db: Database, rows: pa.Table) -> None:
    """Write an Arrow table of mentions (entity_id, chunk_id, episode_id, count)."""
    with db.registered("_arrow_in", rows):
        db.execute(
            "INSERT INTO entity_mentions"
            " SELECT entity_id, chunk_id, episode_id::UUID, count FROM _arrow_in"
        )


_PAIRS_SQL = (
    "SELECT a.entity_id AS src, b.entity_id AS dst, count(*)::DOUBLE AS weight"
    " FROM entity_mentions a JOIN entity_mentions b"
    " ON a.chunk_id = b.chunk_id AND a.entity_id <> b.entity_id"
    " GROUP BY a.entity_id, b.entity_id"
)


def rebuild_edges(db: Database) -> None:
    """The co-occurrence graph, derived from mentions: weight = chunks naming both. Edges that
    stay are updated in place and gone ones deleted (never deleted and written again)."""
    db.execute(
        f"INSERT INTO entity_edges {_PAIRS_SQL} ON CONFLICT DO UPDATE SET weight = excluded.weight"
    )
    db.execute(
        f"DELETE FROM entity_edges e WHERE NOT EXISTS (SELECT 1 FROM ({_PAIRS_SQL}) p"
        " WHERE p.src = e.src AND p.dst = e.dst)"
    )


def rebuild_vector_index(db: Database) -> None:
    """Drop and recreate the HNSW index with the cosine metric, then checkpoint (an encrypted
    memory keeps none: see ``migrations.m005_vector_index``)."""
    db.execute(DROP_VECTOR_INDEX)
    if not db.encrypted:
        db.execute(CREATE_VECTOR_INDEX)
    db.execute("CHECKPOINT")


def vector_index_in_use(db: Database) -> bool:
    """Whether a nearest-chunks query is planned as an HNSW index scan."""
    probe = "[" + ",".join(["0.05"] * EMBEDDING_DIM) + "]"
    return db.vector_index_used(
        f"SELECT id FROM chunks ORDER BY array_cosine_distance(embedding, ?::{VECTOR_TYPE})"
        " LIMIT 10",
        [probe],
    )


def episode_sources(db: Database, episode_ids: list[str]) -> dict[str, str]:
    """episode id → the file (``path#line`` for a record) it was read from, for the given ids;
    ids that are gone are left out."""
    if not episode_ids:
        return {}
    rows = db.fetchall(
        "SELECT CAST(id AS VARCHAR), source FROM episodes WHERE list_contains(?::UUID[], id)",
        [list(episode_ids)],
    )
    return {str(i): str(s) for i, s in rows}
