"""Opening the one DuckDB file (vss from its pip package, locks, read-only mode, migrations)
and running statements on it, every DuckDB error translated to a ``StorageError``.

DuckDB allows one writing process per file. A second sadie on the same home gets a
``LockedError`` that says who holds it, never a traceback. The connection is private: the
repositories in this package run every statement through ``Database``'s methods.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

from ...paths import DB_NAME, keep_private, make_private_folder, private_umask
from ..errors import BrokenLogError, KeyNeededError, LockedError, SadieError, StorageError
from .keycard import duckdb_key, files_key, key_for_file
from .migrations import migrate
from .schema import VECTOR_INDEX
from .switch import recover

if TYPE_CHECKING:
    import pyarrow as pa

R = TypeVar("R")
#: A statement's parameters: values for its ``?`` in order, or for its ``$name``s by name.
Params = Sequence[object] | Mapping[str, object] | None
#: One result row; the repository that reads it names each column's type as it unpacks it.
Row = tuple[Any, ...]  # Any: DuckDB's stubs type a row's values so (the SQL decides them)

EF_SEARCH = 128
# The memory file's name inside DuckDB (it is attached to an in-memory database: see ``_engine``).
ALIAS = "sadie"

_PID = re.compile(r"PID (\d+)")
# "Could not set lock on file … Conflicting lock is held in … (PID n)". A bare "lock" would also
# match "block" in a corrupt-file error, which must not be reported as "in use".
_LOCKED = re.compile(r"\block\b", re.I)
# 'Failure while replaying WAL file "…": <cause>': the log has an entry DuckDB cannot apply.
_BROKEN_LOG = re.compile(r'Failure while replaying WAL file "[^"]*": ?(.*)')
# "Wrong encryption key used to open the database file", "Cannot open encrypted database … without
# a key".
_ENCRYPTED = re.compile(r"encryption key|encrypted database", re.I)
REPAIR = "run `sadie doctor --repair` to set the damaged log aside"


def httpfs_extension_path() -> Path:
    """The httpfs extension shipped by ``duckdb-extension-httpfs``: DuckDB writes an encrypted
    file only with its OpenSSL (its built-in crypto module reads, but refuses to write)."""
    try:
        # lazy: duckdb_extension_httpfs loads only for an encrypted memory
        import duckdb_extension_httpfs
    except ImportError as exc:
        raise StorageError(
            "an encrypted memory needs the httpfs extension",
            fix=f"pip install duckdb-extension-httpfs=={duckdb.__version__}",
        ) from exc
    base = Path(duckdb_extension_httpfs.__file__).parent / "extensions"
    wanted = base / f"v{duckdb.__version__}" / "httpfs.duckdb_extension"
    if not wanted.is_file():
        raise StorageError(
            f"the httpfs extension does not match DuckDB v{duckdb.__version__}",
            fix=f"pip install duckdb-extension-httpfs=={duckdb.__version__}",
        )
    return wanted


def vss_extension_path() -> Path:
    """The vss extension shipped by ``duckdb-extension-vss`` for this DuckDB version."""
    # lazy: duckdb_extension_vss loads only when vss_extension_path runs, off the start-up path
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


def sql_string(value: object) -> str:
    """``value`` as a quoted SQL string literal, for the few statements that take no
    parameters (LOAD, ATTACH, SET): file paths and an encrypted memory's key (hex digits)
    only, never a person's text."""
    return "'" + str(value).replace("'", "''") + "'"


def _translate(exc: Exception, path: Path) -> SadieError:
    text = str(exc)
    if _LOCKED.search(text):
        pid = _PID.search(text)
        return LockedError.held_by(path, int(pid.group(1)) if pid else None)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    if _ENCRYPTED.search(first):
        # The key card and the file disagree (a card deleted or swapped): never a traceback.
        return KeyNeededError(f"cannot open the memory at {path}: {first}")
    broken = _BROKEN_LOG.search(first)
    if broken:
        return BrokenLogError(
            f"cannot open the memory at {path}: its write-ahead log cannot be replayed"
            f" ({broken.group(1) or first})",
            fix=REPAIR,
        )
    return StorageError(f"cannot open the memory at {path}: {first}")


def _database_error(exc: duckdb.Error) -> StorageError:
    lines = str(exc).splitlines()
    return StorageError(f"database error: {lines[0] if lines else type(exc).__name__}")


#: ``connect``'s ``key`` when the caller does not name one: the home's unlocked key, if its
#: memory is encrypted (``keycard.key_for_file``).
FROM_HOME = b""


def connect(
    path: Path, *, read_only: bool = False, wait: float = 1.5, key: bytes | None = FROM_HOME
) -> Database:
    """The file opened with vss loaded, not migrated (``open_database`` migrates).

    ``key``: the 32-byte key of an encrypted file (None: a plain one); by default the home's,
    checked against its key card before DuckDB touches the file (a wrong or missing key is a
    ``KeyNeededError`` and nothing is written)."""
    path = Path(path)
    if key == FROM_HOME:
        if not read_only and path.name == DB_NAME:
            recover(path.parent)  # a conversion or restore a kill interrupted: finish or undo
        key = key_for_file(path)
    if not read_only:
        try:
            make_private_folder(path.parent)
        except OSError as exc:
            raise StorageError(f"cannot create the home folder {path.parent}: {exc}") from exc
    elif not path.exists():
        raise StorageError(f"there is no memory at {path}", fix="run `sadie ingest PATH` first")
    con = _engine(encrypted=key is not None, temp=Path(str(path) + ".tmp"))
    try:
        _attach(con, path, read_only, wait, key)
    except BaseException:
        con.close()
        raise
    db = Database(con, path, read_only, key)
    if not read_only:
        keep_private(path)
        db.keep_wal_private()
    return db


def _engine(*, encrypted: bool = False, temp: Path | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with vss loaded, ready to attach the memory file.

    Attaching the file replays its write-ahead log, so it comes once a default database exists
    (and vss is loaded, for the HNSW entries the log may hold): DuckDB 1.5 cannot replay an
    ``ALTER TABLE … ADD COLUMN`` on a table with a function default
    (``current_localtimestamp()``) while it is still opening its main database ("Calling
    DatabaseManager::GetDefaultDatabase with no default database set", duckdb#19712), so a
    ``duckdb.connect(file)`` killed after a migration could never be opened again.

    ``encrypted``: httpfs loaded too (DuckDB's OpenSSL, which writes encrypted files), and the
    files a large query spills to kept in ``temp`` beside the memory and encrypted (DuckDB
    leaves them plain, in the working directory, unless told)."""
    config: dict[str, str | bool | int | float | list[str]] = {
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
    }
    con = duckdb.connect(":memory:", config=config)
    try:
        extension_sql = sql_string(vss_extension_path())
        con.execute(f"LOAD {extension_sql}")
        con.execute("SET hnsw_enable_experimental_persistence = true")
        con.execute(f"SET hnsw_ef_search = {EF_SEARCH}")
        # DuckDB draws progress bars on stdout for long statements; never in sadie.
        con.execute("SET enable_progress_bar = false")
        if encrypted:
            httpfs_sql = sql_string(httpfs_extension_path())
            con.execute(f"LOAD {httpfs_sql}")
            if temp is not None:
                temp_sql = sql_string(temp)
                con.execute(f"SET temp_directory = {temp_sql}")
            con.execute("SET temp_file_encryption = true")
    except duckdb.Error as exc:
        con.close()
        raise StorageError(f"cannot load the vss extension: {exc}") from exc
    return con


def attach_options_sql(*, read_only: bool = False, key: bytes | None = None) -> str:
    """ATTACH's options clause for a memory file (empty for a plain, writable one)."""
    options = ["READ_ONLY"] if read_only else []
    if key is not None:
        options.append(f"ENCRYPTION_KEY {sql_string(duckdb_key(key))}")
    return f" ({', '.join(options)})" if options else ""


def _attach(
    con: duckdb.DuckDBPyConnection, path: Path, read_only: bool, wait: float, key: bytes | None
) -> None:
    """Attach the memory file as the default database, riding over a short lock by another
    process."""
    path_sql = sql_string(path)
    options_sql = attach_options_sql(read_only=read_only, key=key)
    attach_sql = f"ATTACH {path_sql} AS {ALIAS}{options_sql}"
    deadline = time.monotonic() + wait
    while True:
        try:
            # A new file is born 0600; one an older sadie made is tightened by the caller.
            with nullcontext() if read_only else private_umask():
                con.execute(attach_sql)
            con.execute(f"USE {ALIAS}")
            return
        except duckdb.Error as exc:
            err = _translate(exc, path)
            # A short wait rides over another process's brief write (a CLI command).
            if isinstance(err, LockedError) and time.monotonic() < deadline:
                time.sleep(0.1)
                continue
            raise err from exc


def open_database(
    path: Path, *, read_only: bool = False, wait: float = 1.5, key: bytes | None = FROM_HOME
) -> Database:
    """The memory file, opened and (unless read-only) migrated to the current schema."""
    db = connect(path, read_only=read_only, wait=wait, key=key)
    if not read_only:
        try:
            db.migrated = migrate(db)
            if db.migrated:
                # The new schema into the file itself, out of the write-ahead log: a crash from
                # here on leaves no DDL to replay, which other DuckDB clients (the duckdb CLI,
                # a plain ``duckdb.connect``) cannot replay (see ``_engine``).
                db.execute("CHECKPOINT")
        except BaseException:
            db.close()
            raise
    return db


class Database:
    """One DuckDB connection, shared by threads under a lock (TUI workers, the engine)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        path: Path,
        read_only: bool,
        key: bytes | None = None,
    ) -> None:
        self._con = con
        self.path = path
        self.read_only = read_only
        self.key = key  # None: a plain file
        self.lock = threading.RLock()
        self._wal = Path(str(path) + ".wal")
        self.migrated: list[str] = []  # the migrations this open applied

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        read_only: bool = False,
        wait: float = 1.5,
        key: bytes | None = FROM_HOME,
    ) -> Database:
        return open_database(path, read_only=read_only, wait=wait, key=key)

    @property
    def encrypted(self) -> bool:
        return self.key is not None

    @property
    def files_key(self) -> bytes | None:
        """The key for the files kept beside an encrypted memory (None for a plain one)."""
        return files_key(self.key) if self.key is not None else None

    def close(self) -> None:
        with self.lock:
            try:
                self._con.close()
            except duckdb.Error:
                pass  # closing twice, or after the file went away: nothing left to lose

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def execute(self, sql: str, params: Params = None) -> duckdb.DuckDBPyConnection:
        with self.lock:
            try:
                cursor = (
                    self._con.execute(sql, params) if params is not None else self._con.execute(sql)
                )
            except duckdb.Error as exc:
                raise _database_error(exc) from exc
            if not self.read_only:
                self.keep_wal_private()
            return cursor

    def keep_wal_private(self) -> None:
        """The write-ahead log 0600 too: DuckDB makes it anew after every checkpoint, with the
        process's umask (which sadie leaves alone, so that exports get the person's)."""
        keep_private(self._wal)

    def _read(self, sql: str, params: Params, read: Callable[[duckdb.DuckDBPyConnection], R]) -> R:
        """Run one statement and ``read`` its answer, both under the lock, errors translated."""
        with self.lock:
            cursor = self.execute(sql, params)
            try:
                return read(cursor)
            except duckdb.Error as exc:
                raise _database_error(exc) from exc

    def fetchall(self, sql: str, params: Params = None) -> list[Row]:
        return self._read(sql, params, lambda cursor: cursor.fetchall())

    def fetchone(self, sql: str, params: Params = None) -> Row | None:
        return self._read(sql, params, lambda cursor: cursor.fetchone())

    def fetch_arrow(self, sql: str, params: Params = None) -> pa.Table:
        """The result as a ``pyarrow.Table`` (columns of vectors without a Python list each)."""
        return self._read(sql, params, lambda cursor: cursor.to_arrow_table())

    @contextmanager
    def registered(self, name: str, data: pa.Table) -> Iterator[None]:
        """``data`` (an Arrow table) visible to statements as the view ``name`` meanwhile."""
        with self.lock:
            try:
                self._con.register(name, data)
            except duckdb.Error as exc:
                raise _database_error(exc) from exc
            try:
                yield
            finally:
                try:
                    self._con.unregister(name)
                except duckdb.Error as exc:
                    raise _database_error(exc) from exc

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Statements inside commit together; any error rolls them back. A failing BEGIN or
        COMMIT is a ``StorageError`` like any other statement's."""
        with self.lock:
            self.execute("BEGIN TRANSACTION")
            try:
                yield
            except BaseException:
                self._rollback()
                raise
            try:
                self._con.execute("COMMIT")
            except duckdb.Error as exc:
                self._rollback()
                raise _database_error(exc) from exc
            self.keep_wal_private()

    def _rollback(self) -> None:
        try:
            self._con.execute("ROLLBACK")
        except duckdb.TransactionException:
            # DuckDB has already ended a transaction whose statement or commit failed; the
            # error that got us here is the one being raised.
            pass
        except duckdb.Error as exc:
            raise _database_error(exc) from exc

    def vector_index_used(self, sql: str, params: Params = None) -> bool:
        plan = self.fetchall("EXPLAIN " + sql, params)
        return any("HNSW_INDEX_SCAN" in str(row[1]) for row in plan)

    def copy_to(self, target: Path, *, key: bytes | None = FROM_HOME) -> None:
        """Copy every table, index and sequence into a new file at ``target``, encrypted with
        ``key`` (by default this memory's own: a compacted copy stays encrypted).

        vss cannot keep an HNSW index in an encrypted file (DuckDB 1.5.5: "The maximum segment
        size of fixed-size allocators is 262096", and the connection is lost), so a plain
        memory copied into an encrypted file goes through an in-memory copy without it."""
        if key == FROM_HOME:
            key = self.key
        with self.lock:
            row = self.fetchone("SELECT current_database()")
            name = str(row[0]) if row else "memory"
            source_sql = '"' + name.replace('"', '""') + '"'
            target_sql = sql_string(target)
            if key is not None and self.key is None:
                httpfs_sql = sql_string(httpfs_extension_path())
                self.execute(f"LOAD {httpfs_sql}")
                self.execute("ATTACH ':memory:' AS scratch")
                try:
                    self.execute(f"COPY FROM DATABASE {source_sql} TO scratch")
                    self.execute(f"DROP INDEX IF EXISTS scratch.main.{VECTOR_INDEX}")
                    self._copy_database("scratch", target_sql, key)
                finally:
                    self.execute("DETACH scratch")
                return
            self._copy_database(source_sql, target_sql, key)

    def _copy_database(self, source_sql: str, target_sql: str, key: bytes | None) -> None:
        self.execute(f"ATTACH {target_sql} AS fresh{attach_options_sql(key=key)}")
        try:
            self.execute(f"COPY FROM DATABASE {source_sql} TO fresh")
        finally:
            self.execute("DETACH fresh")
