"""Crash consistency (issue 23): a memory opens after a SIGKILL at any instant, and what was
committed is still there.

First the reported case, deterministic: a process killed right after its migrations (a new
memory's first session, an older memory's upgrade) left a write-ahead log that DuckDB could
not replay, and the memory could never be opened again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb

from sadie_tui.engine.store.db import Database
from sadie_tui.engine.store.migrations import MIGRATIONS, applied

ROOT = Path(__file__).resolve().parents[1]

# Open (and migrate) the memory with the first N migrations only, then die like `kill -9`:
# no close, no checkpoint.
_MIGRATE_AND_DIE = """
import os, signal, sys
from pathlib import Path
from sadie_tui.engine.store import migrations
from sadie_tui.engine.store.db import open_database
del migrations.MIGRATIONS[int(sys.argv[2]):]
db = open_database(Path(sys.argv[1]))
if sys.argv[3] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
db.close()
"""


def _migrate(path: Path, upto: int, *, kill: bool) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [
        sys.executable,
        "-c",
        _MIGRATE_AND_DIE,
        str(path),
        str(upto),
        "kill" if kill else "close",
    ]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == (-9 if kill else 0), done.stderr


def _columns(db: Database, table: str) -> set[str]:
    rows = db.fetchall("SELECT column_name FROM duckdb_columns() WHERE table_name = ?", [table])
    return {row[0] for row in rows}


def test_a_new_memory_killed_in_its_first_session_opens(tmp_path: Path) -> None:
    path = tmp_path / "sadie.duckdb"
    _migrate(path, len(MIGRATIONS), kill=True)
    with Database.open(path) as db:
        assert applied(db) == [name for name, _ in MIGRATIONS]
        assert "cut" in _columns(db, "turns")


def test_an_older_memory_killed_during_its_upgrade_opens(tmp_path: Path) -> None:
    """The upgrade that adds columns (``ALTER TABLE … ADD COLUMN`` on a table with a
    ``current_localtimestamp()`` default) is what DuckDB 1.5 could not replay."""
    path = tmp_path / "sadie.duckdb"
    _migrate(path, len(MIGRATIONS) - 1, kill=False)
    _migrate(path, len(MIGRATIONS), kill=True)
    with Database.open(path, read_only=True) as db:  # doctor's way in: replayed, not written
        assert db.fetchall("SELECT count(*) FROM schema_migrations") == [(len(MIGRATIONS),)]
    with Database.open(path) as db:
        assert "cut" in _columns(db, "turns")


def test_a_killed_memory_opens_in_other_duckdb_clients_once_migrated(tmp_path: Path) -> None:
    """The migrations are checkpointed into the file, so a crash after them leaves no DDL in
    the log for a plain ``duckdb.connect`` (which cannot replay it) to trip on."""
    path = tmp_path / "sadie.duckdb"
    _migrate(path, len(MIGRATIONS), kill=True)
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM schema_migrations").fetchone() == (
            len(MIGRATIONS),
        )
    finally:
        con.close()
