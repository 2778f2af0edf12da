"""The ingest path: files → episodes → chunks → embeddings → entities and graph, in one DuckDB.

Unchanged episodes (same content hash) are left alone; a changed one is replaced whole.
Derived records (beliefs, observations, wiki, briefs, today cards, soul) are replaced per
source file. Progress is reported through a callback so the CLI can draw a bar.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .chunker import chunk_text
from .embedder import Embedder
from .entities import EntityIndex
from .readers import Derived, RawEpisode, Skipped, episode_id, read_all

if TYPE_CHECKING:
    from ..store.db import Database

Progress = Callable[[str, int, int], None]


@dataclass
class IngestReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    chunks: int = 0
    entities: int = 0
    derived: dict[str, int] = field(default_factory=dict)
    elapsed: float = 0.0
    files: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or any(self.derived.values()))

    def as_dict(self) -> dict[str, object]:
        return {
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped": [{"path": s.name, "reason": s.reason} for s in self.skipped],
            "chunks": self.chunks,
            "entities": self.entities,
            "derived": self.derived,
            "elapsed": round(self.elapsed, 3),
            "files": self.files,
        }


def _arrow_vectors(vectors: np.ndarray):  # type: ignore[no-untyped-def]
    import pyarrow as pa

    dim = vectors.shape[1] if vectors.ndim == 2 else 384
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel())
    return pa.FixedSizeListArray.from_arrays(flat, dim)


def _known_entities(db: Database) -> dict[str, tuple[str, str]]:
    known = {
        key: (name, kind) for key, name, kind in db.fetchall("SELECT key, name, kind FROM entities")
    }
    for title, kind in db.fetchall("SELECT title, kind FROM wiki_entries"):
        from .entities import KINDS, entity_key

        known[entity_key(title)] = (title, kind if kind in KINDS else "")
    return known


def ingest(
    db: Database,
    paths: Sequence[Path],
    embedder: Embedder,
    progress: Progress | None = None,
) -> IngestReport:
    started = time.perf_counter()
    report = IngestReport()
    notify = progress or (lambda stage, done, total: None)
    notify("reading", 0, 1)
    result = read_all([Path(p) for p in paths])
    report.skipped = result.skipped
    report.files = result.files

    # Derived records first: wiki titles and kinds seed the entity extractor.
    _store_derived(db, result.derived, embedder, report)

    existing = dict(db.fetchall("SELECT source_key, content_hash FROM episodes"))
    todo: list[RawEpisode] = []
    seen_keys: set[str] = set()
    for ep in result.episodes:
        if ep.source_key in seen_keys:
            continue
        seen_keys.add(ep.source_key)
        old = existing.get(ep.source_key)
        if old == ep.content_hash:
            report.unchanged += 1
            continue
        todo.append(ep)
        if old is None:
            report.added += 1
        else:
            report.updated += 1

    pieces: list[tuple[str, int, str]] = []
    for ep in todo:
        for ordinal, text in enumerate(chunk_text(ep.text)):
            pieces.append((ep.id, ordinal, text))
    report.chunks = len(pieces)

    vectors = np.zeros((len(pieces), 384), dtype=np.float32)
    if pieces:
        # Longest first across the whole ingest, so every model batch holds texts of similar
        # length (little padding); the slices only exist to move the progress bar.
        order = np.argsort([-len(p[2]) for p in pieces], kind="stable")
        step = 256
        for start in range(0, len(order), step):
            notify("embedding", start, len(pieces))
            idx = order[start : start + step]
            vectors[idx] = embedder.encode([pieces[i][2] for i in idx])
        notify("embedding", len(pieces), len(pieces))

    notify("storing", 0, 1)
    entity_index = EntityIndex(_known_entities(db))
    entity_index.learn(p[2] for p in pieces)
    mentions = [entity_index.mentions(p[2]) for p in pieces]
    _store_episodes(db, todo, pieces, vectors, mentions, entity_index)
    report.entities = int((db.fetchone("SELECT count(*) FROM entities") or (0,))[0])
    report.elapsed = time.perf_counter() - started
    notify("done", 1, 1)
    return report


def _store_episodes(
    db: Database,
    todo: list[RawEpisode],
    pieces: list[tuple[str, int, str]],
    vectors: np.ndarray,
    mentions: list,  # type: ignore[type-arg]
    entity_index: EntityIndex,
) -> None:
    import pyarrow as pa

    if not todo:
        return
    with db.transaction():
        ids = [ep.id for ep in todo]
        ep_table = pa.table(
            {
                "id": pa.array(ids),
                "kind": [ep.kind for ep in todo],
                "title": [ep.title for ep in todo],
                "source": [ep.source for ep in todo],
                "source_key": [ep.source_key for ep in todo],
                "occurred_at": pa.array([ep.occurred_at for ep in todo], pa.timestamp("us")),
                "salience": [ep.salience for ep in todo],
                "content_hash": [ep.content_hash for ep in todo],
                "tags": pa.array([ep.tags for ep in todo], pa.list_(pa.string())),
                "text": [ep.text for ep in todo],
            }
        )
        db.con.register("_new_episodes", ep_table)
        try:
            db.con.execute(
                "DELETE FROM entity_mentions WHERE episode_id IN (SELECT id::UUID FROM _new_episodes)"
            )
            db.con.execute(
                "DELETE FROM chunks WHERE episode_id IN (SELECT id::UUID FROM _new_episodes)"
            )
            db.con.execute("DELETE FROM episodes WHERE id IN (SELECT id::UUID FROM _new_episodes)")
            db.con.execute(
                "INSERT INTO episodes (id, kind, title, source, source_key, occurred_at, salience,"
                " content_hash, tags, text) SELECT id::UUID, kind, title, source, source_key,"
                " occurred_at, salience, content_hash, tags, text FROM _new_episodes"
            )
        finally:
            db.con.unregister("_new_episodes")
        if not pieces:
            return
        first = int(db.con.execute("SELECT nextval('chunk_ids')").fetchone()[0])  # type: ignore[index]
        chunk_ids = list(range(first, first + len(pieces)))
        # Reserve the whole id range so later nextval() calls cannot collide.
        db.con.execute("SELECT max(nextval('chunk_ids')) FROM range(?)", [max(0, len(pieces) - 1)])
        chunk_table = pa.table(
            {
                "id": pa.array(chunk_ids, pa.int64()),
                "episode_id": [p[0] for p in pieces],
                "ordinal": pa.array([p[1] for p in pieces], pa.int32()),
                "text": [p[2] for p in pieces],
                "embedding": _arrow_vectors(vectors),
            }
        )
        db.con.register("_new_chunks", chunk_table)
        try:
            db.con.execute(
                "INSERT INTO chunks (id, episode_id, ordinal, text, embedding)"
                " SELECT id, episode_id::UUID, ordinal, text, embedding FROM _new_chunks"
            )
        finally:
            db.con.unregister("_new_chunks")
        _store_entities(db, chunk_ids, pieces, mentions, entity_index)


def _store_entities(
    db: Database,
    chunk_ids: list[int],
    pieces: list[tuple[str, int, str]],
    mentions: list,  # type: ignore[type-arg]
    entity_index: EntityIndex,
) -> None:
    import pyarrow as pa

    ids = dict(db.con.execute("SELECT key, id FROM entities").fetchall())
    next_id = max(ids.values(), default=0) + 1
    new_rows: list[tuple[int, str, str, str]] = []
    m_entity: list[int] = []
    m_chunk: list[int] = []
    m_episode: list[str] = []
    m_count: list[int] = []
    for chunk_id, piece, found in zip(chunk_ids, pieces, mentions, strict=True):
        for key, count in found.items():
            if key not in ids:
                ids[key] = next_id
                new_rows.append(
                    (next_id, entity_index.names.get(key, key), key, entity_index.kind_of(key))
                )
                next_id += 1
            m_entity.append(ids[key])
            m_chunk.append(chunk_id)
            m_episode.append(piece[0])
            m_count.append(count)
    if new_rows:
        _insert_arrow(
            db,
            "entities",
            pa.table(
                {
                    "id": pa.array([r[0] for r in new_rows], pa.int32()),
                    "name": [r[1] for r in new_rows],
                    "key": [r[2] for r in new_rows],
                    "kind": [r[3] for r in new_rows],
                }
            ),
            "id, name, key, kind",
        )
    if m_entity:
        _insert_arrow(
            db,
            "entity_mentions",
            pa.table(
                {
                    "entity_id": pa.array(m_entity, pa.int32()),
                    "chunk_id": pa.array(m_chunk, pa.int64()),
                    "episode_id": m_episode,
                    "count": pa.array(m_count, pa.int32()),
                }
            ),
            "entity_id, chunk_id, episode_id::UUID, count",
        )
    rebuild_edges(db)


def _insert_arrow(db: Database, table: str, data, columns: str) -> None:  # type: ignore[no-untyped-def]
    db.con.register("_arrow_in", data)
    try:
        db.con.execute(f"INSERT INTO {table} SELECT {columns} FROM _arrow_in")
    finally:
        db.con.unregister("_arrow_in")


def rebuild_edges(db: Database) -> None:
    """The co-occurrence graph, derived from mentions: weight = chunks naming both."""
    db.con.execute("DELETE FROM entity_edges")
    db.con.execute(
        "INSERT INTO entity_edges SELECT a.entity_id, b.entity_id, count(*)::DOUBLE"
        " FROM entity_mentions a JOIN entity_mentions b"
        " ON a.chunk_id = b.chunk_id AND a.entity_id <> b.entity_id"
        " GROUP BY a.entity_id, b.entity_id"
    )


def _store_derived(
    db: Database, derived: list[Derived], embedder: Embedder, report: IngestReport
) -> None:
    if not derived:
        return
    import uuid

    by_table: dict[str, list[Derived]] = {}
    for item in derived:
        by_table.setdefault(item.table, []).append(item)
    for table, items in by_table.items():
        report.derived[table] = 0
        if table == "soul":
            current = db.fetchone("SELECT text FROM soul WHERE id = 1")
            if current is not None and current[0] == items[-1].fields["text"]:
                continue  # unchanged: a re-ingest must report nothing changed
            db.execute("DELETE FROM soul")
            db.execute("INSERT INTO soul (id, text) VALUES (1, ?)", [items[-1].fields["text"]])
            report.derived[table] = 1
            continue
        if table in ("beliefs", "observations"):
            files = {item.source_key.rsplit("#", 1)[0] for item in items}
            existing = {
                (key, h)
                for key, h in db.fetchall(
                    f"SELECT source_key, md5(CAST(({_row_text(table)}) AS VARCHAR)) FROM {table}"
                )
            }
            wanted = {(item.source_key, _md5_fields(table, item)) for item in items}
            if wanted == {row for row in existing if row[0].rsplit("#", 1)[0] in files}:
                continue
            texts = [item.fields.get("statement") or item.fields["text"] for item in items]
            vectors = embedder.encode(texts)
            with db.transaction():
                for file in files:
                    db.execute(f"DELETE FROM {table} WHERE source_key LIKE ?", [file + "#%"])
                for item, vec in zip(items, vectors, strict=True):
                    from .embedder import vector_literal

                    rid = episode_id(item.source_key)
                    if table == "beliefs":
                        f = item.fields
                        db.execute(
                            "INSERT INTO beliefs VALUES (?, ?, ?, ?, ?::UUID[], ?, ?::FLOAT[384])",
                            [
                                rid,
                                f["statement"],
                                f["status"],
                                f["confidence"],
                                f["evidence"],
                                item.source_key,
                                vector_literal(vec),
                            ],
                        )
                    else:
                        f = item.fields
                        db.execute(
                            "INSERT INTO observations VALUES (?, ?, ?, ?, ?, ?::FLOAT[384])",
                            [
                                rid,
                                f["source"],
                                f["observed_at"],
                                f["text"],
                                item.source_key,
                                vector_literal(vec),
                            ],
                        )
                    report.derived[table] += 1
            continue
        for item in items:
            rid = str(uuid.uuid5(uuid.NAMESPACE_URL, item.source_key))
            f = item.fields
            cols = ["id", "title", "text", "source_key"]
            vals = [rid, f["title"], f["text"], item.source_key]
            if "kind" in f:
                cols.append("kind")
                vals.append(f["kind"])
            if "occurred_at" in f:
                cols.append("occurred_at")
                vals.append(f["occurred_at"])
            current = db.fetchone(
                f"SELECT {', '.join(cols)} FROM {table} WHERE source_key = ?", [item.source_key]
            )
            if current is not None and [str(v) for v in current] == [str(v) for v in vals]:
                continue
            db.execute(f"DELETE FROM {table} WHERE source_key = ?", [item.source_key])
            db.execute(
                f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                vals,
            )
            report.derived[table] += 1


def _row_text(table: str) -> str:
    if table == "beliefs":
        return (
            "statement || '|' || status || '|' || confidence::VARCHAR || '|' || evidence::VARCHAR"
        )
    return "source || '|' || strftime(observed_at, '%Y-%m-%dT%H:%M:%S') || '|' || text"


def _md5_fields(table: str, item: Derived) -> str:
    import hashlib

    f = item.fields
    if table == "beliefs":
        evidence = "[" + ", ".join(f["evidence"]) + "]"
        text = f"{f['statement']}|{f['status']}|{float(f['confidence'])}|{evidence}"
    else:
        text = f"{f['source']}|{f['observed_at'].strftime('%Y-%m-%dT%H:%M:%S')}|{f['text']}"
    return hashlib.md5(text.encode()).hexdigest()
