"""The memory as a whole: one home folder with its DuckDB file, and what it holds.

``Memory`` is the engine's entry point for everything that is not a conversation turn:
ingest, stats, compaction, the soul summary.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..paths import db_path
from .ingest.embedder import Embedder, shared_embedder
from .ingest.pipeline import IngestReport, Progress, ingest
from .store.db import Database

STAT_TABLES = (
    "episodes",
    "chunks",
    "entities",
    "entity_edges",
    "beliefs",
    "observations",
    "wiki_entries",
    "briefs",
    "today_cards",
    "conversations",
    "messages",
    "chips",
    "turns",
    "retrievals",
)


class Memory:
    def __init__(self, home: Path, db: Database, embedder: Embedder) -> None:
        self.home = home
        self.db = db
        self.embedder = embedder

    @classmethod
    def open(
        cls, home: Path, *, read_only: bool = False, embedder: Embedder | None = None
    ) -> Memory:
        db = Database.open(db_path(home), read_only=read_only)
        return cls(home, db, embedder or shared_embedder())

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ingest(self, paths: Sequence[Path], progress: Progress | None = None) -> IngestReport:
        report = ingest(self.db, paths, self.embedder, progress)
        if report.changed:
            from .retrieval.keyword import rebuild_keyword_index

            rebuild_keyword_index(self)
        return report

    def is_empty(self) -> bool:
        row = self.db.fetchone("SELECT count(*) FROM chunks")
        return not row or row[0] == 0

    def soul(self) -> str:
        soul_file = self.home / "soul.md"
        if soul_file.is_file():
            try:
                text = soul_file.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                text = ""
            if text:
                return text
        row = self.db.fetchone("SELECT text FROM soul ORDER BY id LIMIT 1")
        return row[0] if row else ""

    def stats(self) -> dict[str, Any]:
        counts = {t: int(self.db.fetchone(f"SELECT count(*) FROM {t}")[0]) for t in STAT_TABLES}  # type: ignore[index]
        kinds = dict(
            self.db.fetchall("SELECT kind, count(*) FROM episodes GROUP BY kind ORDER BY 2 DESC")
        )
        span = self.db.fetchone("SELECT min(occurred_at), max(occurred_at) FROM episodes")
        entity_kinds = dict(
            self.db.fetchall("SELECT kind, count(*) FROM entities GROUP BY kind ORDER BY 2 DESC")
        )
        top = self.db.fetchall(
            "SELECT e.name, e.kind, count(DISTINCT m.episode_id) n FROM entities e"
            " JOIN entity_mentions m ON m.entity_id = e.id GROUP BY e.name, e.kind"
            " ORDER BY n DESC, e.name LIMIT 10"
        )
        beliefs = dict(self.db.fetchall("SELECT status, count(*) FROM beliefs GROUP BY status"))
        size = db_path(self.home).stat().st_size if db_path(self.home).exists() else 0
        return {
            "home": str(self.home),
            "database": str(db_path(self.home)),
            "size_bytes": size,
            "counts": counts,
            "episode_kinds": kinds,
            "first": span[0].date().isoformat() if span and span[0] else None,
            "last": span[1].date().isoformat() if span and span[1] else None,
            "entity_kinds": entity_kinds,
            "top_entities": [{"name": n, "kind": k, "episodes": c} for n, k, c in top],
            "beliefs": beliefs,
            "has_soul": bool(self.soul()),
        }

    def compact(self) -> tuple[int, int]:
        """Rewrite the file without dead space (the HNSW index grows it on every write)."""
        path = db_path(self.home)
        before = path.stat().st_size
        fresh = path.with_suffix(".compact.duckdb")
        fresh.unlink(missing_ok=True)
        with self.db.lock:
            con = self.db.con
            name = con.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
            con.execute(f"ATTACH '{fresh}' AS fresh")
            try:
                con.execute(f'COPY FROM DATABASE "{name}" TO fresh')
            finally:
                con.execute("DETACH fresh")
            self.db.close()
        shutil.move(str(fresh), str(path))
        wal = path.with_suffix(".duckdb.wal")
        wal.unlink(missing_ok=True)
        self.db = Database.open(path)
        # COPY FROM DATABASE copies the HNSW index without its options (the metric falls back
        # to l2sq, so cosine queries stop using it): always rebuild it with the cosine metric.
        self.db.execute("DROP INDEX IF EXISTS chunks_embedding")
        self.db.execute(
            "CREATE INDEX chunks_embedding ON chunks USING HNSW (embedding)"
            " WITH (metric = 'cosine')"
        )
        self.db.execute("CHECKPOINT")
        return before, path.stat().st_size
