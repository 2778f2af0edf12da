"""Setting aside a write-ahead log that DuckDB cannot replay (``sadie doctor --repair``).

DuckDB refuses to open a file whose log holds an entry it cannot apply (a checksum that does
not match: a disk error, a log copied without its file). The log is kept whole beside the
file as ``sadie.duckdb.wal.broken-<time>``; the entries before the damaged one are replayed
(DuckDB names its position: they are whole commits, checked entry by entry), the rest is lost,
and the repair says how much, and from when, in one line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ...paths import keep_private
from ..errors import BrokenLogError
from .db import connect

# "Corrupt WAL file: entry at byte position 24 computed checksum … does not match …"
_DAMAGED_AT = re.compile(r"entry at byte position (\d+)")


@dataclass(frozen=True)
class LogRepair:
    aside: Path  # the whole log, kept for whoever wants to look at it
    size: int  # bytes of log
    kept: int  # bytes replayed: the entries before the damaged one
    since: datetime  # the file's last checkpoint: what was lost was written after it
    until: datetime  # the log's last write

    def one_line(self) -> str:
        lost = self.size - self.kept
        when = f"{self.since:%Y-%m-%d %H:%M}–{self.until:%H:%M}"
        if self.kept:
            what = (
                f"replayed its first {_size(self.kept)} (up to the damaged entry) and lost the"
                f" {_size(lost)} after it"
            )
        else:
            what = f"lost its {_size(lost)}"
        return (
            f"set the damaged write-ahead log aside as {self.aside.name}: {what}"
            f" (changes written {when}); the memory opens again"
        )


def _size(count: int) -> str:
    return f"{count} bytes" if count < 10_000 else f"{count // 1024} KB"


def wal_path(path: Path) -> Path:
    return Path(str(path) + ".wal")


def repair_log(path: Path) -> LogRepair | None:
    """Set aside the log of the memory file at ``path`` if it cannot be replayed, replay what
    it can, and open the memory to make sure. None when the memory opens as it is;
    any other failure to open (in use, not a database) is raised as it is."""
    try:
        connect(path).close()  # closing checkpoints: the log replayed into the file
        return None
    except BrokenLogError as exc:
        damaged = _DAMAGED_AT.search(exc.message)
    wal = wal_path(path)
    log = wal.read_bytes()
    since = datetime.fromtimestamp(path.stat().st_mtime)
    until = datetime.fromtimestamp(wal.stat().st_mtime)
    aside = wal.with_name(f"{wal.name}.broken-{datetime.now():%Y%m%d-%H%M%S}")
    os.replace(wal, aside)
    kept = int(damaged.group(1)) if damaged else 0
    if kept and not _opens_with(path, log[:kept]):
        kept = 0
    if not kept:
        connect(path).close()  # the last checkpoint alone: raises if even that fails
    return LogRepair(aside, len(log), kept, since, until)


def _opens_with(path: Path, log: bytes) -> bool:
    """Whether the memory opens (and checkpoints) with ``log`` as its write-ahead log."""
    wal = wal_path(path)
    wal.write_bytes(log)
    keep_private(wal)
    try:
        connect(path).close()
    except BrokenLogError:
        wal.unlink(missing_ok=True)
        return False
    return True
