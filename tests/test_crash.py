"""Crash consistency (issue 23): a memory opens after a SIGKILL at any instant, and what was
committed is still there.

First the reported case, deterministic: a process killed right after its migrations (a new
memory's first session, an older memory's upgrade) left a write-ahead log that DuckDB could
not replay, and the memory could never be opened again. Then the repair of a log that is
damaged. Then the harness (``tests/support/crash.py``): `sadie ingest`, `chat` and `serve`
killed at seeded random instants, each memory reopened and checked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from sadie_tui.engine.errors import StorageError
from sadie_tui.engine.store.db import Database
from sadie_tui.engine.store.migrations import MIGRATIONS, applied
from tests.support.crash import Case, Workspace, cases, run_case, workspace

ROOT = Path(__file__).resolve().parents[1]

# Open the memory and apply the first N migrations, then die like `kill -9` the moment the last
# one is committed (before ``open_database``'s checkpoint: the log holds them all), or close.
_MIGRATE_AND_DIE = """
import os, signal, sys
from pathlib import Path
from sadie_tui.engine.store import migrations
from sadie_tui.engine.store.db import connect
del migrations.MIGRATIONS[int(sys.argv[2]):]
db = connect(Path(sys.argv[1]))
migrations.migrate(db)
if sys.argv[3] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
db.close()
"""


def _migrate(path: Path, upto: int, *, kill: bool) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    action = "kill" if kill else "close"
    args = [sys.executable, "-c", _MIGRATE_AND_DIE, str(path), str(upto), action]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == (-9 if kill else 0), done.stderr
    if kill:
        assert Path(str(path) + ".wal").stat().st_size > 0  # what the open must replay


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


# Open (and migrate) a new memory, then die like `kill -9`.
_OPEN_AND_DIE = """
import os, signal, sys
from pathlib import Path
from sadie_tui.engine.store.db import open_database
db = open_database(Path(sys.argv[1]))
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_memory_opens_in_other_duckdb_clients_once_migrated(tmp_path: Path) -> None:
    """The migrations are checkpointed into the file, so a crash after them leaves no DDL in
    the log for a plain ``duckdb.connect`` (which cannot replay it) to trip on."""
    path = tmp_path / "sadie.duckdb"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-c", _OPEN_AND_DIE, str(path)]
    assert subprocess.run(args, env=env, timeout=120).returncode == -9
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM schema_migrations").fetchone() == (
            len(MIGRATIONS),
        )
    finally:
        con.close()


@pytest.mark.parametrize("steps", [3, 5])
def test_doctor_calls_a_half_migrated_memory_unfinished_not_broken(
    tmp_path: Path, steps: int
) -> None:
    """Killed after three steps (tables) or five (the HNSW index on an empty table, which
    DuckDB cannot replay read-only: "Could not write file")."""
    from sadie_tui.engine.doctor import check_database, repair

    home = tmp_path / "home"
    _migrate(home / "sadie.duckdb", steps, kill=True)
    checks = {c.name: c for c in check_database(home)}
    assert checks["database"].status == "warn", checks["database"]
    assert f"{len(MIGRATIONS) - steps} of" in checks["database"].detail
    assert "--repair" in (checks["database"].fix or "")
    assert all(c.status != "fail" for c in checks.values()), checks
    assert repair(home) == [
        f"applied {len(MIGRATIONS) - steps} schema steps an interrupted start had left"
    ]
    assert repair(home) == ["nothing to repair"]


# Two commits in the log, then `kill -9`.
_TWO_COMMITS_AND_DIE = """
import os, signal, sys
from pathlib import Path
from sadie_tui.engine.store.db import Database
db = Database.open(Path(sys.argv[1]))
db.execute("INSERT INTO soul (id, text) VALUES (1, 'the first commit')")
db.execute("INSERT INTO soul (id, text) VALUES (2, 'the second commit')")
os.kill(os.getpid(), signal.SIGKILL)
"""


def _damage_the_last_commit(path: Path) -> bytes:
    """Flip one byte near the end of the log, where DuckDB finds a bad checksum (some bytes, a
    length field, read as a torn tail, are dropped without a word). Returns the log as it was."""
    wal = Path(str(path) + ".wal")
    log = wal.read_bytes()
    for offset in range(len(log) - 24, len(log) // 2, -4):
        damaged = bytearray(log)
        damaged[offset] ^= 0xFF
        wal.write_bytes(bytes(damaged))
        try:
            Database.open(path, read_only=True).close()
        except StorageError as exc:
            if "position" in exc.message:
                return log
    raise AssertionError("no byte of the last commit makes the log fail its checksum")


def _sadie(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SADIE_HOME": str(home)}
    env.update(SADIE_CONFIG=str(home.parent / "config"), OLLAMA_HOST="http://127.0.0.1:9")
    command = [sys.executable, "-m", "sadie_tui.cli", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_a_damaged_log_names_its_repair_and_the_repair_keeps_what_it_can(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = home / "sadie.duckdb"
    _migrate(path, len(MIGRATIONS), kill=False)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    died = subprocess.run(
        [sys.executable, "-c", _TWO_COMMITS_AND_DIE, str(path)], env=env, timeout=120
    )
    assert died.returncode == -9
    log = _damage_the_last_commit(path)

    stats = _sadie(home, "stats")
    assert stats.returncode == 3
    assert stats.stderr.count("\n") == 1 and "write-ahead log cannot be replayed" in stats.stderr
    assert "run `sadie doctor --repair`" in stats.stderr
    doctor = _sadie(home, "doctor", "--quick")
    assert doctor.returncode == 1
    line = next(ln for ln in doctor.stdout.splitlines() if "database" in ln)
    assert line.startswith("✗") and "sadie doctor --repair" in line

    repaired = _sadie(home, "doctor", "--quick", "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    said = [ln for ln in repaired.stdout.splitlines() if ln.startswith("repair:")]
    assert (
        len(said) == 1
        and "set the damaged write-ahead log aside as sadie.duckdb.wal.broken-" in said[0]
    )
    assert "replayed its first" in said[0] and "lost the" in said[0]
    assert any(ln.startswith("✓ database") for ln in repaired.stdout.splitlines())
    (aside,) = home.glob("sadie.duckdb.wal.broken-*")
    assert aside.read_bytes() != log and len(aside.read_bytes()) == len(log)  # kept as found
    with Database.open(path) as db:
        assert db.fetchall("SELECT text FROM soul") == [("the first commit",)]
    assert "nothing to repair" in _sadie(home, "doctor", "--quick", "--repair").stdout


# --------------------------------------------------------------------------- the harness


def _count() -> int:
    return int(os.environ.get("SADIE_CRASH_CASES", "20"))


@pytest.fixture(scope="module")
def crash_workspace(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[Workspace]:
    with workspace(tmp_path_factory.mktemp("crash"), embedder) as ws:
        yield ws


@pytest.mark.crash
@pytest.mark.parametrize("case", cases(_count()), ids=str)
def test_a_kill_at_a_random_instant_loses_nothing_committed(
    case: Case, crash_workspace: Workspace, tmp_path: Path
) -> None:
    """`bench/crash.py` (`make crash`) runs 200 of these; SADIE_CRASH_CASES sets how many
    run here."""
    outcome = run_case(crash_workspace, case, tmp_path)
    assert not outcome.problems, outcome.describe()
