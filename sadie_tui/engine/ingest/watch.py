"""Notes kept current: watch folders with ``watchfiles`` and bring each batch of changes into
the memory. A new or edited note is re-read (``Session.ingest``: unchanged ones are left
alone), a deleted one leaves the memory (``Session.remove_notes``), and a renamed one keeps its
episode (the ingest finds its text under the old, missing path: ``pipeline._find_moves``).

What a vault's own folders, dot folders, ``.sadieignore`` and files that are not notes change
is not looked at. No UI here: a face passes ``on_batch`` to show the one-line summary.

The watcher sits below the session and does not import it: it is handed anything that reads
and forgets notes (``Notes``: the ``Session``, a ``RemoteSession``, a test's memory).

A watched folder that is deleted is said to be gone (one line), and looked for until it is
back; a folder made again under the same name (a new inode) is watched afresh and read again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import SadieError
from .notes import TEXT_SUFFIXES
from .vault import FolderRules, rules_for

if TYPE_CHECKING:
    from .pipeline import IngestReport

NOTE_SUFFIXES = TEXT_SUFFIXES | {".jsonl"}
#: How long a burst of saves is gathered into one batch (an editor writes a file in steps).
DEBOUNCE_MS = 300
#: How often a gone folder is looked for, in seconds.
LOOK_AGAIN = 0.5


class Notes(Protocol):
    """What the watcher needs of the memory: read notes again, forget gone ones (the
    session's ``ingest`` and ``remove_notes``)."""

    def ingest(self, paths: Sequence[Path]) -> IngestReport: ...
    def remove_notes(self, paths: Sequence[Path]) -> int: ...


class StopFlag(Protocol):
    """What ends the watch: a ``threading.Event``, or anything else with ``is_set``."""

    def is_set(self) -> bool: ...


@dataclass
class Batch:
    """What one batch of changes did to the memory."""

    read: int = 0  # notes added or edited
    new: int = 0  # ... of them read for the first time
    moved: int = 0  # notes found under a new name, their episode kept
    removed: int = 0  # episodes of deleted files
    skipped: list[str] = field(default_factory=list)  # "name: reason"
    error: str = ""  # the batch failed: one line why
    gone: list[str] = field(default_factory=list)  # watched folders deleted, looked for

    @property
    def line(self) -> str:
        """One quiet line ("read 10 notes", "re-read 2 notes, removed 1"), empty when nothing
        changed: a note read for the first time is read, an edited one re-read."""
        parts = []
        edited = self.read - self.new
        if self.new:
            parts.append(f"read {self.new} note{'s' if self.new != 1 else ''}")
        if edited:
            parts.append(f"re-read {edited} note{'s' if edited != 1 else ''}")
        if self.moved:
            parts.append(f"renamed {self.moved}")
        if self.removed:
            parts.append(f"removed {self.removed}")
        if self.skipped:
            parts.append(f"skipped {'; '.join(self.skipped)}")
        if self.error:
            parts.append(f"failed: {self.error}")
        if self.gone:
            parts.append(f"{', '.join(self.gone)} is gone; watching for it to come back")
        return ", ".join(parts)


def roots_of(paths: Iterable[Path]) -> list[Path]:
    """The watched paths as absolute, resolved paths, once each, those that exist."""
    found: dict[Path, None] = {}
    for path in paths:
        real = Path(path).expanduser().resolve()
        if real.exists():
            found[real] = None
    return list(found)


def _root_for(path: Path, roots: Sequence[Path]) -> Path | None:
    for root in roots:
        if path == root or root in path.parents:
            return root
    return None


def is_watched(path: Path, roots: Sequence[Path], rules: dict[Path, FolderRules]) -> bool:
    """Whether a change at ``path`` concerns a note the memory reads: under a root, not in a
    dot folder or a folder the vault's rules leave out, not matched by ``.sadieignore``. A
    path that still exists must be a folder or a note file; a gone one may have been either."""
    root = _root_for(path, roots)
    if root is None:
        return False
    if path == root:
        return True
    if root.is_file():
        return False
    rel = path.relative_to(root)
    if any(part.startswith(".") for part in rel.parts):
        return False
    folder_rules = rules.get(root)
    if folder_rules is None:
        folder_rules = rules[root] = rules_for(root)
    folder = root
    for part in rel.parts[:-1]:
        folder = folder / part
        if folder_rules.folder_reason(folder) is not None:
            return False
    if path.is_dir():
        return folder_rules.folder_reason(path) is None
    if folder_rules.file_reason(path) is not None:
        return False
    return not path.exists() or path.suffix.lower() in NOTE_SUFFIXES


def _said(name: str, reason: str) -> tuple[str, str]:
    """A skip line's key, whichever way its file was named (as given, or under a root)."""
    return str(Path(name).expanduser().resolve()), reason


def apply_changes(
    session: Notes,
    paths: Iterable[Path],
    roots: Sequence[Path],
    said: set[tuple[str, str]] | None = None,
) -> Batch:
    """Bring the changes at ``paths`` into the memory: those that exist are read again
    (first, so a renamed note meets its old episode), those gone are forgotten. ``said``: the
    files already reported skipped, for that reason (each is said once a watch)."""
    rules: dict[Path, FolderRules] = {}
    changed = sorted({Path(p) for p in paths if is_watched(Path(p), roots, rules)})
    present = [p for p in changed if p.exists()]
    gone = [p for p in changed if not p.exists()]
    batch = Batch()
    try:
        if present:
            report = session.ingest(present)
            batch.read = report.added + report.updated - report.moved
            batch.new = report.added  # a moved note counts as updated, not added
            batch.moved = report.moved
            fresh = [
                s for s in report.skipped if said is None or _said(s.name, s.reason) not in said
            ]
            if said is not None:
                said.update(_said(s.name, s.reason) for s in fresh)
            batch.skipped = [f"{s.name}: {s.reason}" for s in fresh]
        if gone:
            batch.removed = session.remove_notes(gone)
    except SadieError as exc:
        batch.error = exc.one_line()
    return batch


def watch_notes(
    session: Notes,
    paths: Sequence[Path],
    on_batch: Callable[[Batch], None],
    *,
    stop: StopFlag | None = None,
    on_ready: Callable[[], None] | None = None,
    debounce_ms: int = DEBOUNCE_MS,
    skipped_before: Iterable[tuple[str, str]] = (),
) -> None:
    """Watch ``paths`` until ``stop`` is set (or ctrl+c, which propagates), applying each
    batch of changes and passing it to ``on_batch``. Once the watcher runs, the paths are read
    once more (what changed before it started is not lost), then ``on_ready`` is called. A
    watched folder deleted is said once and looked for; when it is back it is read again. A
    file skipped is said once, and not at all when it is in ``skipped_before`` (name, reason):
    the ingest just before the watch said it."""
    # lazy: watchfiles loads only when watch_notes runs, off the start-up path
    from watchfiles import watch

    wanted = roots_of(paths)
    if not wanted:
        return
    said = {_said(name, reason) for name, reason in skipped_before}
    while stop is None or not stop.is_set():
        roots = [r for r in wanted if r.exists()]
        if not roots:
            _pause(stop)
            continue
        seen = {r: _identity(r) for r in roots}
        fresh = True  # read the roots once the watcher runs: what changed meanwhile is not lost
        try:
            for changes in watch(
                *roots,
                debounce=debounce_ms,
                step=50,
                stop_event=stop,
                rust_timeout=1000,
                yield_on_timeout=True,  # the first yield says the watcher runs, changes or not
            ):
                changed = {Path(p) for _, p in changes}
                if fresh:
                    fresh = False
                    changed.update(roots)
                batch = apply_changes(session, changed, wanted, said) if changed else Batch()
                moved = [r for r in wanted if _identity(r) != seen.get(r)]
                gone = [r for r in moved if r in seen and not r.exists()]
                if gone:
                    batch.removed += _forget(session, gone)
                    batch.gone = [str(r) for r in gone]
                if batch.line:
                    on_batch(batch)
                if on_ready is not None:
                    on_ready()
                    on_ready = None
                if moved:
                    break  # watch what is there now: a folder gone, back, or made anew
            else:
                return  # stopped
        except FileNotFoundError:
            continue  # a root went away while the watcher started: look again


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _forget(session: Notes, gone: list[Path]) -> int:
    """The notes of deleted watched folders out of the memory (what the watcher may not have
    said about them before it lost sight of the folder)."""
    try:
        return session.remove_notes(gone)
    except SadieError:
        return 0  # said by the next batch that reaches the memory


def _pause(stop: StopFlag | None) -> None:
    """Wait a little before looking for a gone folder again (at once when ``stop`` is set)."""
    wait = getattr(stop, "wait", None)
    if callable(wait):
        wait(LOOK_AGAIN)
    else:
        time.sleep(LOOK_AGAIN)
