"""What a reader declares: the suffixes it reads, an optional sniff, and how it reads a file.

Each format's module declares its ``Reader`` (``notes.READER``, ``calendar.READER`` …) and
``readers.READERS`` lists them; a file goes to the first reader that takes its suffix and whose
sniff, if it has one, accepts it: a reader with a sniff (``beliefs.jsonl``, a page under
``wiki/``) is preferred to one without (any ``.jsonl``, any note) for the same suffix.
Adding a format is one module with one declaration, and its line in the table.

What a person tells the ingest about a format reaches its reader as ``ReadOptions`` (a CSV
file's ``CsvMap``: ``csvmap`` reads it, the faces parse it from ``--map``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .raw import ReadResult


@dataclass(frozen=True)
class CsvMap:
    """Which columns of a CSV are the date and the text, and what source the rows are."""

    date: str
    text: tuple[str, ...]
    source: str = "csv"
    date_format: str = ""
    extra: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (label, column)

    @property
    def columns(self) -> list[str]:
        """Every column the mapping reads."""
        return [self.date, *self.text, *(column for _, column in self.extra)]


@dataclass(frozen=True)
class ReadOptions:
    """What a person told the ingest about some formats (a CSV file's column mapping)."""

    csv_map: CsvMap | None = None


#: Read the file at ``path`` (its memory key ``key``) into the result, or raise ``Unreadable``
#: (named and skipped) or ``LeftOut`` (named and ignored).
ReadFile = Callable[[Path, str, "ReadResult", ReadOptions], None]


@dataclass(frozen=True)
class Reader:
    """One format: its name (as said in messages and tests), the file suffixes it reads
    (lower case, with the dot), how it reads one, and a sniff that must also accept a file."""

    name: str
    suffixes: frozenset[str]
    read: ReadFile
    sniff: Callable[[Path], bool] | None = None


def pick(readers: tuple[Reader, ...], path: Path) -> Reader | None:
    """The reader for ``path``: the first whose sniff accepts it among those that take its
    suffix, else the first of them with no sniff; None when no reader takes the suffix."""
    suffix = path.suffix.lower()
    fitting = [r for r in readers if suffix in r.suffixes]
    for reader in fitting:
        if reader.sniff is not None and reader.sniff(path):
            return reader
    return next((r for r in fitting if r.sniff is None), None)
