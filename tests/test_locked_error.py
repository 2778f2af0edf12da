"""``LockedError.holder``: the pid of the process holding the memory, read from DuckDB's
message in one place (``store.db._translate``); faces read ``holder``/``who``, not the text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sadie_tui.engine.errors import LockedError, StorageError
from sadie_tui.engine.store.db import _translate
from sadie_tui.launch import Launch

DUCKDB_LOCKED = (
    'IO Error: Could not set lock on file "/h/memory.db": Conflicting lock is held in '
    "/usr/bin/python3.12 (PID 4242) by user me. See also https://duckdb.org/docs/"
)


def test_the_holder_is_the_pid_duckdb_names() -> None:
    error = _translate(Exception(DUCKDB_LOCKED), Path("/h/memory.db"))
    assert isinstance(error, LockedError)
    assert error.holder == 4242
    assert error.who == "another sadie (pid 4242)"
    assert error.message == "the memory at /h/memory.db is in use by another sadie (pid 4242)"
    assert error.fix == "close the other sadie first, or wait for its ingest to finish"


def test_a_lock_without_a_pid_has_no_holder() -> None:
    error = _translate(Exception("Could not set lock on file"), Path("/h/memory.db"))
    assert isinstance(error, LockedError)
    assert error.holder is None
    assert error.message.endswith("in use by another process")


def test_not_a_lock() -> None:
    error = _translate(Exception("Corrupt block 7"), Path("/h/memory.db"))
    assert isinstance(error, StorageError) and not isinstance(error, LockedError)


def test_launch_names_the_holder_from_the_error_not_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sadie_tui.serve.remote as remote

    made: dict[str, Any] = {}

    class Client:
        def __init__(self, *args: Any, holder: str) -> None:
            made["holder"] = holder

    monkeypatch.setattr(remote, "answers", lambda path: True)
    monkeypatch.setattr(remote, "RemoteSession", Client)
    launch = Launch.create()
    # The message says nothing of the holder: only ``holder`` does.
    launch._client_of_holder(LockedError("locked", holder=99))
    assert launch.via == made["holder"] == "another sadie (pid 99)"
