"""Opening the one DuckDB file: the vss extension from its pip package, locks, read-only mode.

DuckDB allows one writing process per file. A second sadie on the same home gets a
``LockedError`` that says who holds it, never a traceback.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from ..errors import LockedError, StorageError

EF_SEARCH = 128

_PID = re.compile(r"PID (\d+)")
# "Could not set lock on file … Conflicting lock is held in … (PID n)". A bare "lock" would also
# match "block" in a corrupt-file error, which must not be reported as "in use".
_LOCKED = re.compile(r"\block\b", re.I)


def vss_extension_path() -> Path:
    """The vss extension shipped by ``duckdb-extension-vss`` for this DuckDB version."""
    import duckdb_extension_vss

    base = Path(duckdb_extension_vss.__file__).parent / "extensions"
    wanted = base / f"v{duckdb.__version__}" / "vss.duckdb_extension"
    if wanted.is_file():
        return wanted
    found = sorted(base.glob("*/vss.duckdb_extension"))
    if not found:
        raise StorageError(
            "the vss extension is not installed",
            fix=f"pip install duckdb-extension-vss=={duckdb.__version__}",
        )
    raise StorageError(
        f"vss extension {found[0].parent.name} does not match DuckDB v{duckdb.__version__}",
        fix=f"pip install duckdb-extension-vss=={duckdb.__version__}",
    )


def _translate(exc: Exception, path: Path) -> StorageError:
    text = str(exc)
    if _LOCKED.search(text):
        pid = _PID.search(text)
        who = f"another sadie (pid {pid.group(1)})" if pid else "another process"
        return LockedError(
            f"the memory at {path} is in use by {who}",
            fix="close the other sadie first, or wait for its ingest to finish",
        )
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return StorageError(f"cannot open the memory at {path}: {first}")


class Database:
    """One DuckDB connection, shared by threads under a lock (TUI workers, the engine)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool) -> None:
        self.con = con
        self.path = path
        self.read_only = read_only
        self.lock = threading.RLock()

    @classmethod
    def open(cls, path: Path, *, read_only: bool = False, wait: float = 1.5) -> Database:
        path = Path(path)
        if not read_only:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(f"cannot create the home folder {path.parent}: {exc}") from exc
        elif not path.exists():
            raise StorageError(f"there is no memory at {path}", fix="run `sadie ingest PATH` first")
        config = {
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        }
        deadline = time.monotonic() + wait
        while True:
            try:
                con = duckdb.connect(str(path), read_only=read_only, config=config)
                break
            except duckdb.Error as exc:
                err = _translate(exc, path)
                # A short wait rides over another process's brief write (a CLI command).
                if isinstance(err, LockedError) and time.monotonic() < deadline:
                    time.sleep(0.1)
                    continue
                raise err from exc
        try:
            con.execute(f"LOAD '{vss_extension_path()}'")
            con.execute("SET hnsw_enable_experimental_persistence = true")
            con.execute(f"SET hnsw_ef_search = {EF_SEARCH}")
            # DuckDB draws progress bars on stdout for long statements; never in sadie.
            con.execute("SET enable_progress_bar = false")
        except duckdb.Error as exc:
            con.close()
            raise StorageError(f"cannot load the vss extension: {exc}") from exc
        db = cls(con, path, read_only)
        if not read_only:
            from .migrations import migrate

            migrate(db)
        return db

    def close(self) -> None:
        with self.lock:
            try:
                self.con.close()
            except duckdb.Error:
                pass

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def execute(self, sql: str, params: Any = None) -> duckdb.DuckDBPyConnection:
        with self.lock:
            try:
                return (
                    self.con.execute(sql, params) if params is not None else self.con.execute(sql)
                )
            except duckdb.Error as exc:
                raise StorageError(f"database error: {str(exc).splitlines()[0]}") from exc

    def fetchall(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.execute(sql, params).fetchall()

    def fetchone(self, sql: str, params: Any = None) -> tuple[Any, ...] | None:
        with self.lock:
            return self.execute(sql, params).fetchone()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.lock:
            self.con.execute("BEGIN TRANSACTION")
            try:
                yield
            except BaseException:
                self.con.execute("ROLLBACK")
                raise
            else:
                self.con.execute("COMMIT")

    def vector_index_used(self, sql: str, params: Any = None) -> bool:
        plan = self.fetchall("EXPLAIN " + sql, params)
        return any("HNSW_INDEX_SCAN" in str(row[1]) for row in plan)
