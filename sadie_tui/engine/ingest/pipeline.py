"""The ingest path: files → episodes → chunks → embeddings → entities and graph, in one DuckDB.

Unchanged episodes (same content hash) are left alone; a changed one is replaced whole.
Derived records (beliefs, observations, wiki, briefs, today cards, soul) are replaced per
source file. Progress is reported through a callback so the CLI can draw a bar. The SQL is
the store's (``store.episodes``, ``store.derived``); this module decides what to write.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..store import beliefs as belief_store
from ..store import derived as derived_store
from ..store import episodes as episode_store
from ..store import reflection as reflection_store
from ..store.derived import Measured
from ..store.ids import now
from ..store.schema import EMBEDDING_DIM
from ..store.vectors import vector_literal
from .chunker import chunk_text
from .embedder import Embedder
from .entities import KINDS, EntityIndex, entity_key
from .markup import page_key
from .measures import UNITS
from .raw import DerivedFields, Quote
from .readers import Derived, RawEpisode, Skipped, episode_id, read_all
from .summary import IngestSummary, SkippedFile

if TYPE_CHECKING:
    from ..store.db import Database
    from .csvmap import CsvMap

Progress = Callable[[str, int, int], None]


@dataclass
class IngestReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    #: Left out on purpose (a vault's own folders, templates, attachments, ``.sadieignore``).
    ignored: list[Skipped] = field(default_factory=list)
    chunks: int = 0
    entities: int = 0
    derived: dict[str, int] = field(default_factory=dict)
    elapsed: float = 0.0
    files: int = 0
    #: Of ``updated``: notes found under a new path (renamed or moved), their episode kept.
    moved: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or any(self.derived.values()))

    def summary(self) -> IngestSummary:
        """The report as it stands, frozen (``sadie ingest --json``)."""
        return IngestSummary(
            added=self.added,
            updated=self.updated,
            unchanged=self.unchanged,
            skipped=[SkippedFile(s.name, s.reason) for s in self.skipped],
            ignored=[SkippedFile(s.name, s.reason) for s in self.ignored],
            chunks=self.chunks,
            entities=self.entities,
            derived=dict(self.derived),
            elapsed=round(self.elapsed, 3),
            files=self.files,
            moved=self.moved,
        )


def _arrow_vectors(vectors: np.ndarray):
    # lazy: pyarrow loads only when _arrow_vectors runs, off the start-up path
    import pyarrow as pa

    dim = vectors.shape[1] if vectors.ndim == 2 else EMBEDDING_DIM
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel())
    return pa.FixedSizeListArray.from_arrays(flat, dim)


def _known_entities(db: Database) -> dict[str, tuple[str, str]]:
    """Entity key → (name, fixed kind or ""): entities already stored are known by name (their
    kind stays theirs, but it fixes nothing); wiki titles and person pages fix their kind."""
    known = {key: (name, "") for key, name, _kind in episode_store.entities(db)}
    for title, kind in derived_store.wiki_titles(db):
        known[entity_key(title)] = (title, kind if kind in KINDS else "")
    for name, kind in episode_store.page_entities(db):
        if kind in KINDS:
            known[entity_key(name)] = (name, kind)
    return known


def entity_index_for(db: Database, episodes: Sequence[RawEpisode]) -> EntityIndex:
    """The extractor for an ingest of ``episodes``: what the memory knows, with the entity
    pages among them (a person's page, its aliases) added."""
    index = EntityIndex(_known_entities(db), episode_store.alias_keys(db))
    for ep in episodes:
        if ep.page_kind in KINDS:
            index.add_page(ep.page_name, ep.page_kind, ep.aliases)
    return index


def ingest(
    db: Database,
    paths: Sequence[Path],
    embedder: Embedder,
    progress: Progress | None = None,
    csv_map: CsvMap | None = None,
) -> IngestReport:
    started = time.perf_counter()
    report = IngestReport()
    notify = progress or (lambda stage, done, total: None)
    notify("reading", 0, 1)
    result = read_all([Path(p) for p in paths], csv_map)
    report.skipped = result.skipped
    report.ignored = result.ignored
    report.files = result.files

    # Derived records first: wiki titles and kinds seed the entity extractor.
    _store_derived(db, result.derived, embedder, report)

    stored = episode_store.stored_episodes(db)
    todo: list[RawEpisode] = []
    seen_keys: set[str] = set()
    for ep in result.episodes:
        if ep.source_key in seen_keys:
            continue
        seen_keys.add(ep.source_key)
        old = stored.get(ep.source_key)
        if old is not None and old[1] == ep.content_hash:
            report.unchanged += 1
            continue
        todo.append(ep)
        if old is None:
            report.added += 1
        else:
            ep.stored_id = old[0]  # replaced under the id it has (a renamed note's is kept)
            report.updated += 1
    report.moved = _find_moves(db, [ep for ep in todo if ep.source_key not in stored], stored)
    report.added -= report.moved
    report.updated += report.moved

    replaced = [ep.id for ep in todo if ep.stored_id]
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
    entity_index = entity_index_for(db, todo)
    entity_index.learn(p[2] for p in pieces)
    mentions = [entity_index.mentions(p[2]) for p in pieces]
    _store_episodes(db, todo, replaced, pieces, vectors, mentions, entity_index)
    report.entities = episode_store.count_entities(db)
    report.elapsed = time.perf_counter() - started
    notify("done", 1, 1)
    return report


def _find_moves(db: Database, new: list[RawEpisode], stored: dict[str, tuple[str, str]]) -> int:
    """A new note with the text of a stored one whose file is gone is that note renamed or
    moved: it keeps the stored episode's id (its citations still lead to it) and takes the
    new path. Returns how many were found."""
    if not new:
        return 0
    files: dict[str, bool] = {}  # a JSONL file's lines share one look at the disk
    gone = []
    for key in stored:
        file = key.split("#", 1)[0]
        if file not in files:
            files[file] = Path(file).is_absolute() and not Path(file).exists()
        if files[file]:
            gone.append(key)
    digests = episode_store.text_digests(db, gone)
    moved = 0
    for ep in new:
        found = digests.pop(hashlib.md5(ep.text.encode()).hexdigest(), None)
        if found is not None:
            ep.stored_id = found[0]
            moved += 1
    return moved


def _store_episodes(
    db: Database,
    todo: list[RawEpisode],
    replaced: list[str],
    pieces: list[tuple[str, int, str]],
    vectors: np.ndarray,
    mentions: list[Counter[str]],
    entity_index: EntityIndex,
) -> None:
    # lazy: pyarrow loads only when _store_episodes runs, off the start-up path
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
                "page": pa.array([ep.page or None for ep in todo], pa.string()),
                "metadata": pa.array(
                    [json.dumps(ep.metadata) if ep.metadata else None for ep in todo], pa.string()
                ),
            }
        )
        episode_store.insert_episodes(db, ep_table)
        links = [(ep.id, page_key(link)) for ep in todo for link in ep.links]
        if links:
            episode_store.insert_note_links(
                db,
                pa.table({"episode_id": [a for a, _ in links], "target": [b for _, b in links]}),
            )
        # New and changed notes wait for the next `sadie reflect`, in the same commit.
        reflection_store.mark_pending(db, ids)
        if not pieces:
            _store_pages(db, todo)
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
        _store_pages(db, todo)


def _store_entities(
    db: Database,
    chunk_ids: list[int],
    pieces: list[tuple[str, int, str]],
    mentions: list[Counter[str]],
    entity_index: EntityIndex,
) -> None:
    # lazy: pyarrow loads only when _store_entities runs, off the start-up path
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


def _store_pages(db: Database, todo: list[RawEpisode]) -> None:
    """Entity pages among ``todo``: their entity (made when nothing mentions it yet), the
    kind the page gives it, and its aliases."""
    # lazy: pyarrow loads only when _store_pages runs, off the start-up path
    import pyarrow as pa

    pages = [ep for ep in todo if ep.page_kind in KINDS and ep.page_name]
    if not pages:
        return
    ids = episode_store.entity_ids(db)
    next_id = max(ids.values(), default=0) + 1
    new_rows: list[tuple[int, str, str, str]] = []
    kinds: dict[int, str] = {}
    alias_rows: list[tuple[str, int, str]] = []
    for ep in pages:
        key = entity_key(ep.page_name)
        if key not in ids:
            ids[key] = next_id
            new_rows.append((next_id, ep.page_name, key, ep.page_kind))
            next_id += 1
        else:
            kinds[ids[key]] = ep.page_kind
        for alias in dict.fromkeys(entity_key(a) for a in ep.aliases):
            if alias and alias != key:
                alias_rows.append((alias, ids[key], ep.id))
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
    episode_store.set_entity_kinds(db, kinds)
    if alias_rows:
        episode_store.insert_aliases(
            db,
            pa.table(
                {
                    "key": [r[0] for r in alias_rows],
                    "entity_id": pa.array([r[1] for r in alias_rows], pa.int32()),
                    "episode_id": [r[2] for r in alias_rows],
                }
            ),
        )


def rebuild_edges(db: Database) -> None:
    """The co-occurrence graph, derived from mentions (kept here for older callers)."""
    episode_store.rebuild_edges(db)


def _store_derived(
    db: Database, derived: list[Derived], embedder: Embedder, report: IngestReport
) -> None:
    if not derived:
        return

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
            same = wanted == {row for row in existing if row[0].rsplit("#", 1)[0] in files}
            if same and table == "beliefs":
                same = _quote_rows(items) == {
                    row
                    for row in derived_store.stated_quotes(db)
                    if row[0].rsplit("#", 1)[0] in files
                }
            if same:
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
                        _store_quotes(db, rid, f.get("quotes", []))
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
                            measure=_measured(f),
                        )
                    report.derived[table] += 1
            continue
        for item in items:
            rid = str(uuid.uuid5(uuid.NAMESPACE_URL, item.source_key))
            f = item.fields
            cols = ["id", "title", "text", "source_key"]
            vals: list[object] = [rid, f["title"], f["text"], item.source_key]
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


def _measured(fields: DerivedFields) -> Measured | None:
    """The figure an observation states, as its row keeps it (None: it states none)."""
    if "measure" not in fields:
        return None
    start, end = fields["period"]
    return (fields["measure"], fields["value"], UNITS[fields["measure"]], start, end)


def _store_quotes(db: Database, belief_id: str, quotes: Sequence[Quote]) -> None:
    """A stated belief's quotes (``beliefs.jsonl``), as its evidence quotes: no run made
    them (``run_id`` None), so a re-ingest of the file replaces them and nothing else."""
    at = now()
    for q in quotes:
        belief_store.add_evidence(
            db, belief_id, q.episode_id, q.quote, verbatim=True, stance=q.stance, run_id=None, at=at
        )


def _quote_rows(items: Sequence[Derived]) -> set[tuple[str, str, str, str]]:
    """(belief source key, episode id, quote, stance) of every quote ``items`` give."""
    return {
        (item.source_key, q.episode_id, q.quote, q.stance)
        for item in items
        for q in item.fields.get("quotes", [])
    }


def _md5_fields(table: str, item: Derived) -> str:

    f = item.fields
    if table == "beliefs":
        evidence = "[" + ", ".join(f["evidence"]) + "]"
        text = f"{f['statement']}|{f['status']}|{float(f['confidence'])}|{evidence}"
    else:
        text = f"{f['source']}|{f['observed_at'].strftime('%Y-%m-%dT%H:%M:%S')}|{f['text']}"
        text += f"|{f.get('measure') or '-'}"  # a row stored before its figure was read: rewritten
    return hashlib.md5(text.encode()).hexdigest()
