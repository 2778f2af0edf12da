"""When a note happened: front matter dates in the usual formats, dated paths, the file's time.

Vault tools write dates their own way (Obsidian ``2026-04-01T09:00``, YAML date objects,
``2026/04/01``, Logseq ``[[Mar 5th, 2026]]``) and name daily notes by date anywhere in the path
(``Daily/2026-03-05 Thursday.md``, ``journals/2026_03_05.md``, ``2026/03/05.md``). A note is
dated by, in order: front matter ``date``/``created`` (and ``created_at``, ``date created``), a
dated path, ``updated``/``modified``, and last the file's modification time — never the day of
the ingest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path

#: Front matter keys that say when a note was written, strongest first.
CREATED_KEYS = ("date", "created", "created_at", "date created", "created date", "creation date")
#: Keys that say when it was last changed: used only when nothing else dates the note.
UPDATED_KEYS = (
    "updated",
    "modified",
    "updated_at",
    "modified_at",
    "date modified",
    "last modified",
)

# A date in a path: 2026-03-05, 2026_03_05, 2026.03.05, or 2026/03/05 across folders.
_DATE_IN_PATH = re.compile(r"(?<!\d)((?:19|20)\d{2})[-_./](\d{1,2})[-_./](\d{1,2})(?!\d)")
_ORDINAL = re.compile(r"(?<=\d)(st|nd|rd|th)\b", re.I)
_WEEKDAY = re.compile(r"^(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+", re.I)
_FORMATS = (
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d",
    "%Y.%m.%d",
    "%Y_%m_%d",
    "%B %d, %Y",
    "%B %d %Y",
    "%b %d, %Y",
    "%b %d %Y",
    "%d %B %Y",
    "%d %b %Y",
    "%B %d, %Y %I:%M %p",
    "%B %d %Y, %I:%M:%S %p",
    "%B %d %Y, %I:%M %p",
)


def parse_when(value: object) -> datetime | None:
    """A front matter or record date as naive local wall time, or None when it is not one.

    Takes YAML date and datetime objects, ISO dates and datetimes (with or without seconds,
    ``T`` or a space, a zone or ``Z``), ``YYYY/MM/DD`` (with a time), ``YYYY.MM.DD``, month-name
    dates (``April 1, 2026``, ``1 April 2026``, ``Mar 5th, 2026``) and Logseq's ``[[…]]``."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().strip('"').strip("'").strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].strip()
    if len(text) > 64:
        return None
    iso = text.replace("Z", "+00:00") if text.endswith("Z") else text
    try:
        return datetime.fromisoformat(iso).replace(tzinfo=None)
    except ValueError:
        pass
    text = _WEEKDAY.sub("", _ORDINAL.sub("", text)).strip()
    for fmt in _FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def _meta_value(meta: Mapping[str, object], keys: tuple[str, ...]) -> datetime | None:
    folded = {
        str(k).strip().casefold().replace("-", " ").replace("_", " "): v for k, v in meta.items()
    }
    for key in keys:
        when = parse_when(folded.get(key.replace("_", " ")))
        if when is not None:
            return when
    return None


def date_from_path(path: Path) -> datetime | None:
    """The first valid date in the file's name, else in its last three path parts
    (``2026/03/05.md``); None when there is none (an impossible one, ``2026-02-31``, is none)."""
    for text in (path.name, "/".join(path.parts[-3:])):
        for match in _DATE_IN_PATH.finditer(text):
            try:
                year, month, day = (int(g) for g in match.groups())
                return datetime(year, month, day)
            except ValueError:
                continue
    return None


def mtime(path: Path) -> datetime:
    """The file's modification time: a note's date when nothing else gives one."""
    try:
        return datetime.fromtimestamp(path.stat().st_mtime)
    except OSError:
        return datetime.now()


def note_date(meta: Mapping[str, object], path: Path) -> datetime:
    """When the note happened: created-type front matter, a dated path, updated-type front
    matter, then the file's modification time (see the module docstring)."""
    return (
        _meta_value(meta, CREATED_KEYS)
        or date_from_path(path)
        or _meta_value(meta, UPDATED_KEYS)
        or mtime(path)
    )
