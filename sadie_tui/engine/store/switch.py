"""Replacing the memory file whole (encrypting it, changing its key, restoring a backup), so
that a kill at any instant leaves the old memory or the new one, never neither.

The new file is written beside the old one (``sadie.duckdb.new``, with its key card as
``sadie.keycard.json.new``), flushed to the disk, and only then does a marker say it is
``ready``; finishing is renames. The marker (``sadie.switch.json``) is written before anything
else and removed last, so the next open finds an interrupted switch and either rolls it back
(not ready: the staged files go, the old memory is untouched) or finishes it (ready: the
renames are redone, each one idempotent). A switch holds ``sadie.switch.lock`` from start to
end, so a second process never rolls back a switch that is still running.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...paths import DB_NAME
from ..errors import StorageError
from .keycard import CARD_NAME, KeyCard, write_card

MARKER = "sadie.switch.json"
LOCK = "sadie.switch.lock"
STAGED_DB = DB_NAME + ".new"
STAGED_CARD = CARD_NAME + ".new"
#: Files derived from the database that a new file makes stale (rebuilt on the next search).
DERIVED = ("bm25", "bm25.sealed", DB_NAME + ".tmp")


def staged_db(home: Path) -> Path:
    return Path(home) / STAGED_DB


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_folder(folder: Path) -> None:
    """The folder's entries (a rename, a new file) on the disk too."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # a platform that cannot open folders: the renames are as durable as it allows
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_marker(home: Path, body: dict[str, str]) -> None:
    tmp = Path(home) / (MARKER + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w", encoding="utf-8") as out:
        json.dump(body, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, Path(home) / MARKER)
    fsync_folder(Path(home))


def _read_marker(home: Path) -> dict[str, str] | None:
    try:
        body = json.loads((Path(home) / MARKER).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {"phase": "preparing", "what": "switch"}  # torn: never got as far as ready
    return body if isinstance(body, dict) else {"phase": "preparing", "what": "switch"}


@contextmanager
def _locked(home: Path, *, wait: bool) -> Iterator[bool]:
    """Hold the home's switch lock meanwhile; yields False (``wait`` off) when another process
    has it."""
    fd = os.open(Path(home) / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock


class Switch:
    """One replacement of the memory file, under way (see ``switching``)."""

    def __init__(self, home: Path, what: str, card: KeyCard | None) -> None:
        self.home = Path(home)
        self.what = what
        self.card = card

    @property
    def staged(self) -> Path:
        return staged_db(self.home)

    def ready(self) -> None:
        """The staged file is complete: flush it and mark the switch as ready to finish."""
        fsync_file(self.staged)
        if self.card is not None:
            write_card(self.home / STAGED_CARD, self.card)
        fsync_folder(self.home)
        card = "set" if self.card is not None else "remove"
        _write_marker(self.home, {"phase": "ready", "what": self.what, "card": card})

    def finish(self) -> None:
        _finish(self.home, _read_marker(self.home) or {})


@contextmanager
def switching(home: Path, what: str, card: KeyCard | None) -> Iterator[Switch]:
    """A switch of ``home``'s memory file to the one the caller stages in ``Switch.staged``
    (with ``card``: encrypted under it; None: plain). The caller calls ``ready`` once the staged
    file is closed, then ``finish``; an error before ``ready`` rolls everything back."""
    home = Path(home)
    with _locked(home, wait=False) as mine:
        if not mine:
            raise StorageError(f"the memory at {home} is being converted by another sadie")
        if _read_marker(home) is not None:
            _recover(home)
        _write_marker(home, {"phase": "preparing", "what": what})
        _roll_back_files(home)  # a leftover from a switch that died before its marker
        switch = Switch(home, what, card)
        try:
            yield switch
        except BaseException:
            if (_read_marker(home) or {}).get("phase") != "ready":
                _roll_back_files(home)
                (home / MARKER).unlink(missing_ok=True)
            raise


def _roll_back_files(home: Path) -> None:
    for name in (STAGED_DB, STAGED_DB + ".wal", STAGED_CARD):
        (home / name).unlink(missing_ok=True)


def _finish(home: Path, marker: dict[str, str]) -> None:
    """Redo the renames of a ready switch (each one is skipped when it has already happened)."""
    staged_card = home / STAGED_CARD
    if staged_card.exists():
        os.replace(staged_card, home / CARD_NAME)
    elif marker.get("card") == "remove":
        (home / CARD_NAME).unlink(missing_ok=True)
    staged = home / STAGED_DB
    if staged.exists():
        # The old file's log (none after a clean close) must never be replayed on the new file.
        (home / (DB_NAME + ".wal")).unlink(missing_ok=True)
        os.replace(staged, home / DB_NAME)
    for name in DERIVED:
        path = home / name
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    fsync_folder(home)
    (home / MARKER).unlink(missing_ok=True)
    fsync_folder(home)


def _recover(home: Path) -> str | None:
    marker = _read_marker(home)
    if marker is None:
        return None
    what = marker.get("what", "switch")
    if marker.get("phase") == "ready":
        _finish(home, marker)
        return f"finished the interrupted {what}"
    _roll_back_files(home)
    (home / MARKER).unlink(missing_ok=True)
    fsync_folder(home)
    return f"rolled back the interrupted {what}: the memory is as it was before it"


def recover(home: Path) -> str | None:
    """Finish or roll back a switch a killed process left in ``home`` (what was done, in
    words; None when there was none). Cheap when there is none: one stat."""
    home = Path(home)
    if not (home / MARKER).exists():
        return None
    with _locked(home, wait=False) as mine:
        if not mine:
            raise StorageError(
                f"the memory at {home} is being converted by another sadie",
                fix="wait for its `sadie encrypt`, `passphrase` or `restore` to finish",
            )
        return _recover(home)
