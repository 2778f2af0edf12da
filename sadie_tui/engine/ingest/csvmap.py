"""CSV files (bank statements, trackers) as observations, by a column mapping the person gives.

A CSV says nothing about which column is what, so it is read only with a mapping:
``sadie ingest bank.csv --map date=Date,text=Description,source=bank``. ``date`` and ``text``
name columns (``text=Description+Category`` joins several); ``source`` is the observations'
source (``csv`` when not given); ``format`` is the date's ``strptime`` format when it is not
ISO-like (``format=%d/%m/%Y``); any other ``name=Column`` is added to the text as
``name: value`` (``amount=Amount``). Each row becomes one observation keyed by its line; a row
without a date or text is skipped by itself, a CSV without a mapping with the flag to use.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime
from pathlib import Path

from ..errors import UsageError
from .dates import parse_when
from .raw import MAX_BYTES, Derived, ReadResult, Skipped, Unreadable, clean_text, read_text
from .reader import CsvMap, Reader, ReadOptions

#: Shown when a CSV comes without a mapping, and in the option's help.
MAP_HINT = "--map date=COLUMN,text=COLUMN[,source=NAME]"
#: Dates tried after the ISO-like ones when no ``format`` is given (unambiguous ones only).
EXTRA_FORMATS = ("%d.%m.%Y", "%d.%m.%Y %H:%M", "%d-%b-%Y", "%d %b %Y")
MAX_CELL = 2000


def parse_map(spec: str) -> CsvMap:
    """``date=Date,text=Description,source=bank`` as a ``CsvMap``; ``UsageError`` naming the
    problem when it is malformed or lacks ``date`` or ``text``."""
    pairs: dict[str, str] = {}
    for part in spec.split(","):
        if not part.strip():
            continue
        name, sep, value = part.partition("=")
        name, value = name.strip().casefold(), value.strip()
        if not sep or not name or not value:
            raise UsageError(f"--map: {part.strip()!r} is not name=COLUMN", fix=MAP_HINT)
        if name in pairs:
            raise UsageError(f"--map: {name} is given twice", fix=MAP_HINT)
        pairs[name] = value
    missing = [name for name in ("date", "text") if name not in pairs]
    if missing:
        raise UsageError(f"--map needs {' and '.join(missing)}=COLUMN", fix=MAP_HINT)
    text = tuple(c.strip() for c in pairs.pop("text").split("+") if c.strip())
    return CsvMap(
        date=pairs.pop("date"),
        text=text,
        source=clean_text(pairs.pop("source", "csv")).strip() or "csv",
        date_format=pairs.pop("format", ""),
        extra=tuple(pairs.items()),
    )


def read_csv(path: Path, key: str, result: ReadResult, mapping: CsvMap | None) -> None:
    """Every row of the CSV at ``path`` into ``result`` as an observation, by ``mapping``;
    without one the file is ``Unreadable`` with the flag that reads it."""
    if mapping is None:
        raise Unreadable(f"a CSV file is read with a column mapping: {MAP_HINT}")
    text = read_text(path)
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(
            text[:8192], delimiters=",;\t|"
        )
    except csv.Error:
        dialect = csv.excel
    # The csv module refuses a cell over 128 KB, and once it has it reads no further: the
    # whole file went as "line 1". The file is at most MAX_BYTES, and so is any cell of it
    # (each is cut to MAX_CELL when read). A process-wide setting; nothing else reads CSV.
    if csv.field_size_limit() < MAX_BYTES:
        csv.field_size_limit(MAX_BYTES)
    reader = csv.DictReader(io.StringIO(text), dialect=dialect)
    try:
        header = [h.strip() for h in reader.fieldnames or []]
    except csv.Error as exc:
        raise Unreadable(f"not a readable CSV file ({exc})") from exc
    reader.fieldnames = header
    absent = [c for c in mapping.columns if c not in header]
    if absent:
        shown = ", ".join(header[:12]) or "none"
        raise Unreadable(f"no column {', '.join(map(repr, absent))} (the columns are: {shown})")
    try:
        for row in reader:
            line = reader.line_num
            _read_row(path, key, line, row, mapping, result)
    except csv.Error as exc:
        raise Unreadable(f"not a readable CSV file (line {reader.line_num}: {exc})") from exc


def _cell(row: dict[str, str | None], column: str) -> str:
    value = row.get(column)
    return clean_text(value if isinstance(value, str) else "").strip()[:MAX_CELL]


def _read_row(
    path: Path,
    key: str,
    line: int,
    row: dict[str, str | None],
    mapping: CsvMap,
    result: ReadResult,
) -> None:
    if not any((v or "").strip() for v in row.values() if isinstance(v, str)):
        return  # a blank line
    name = f"{path}#{line}"
    raw_date = _cell(row, mapping.date)
    when = row_date(raw_date, mapping.date_format)
    if when is None:
        hint = "" if mapping.date_format else " (give its format: format=%d/%m/%Y)"
        result.skipped.append(Skipped(name, f"date {raw_date!r} not understood{hint}"))
        return
    text = " · ".join(t for t in (_cell(row, c) for c in mapping.text) if t)
    if not text:
        result.skipped.append(Skipped(name, "row has no text"))
        return
    extras = [f"{label}: {value}" for label, c in mapping.extra if (value := _cell(row, c))]
    if extras:
        text += " (" + ", ".join(extras) + ")"
    result.derived.append(
        Derived(
            "observations",
            f"{key}#{line}",
            {"source": mapping.source, "observed_at": when, "text": text},
        )
    )


def row_date(value: str, date_format: str = "") -> datetime | None:
    """A cell's date: by ``date_format`` when given, else as ``dates.parse_when`` reads it or
    by one of ``EXTRA_FORMATS``."""
    if not value:
        return None
    if date_format:
        try:
            return datetime.strptime(value, date_format)
        except ValueError:
            return None
    when = parse_when(value)
    if when is not None:
        return when
    for fmt in EXTRA_FORMATS:
        try:
            return datetime.strptime(value, fmt)
        except ValueError:
            continue
    return None


def _read(path: Path, key: str, result: ReadResult, options: ReadOptions) -> None:
    read_csv(path, key, result, options.csv_map)


READER = Reader("CSV", frozenset({".csv"}), _read)
