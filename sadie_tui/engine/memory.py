"""The memory as a whole: one home folder with its DuckDB file, and what it holds.

``Memory`` is the engine's entry point for everything that is not a conversation turn:
ingest, stats, compaction, the soul summary.

What is derived from the notes above the memory (the keyword index) keeps up through hooks
called after each write that changed something (``after_write``): retrieval registers its
refresh (``retrieval.keyword.keep_current``), so the memory never imports retrieval.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from ..paths import db_path
from .errors import StorageError
from .ingest.csvmap import CsvMap
from .ingest.embedder import Embedder, shared_embedder
from .ingest.pipeline import IngestReport, Progress, ingest
from .stats import Stats
from .store import conversations, derived, episodes, reflection, soul_file
from .store.db import Database
from .store.stats import memory_counts


class Memory:
    def __init__(self, home: Path, db: Database, embedder: Embedder) -> None:
        self.home = home
        self.db = db
        self.embedder = embedder
        self.interrupted = 0  # replies a process that ended had left streaming, found on open
        # One change of the notes at a time: the app's own watch and another terminal's
        # ingest (through the holder's socket) may both read the same files.
        self.writing = threading.Lock()
        self._after_write: list[Callable[[Memory], object]] = []

    @classmethod
    def open(
        cls, home: Path, *, read_only: bool = False, embedder: Embedder | None = None
    ) -> Memory:
        db = Database.open(db_path(home), read_only=read_only)
        interrupted = 0
        if not read_only:
            try:
                interrupted = conversations.interrupt_leftovers(db)
                reflection.interrupt_leftover_runs(db)  # a `sadie reflect` that was killed
            except StorageError:
                pass  # a full disk: the rows stay as they are and the next open tries again
        memory = cls(home, db, embedder or shared_embedder())
        memory.interrupted = interrupted
        return memory

    def close(self) -> None:
        self.db.close()

    def after_write(self, hook: Callable[[Memory], object]) -> None:
        """Call ``hook(memory)`` after each ingest or removal that changed the notes, under
        the write lock (once per hook, however often it is registered)."""
        if hook not in self._after_write:
            self._after_write.append(hook)

    def _written(self) -> None:
        for hook in self._after_write:
            hook(self)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ingest(
        self,
        paths: Sequence[Path],
        progress: Progress | None = None,
        csv_map: CsvMap | None = None,
    ) -> IngestReport:
        """Read ``paths`` into the memory (CSV files by ``csv_map``); the hooks follow."""
        with self.writing:
            report = ingest(self.db, paths, self.embedder, progress, csv_map)
            if report.changed:
                self._written()
        return report

    def remove_notes(self, paths: Sequence[Path]) -> int:
        """Take what was read from these files (or folders), now deleted, out of the memory:
        their episodes with chunks, vectors and mentions, and their beliefs and observations;
        the hooks follow. Returns how many episodes left."""
        with self.writing:
            return self._remove_notes(paths)

    def _remove_notes(self, paths: Sequence[Path]) -> int:
        keys = [str(Path(p).expanduser().resolve()) for p in paths]
        ids = episodes.episodes_under(self.db, keys)
        episodes.delete_episodes(self.db, ids)
        with self.db.transaction():
            for key in keys:
                derived.delete_beliefs_of(self.db, key)
                derived.delete_observations_of(self.db, key)
        if ids:
            episodes.rebuild_edges(self.db)
            self._written()
        return len(ids)

    def is_empty(self) -> bool:
        return episodes.count_chunks(self.db) == 0

    def soul(self) -> str:
        text = soul_file.read(self.home, self.db.files_key)
        if text:
            return text
        return derived.soul(self.db)

    def stats(self) -> Stats:
        """What the memory holds (``sadie stats``)."""
        found = memory_counts(self.db)
        size = db_path(self.home).stat().st_size if db_path(self.home).exists() else 0
        return Stats(
            home=str(self.home),
            database=str(db_path(self.home)),
            size_bytes=size,
            counts=found.counts,
            episode_kinds=found.episode_kinds,
            first=found.first.date().isoformat() if found.first else None,
            last=found.last.date().isoformat() if found.last else None,
            entity_kinds=found.entity_kinds,
            top_entities=found.top_entities,
            beliefs=found.beliefs,
            has_soul=bool(self.soul()),
        )

    def compact(self) -> tuple[int, int]:
        """Rewrite the file without dead space (the HNSW index grows it on every write)."""
        path = db_path(self.home)
        before = path.stat().st_size
        fresh = path.with_suffix(".compact.duckdb")
        fresh.unlink(missing_ok=True)
        with self.db.lock:
            try:
                self.db.copy_to(fresh)
            except BaseException:
                fresh.unlink(missing_ok=True)  # a full disk: no half-written copy left behind
                raise
            self.db.close()
        shutil.move(str(fresh), str(path))
        wal = path.with_suffix(".duckdb.wal")
        wal.unlink(missing_ok=True)
        self.db = Database.open(path)
        # COPY FROM DATABASE copies the HNSW index without its options (the metric falls back
        # to l2sq, so cosine queries stop using it): always rebuild it with the cosine metric.
        episodes.rebuild_vector_index(self.db)
        return before, path.stat().st_size
