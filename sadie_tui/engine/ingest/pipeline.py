"""The ingest path: files → episodes → chunks → embeddings → entities and graph, in one DuckDB.

Unchanged episodes (same content hash) are left alone; a changed one is replaced whole.
Derived records (beliefs, observations, wiki, briefs, today cards, soul) are replaced per
source file. Progress is reported through a callback so the CLI can draw a bar. The SQL is
the store's (``store.episodes``, ``store.derived``); this module decides what to write.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..store import derived as derived_store
from ..store import episodes as episode_store
from ..store import reflection as reflection_store
from ..store.schema import EMBEDDING_DIM
from ..store.vectors import vector_literal
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


def _arrow_vectors(vectors: np.ndarray):
    import pyarrow as pa

    dim = vectors.shape[1] if vectors.ndim == 2 else EMBEDDING_DIM
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel())
    return pa.FixedSizeListArray.from_arrays(flat, dim)


def _known_entities(db: Database) -> dict[str, tuple[str, str]]:
    known = {key: (name, kind) for key, name, kind in episode_store.entities(db)}
    for title, kind in derived_store.wiki_titles(db):
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

    existing = episode_store.content_hashes(db)
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

    replaced = [ep.id for ep in todo if ep.source_key in existing]
    pieces: list[tuple[str, int, str]] = []
    for ep in todo:
        for ordinal, text in enumerate(chunk_text(ep.text)):
            pieces.append((ep.id, ordinal, text))
    report.chunks = len(pieces)

    vectors = np.zeros((len(pieces), EMBEDDING_DIM), dtype=np.float32)
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
    _store_episodes(db, todo, replaced, pieces, vectors, mentions, entity_index)
    report.entities = episode_store.count_entities(db)
    report.elapsed = time.perf_counter() - started
    notify("done", 1, 1)
    return report


def _store_episodes(
    db: Database,
    todo: list[RawEpisode],
    replaced: list[str],
    pieces: list[tuple[str, int, str]],
    vectors: np.ndarray,
    mentions: list,
    entity_index: EntityIndex,
) -> None:
    import pyarrow as pa

    if not todo:
        return
    # Old rows of changed episodes go first, in a commit of their own (see store.episodes):
    # should the next commit fail, the next ingest finds them missing and writes them again.
    episode_store.delete_episodes(db, replaced)
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
        episode_store.insert_episodes(db, ep_table)
        # New and changed notes wait for the next `sadie reflect`, in the same commit.
        reflection_store.mark_pending(db, ids)
        if not pieces:
            return
        first = episode_store.reserve_chunk_ids(db, len(pieces))
        chunk_ids = list(range(first, first + len(pieces)))
        chunk_table = pa.table(
            {
                "id": pa.array(chunk_ids, pa.int64()),
                "episode_id": [p[0] for p in pieces],
                "ordinal": pa.array([p[1] for p in pieces], pa.int32()),
                "text": [p[2] for p in pieces],
                "embedding": _arrow_vectors(vectors),
            }
        )
        episode_store.insert_chunks(db, chunk_table)
        _store_entities(db, chunk_ids, pieces, mentions, entity_index)


def _store_entities(
    db: Database,
    chunk_ids: list[int],
    pieces: list[tuple[str, int, str]],
    mentions: list,
    entity_index: EntityIndex,
) -> None:
    import pyarrow as pa

    ids = episode_store.entity_ids(db)
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
        episode_store.insert_entities(
            db,
            pa.table(
                {
                    "id": pa.array([r[0] for r in new_rows], pa.int32()),
                    "name": [r[1] for r in new_rows],
                    "key": [r[2] for r in new_rows],
                    "kind": [r[3] for r in new_rows],
                }
            ),
        )
    if m_entity:
        episode_store.insert_mentions(
            db,
            pa.table(
                {
                    "entity_id": pa.array(m_entity, pa.int32()),
                    "chunk_id": pa.array(m_chunk, pa.int64()),
                    "episode_id": m_episode,
                    "count": pa.array(m_count, pa.int32()),
                }
            ),
        )
    rebuild_edges(db)


def rebuild_edges(db: Database) -> None:
    """The co-occurrence graph, derived from mentions (kept here for older callers)."""
    episode_store.rebuild_edges(db)


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
            if derived_store.stored_soul(db) == items[-1].fields["text"]:
                continue  # unchanged: a re-ingest must report nothing changed
            derived_store.replace_soul(db, items[-1].fields["text"])
            report.derived[table] = 1
            continue
        if table in ("beliefs", "observations"):
            files = {item.source_key.rsplit("#", 1)[0] for item in items}
            existing = (
                derived_store.belief_hashes(db)
                if table == "beliefs"
                else derived_store.observation_hashes(db)
            )
            wanted = {(item.source_key, _md5_fields(table, item)) for item in items}
            if wanted == {row for row in existing if row[0].rsplit("#", 1)[0] in files}:
                continue
            texts = [item.fields.get("statement") or item.fields["text"] for item in items]
            vectors = embedder.encode(texts)
            # The file's old rows in a commit of their own, as with episodes (their ids return).
            with db.transaction():
                for file in files:
                    if table == "beliefs":
                        derived_store.delete_beliefs_of(db, file)
                    else:
                        derived_store.delete_observations_of(db, file)
            with db.transaction():
                for item, vec in zip(items, vectors, strict=True):
                    rid = episode_id(item.source_key)
                    if table == "beliefs":
                        f = item.fields
                        derived_store.insert_belief(
                            db,
                            id=rid,
                            statement=f["statement"],
                            status=f["status"],
                            confidence=f["confidence"],
                            evidence=f["evidence"],
                            source_key=item.source_key,
                            embedding=vector_literal(vec),
                        )
                    else:
                        f = item.fields
                        derived_store.insert_observation(
                            db,
                            id=rid,
                            source=f["source"],
                            observed_at=f["observed_at"],
                            text=f["text"],
                            source_key=item.source_key,
                            embedding=vector_literal(vec),
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
            current = derived_store.titled_row(db, table, cols, item.source_key)
            if current is not None and [str(v) for v in current] == [str(v) for v in vals]:
                continue
            derived_store.replace_titled(db, table, cols, vals, item.source_key)
            report.derived[table] += 1


def _md5_fields(table: str, item: Derived) -> str:
    import hashlib

    f = item.fields
    if table == "beliefs":
        evidence = "[" + ", ".join(f["evidence"]) + "]"
        text = f"{f['statement']}|{f['status']}|{float(f['confidence'])}|{evidence}"
    else:
        text = f"{f['source']}|{f['observed_at'].strftime('%Y-%m-%dT%H:%M:%S')}|{f['text']}"
    return hashlib.md5(text.encode()).hexdigest()
