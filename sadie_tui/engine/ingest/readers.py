"""Reading files into raw episodes and derived records; every unreadable file is named and skipped.

Which module reads a file is declared, not decided here: ``READERS`` lists each format's
``Reader`` (``reader``: its suffixes, an optional sniff, its read function), and a file goes
to the one that takes it (``reader.pick``). Markdown and text notes (``notes``: front matter,
the vault's markup, dates, person pages) and JSONL records (``jsonl``) become episodes;
``beliefs.jsonl``, ``observations.jsonl``, ``soul.md`` and pages under ``wiki/``, ``briefs/``
and ``today/`` become derived records (``derived_files``); calendars, workouts, Day One
exports and mapped CSV files are read by ``calendar``, ``workouts``, ``dayone`` and
``csvmap``. What every reader makes is in ``raw``. Here: finding the files under the paths
given, with the folders and templates a vault keeps beside its notes (``vault``) left out and
named in ``ReadResult.ignored``, and reading each one by its reader.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from . import calendar, csvmap, dayone, derived_files, jsonl, notes, workouts
from .derived_files import read_beliefs as read_beliefs
from .notes import TEXT_SUFFIXES as TEXT_SUFFIXES
from .notes import split_front_matter as split_front_matter
from .raw import MAX_BYTES as MAX_BYTES
from .raw import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from .raw import NAMESPACE as NAMESPACE
from .raw import Derived as Derived
from .raw import LeftOut, ReadResult, Skipped, Unreadable, _is_utf8, _os_reason
from .raw import RawEpisode as RawEpisode
from .raw import clean_text as clean_text
from .raw import episode_id as episode_id
from .raw import shown_name as shown_name
from .reader import CsvMap, Reader, ReadOptions, pick
from .vault import FolderRules, rules_for

#: Every format sadie reads. A reader with a sniff is preferred to one without for the same
#: suffix; between two whose sniffs both accept a file, the one listed first.
READERS: tuple[Reader, ...] = (
    derived_files.BELIEFS,
    derived_files.OBSERVATIONS,
    derived_files.SOUL,
    derived_files.PAGES,
    notes.READER,
    jsonl.READER,
    calendar.READER,
    workouts.GPX,
    workouts.FIT,
    dayone.READER,
    csvmap.READER,
)
#: Every suffix some reader takes: other files in a folder are not notes.
SUFFIXES = frozenset().union(*(r.suffixes for r in READERS))
#: Folders nested deeper than this below a given path are named and not read.
MAX_FOLDER_DEPTH = 64


def reader_for(path: Path) -> Reader | None:
    """The reader that takes ``path`` (by suffix, then sniff), or None for a type no reader
    takes."""
    return pick(READERS, path)


def read_path(path: Path, result: ReadResult, csv_map: CsvMap | None = None) -> None:
    """Read one file into ``result`` by its reader; failures become a ``Skipped`` naming the
    file. CSV files are read by ``csv_map`` (``csvmap``), and skipped without one."""
    key = str(path.resolve())
    try:
        reader = reader_for(path)
        if reader is None:
            raise Unreadable(f"unsupported file type ({path.suffix or 'no extension'})")
        reader.read(path, key, result, ReadOptions(csv_map=csv_map))
        result.files += 1
    except Unreadable as exc:
        result.skipped.append(Skipped(str(path), str(exc)))
    except LeftOut as exc:
        result.ignored.append(Skipped(str(path), str(exc)))
    except RecursionError:  # a parser's own recursion on input the bounds above missed
        result.skipped.append(Skipped(str(path), "nested too deeply to read"))


def discover(paths: list[Path], result: ReadResult) -> list[Path]:
    """Every file under ``paths``, in name order: symlinks followed once, loops, missing
    paths and folders nested more than ``MAX_FOLDER_DEPTH`` deep reported. A folder given
    brings its own rules (``vault.rules_for``): what they leave out goes to ``result.ignored``."""
    found: list[Path] = []
    seen: set[str] = set()
    # Depth first without recursion (a folder may nest thousands deep): (path, depth, rules)
    # triples, each folder's entries pushed in reverse so they come off in name order.
    todo: list[tuple[Path, int, FolderRules | None]] = [
        (Path(p).expanduser(), 0, None) for p in reversed(paths)
    ]
    while todo:
        path, depth, rules = todo.pop()
        real = _real_path(path, result)
        if real is None:
            continue
        if not (_is_utf8(str(path)) and _is_utf8(real)):
            # Its episode would be keyed and shown by a name that is not text: named, skipped.
            what = "folder" if os.path.isdir(real) else "file"
            result.skipped.append(Skipped(str(path), f"the {what} name is not UTF-8"))
            continue
        if real in seen:
            if path.is_symlink():
                result.skipped.append(Skipped(str(path), "symlink loop (already visited)"))
            continue
        seen.add(real)
        if os.path.isdir(real):
            if depth >= MAX_FOLDER_DEPTH:
                result.skipped.append(
                    Skipped(str(path), f"folders nested more than {MAX_FOLDER_DEPTH} deep")
                )
                continue
            if rules is None:
                rules = rules_for(path)
                for problem in rules.problems:
                    result.skipped.append(Skipped(str(path / ".sadieignore"), problem))
            children = _folder_entries(path, result, rules)
            todo.extend((child, depth + 1, rules) for child in reversed(children))
        elif os.path.isfile(real):
            found.append(path)
        else:
            result.skipped.append(Skipped(str(path), "not a regular file"))
    return found


def _real_path(path: Path, result: ReadResult) -> str | None:
    """Where ``path`` leads, or None (and a reason in ``result``) when it leads nowhere."""
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, RuntimeError, ValueError) as exc:
        if getattr(exc, "errno", None) == errno.ELOOP or "loop" in str(exc).lower():
            reason = "symlink loop"
        elif isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
            reason = "path too long"
        elif path.is_symlink():
            reason = "broken symlink (its target does not exist)"
        else:
            reason = "no such file or directory"
        result.skipped.append(Skipped(str(path), reason))
        return None


def _folder_entries(folder: Path, result: ReadResult, rules: FolderRules) -> list[Path]:
    """The folder's notes and subfolders by name; what ``rules`` leave out is reported in
    ``result.ignored``, other files in ``result.skipped``, once each."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        result.skipped.append(Skipped(str(folder), _os_reason(exc)))
        return []
    children: list[Path] = []
    for entry in entries:
        child = Path(entry.path)
        try:
            is_dir = entry.is_dir()
        except OSError:  # a symlink loop: discover() names it
            is_dir = False
        reason = rules.folder_reason(child) if is_dir else rules.file_reason(child)
        if reason is not None:
            result.ignored.append(Skipped(str(child), reason))
            continue
        if entry.name.startswith("."):
            continue
        suffix = child.suffix.lower()
        if (
            not entry.is_dir(follow_symlinks=False)
            and not entry.is_symlink()
            and suffix not in SUFFIXES
        ):
            # Inside a folder, other kinds of file are not notes: say so once each (in a
            # vault, an attachment is left out without being called unreadable).
            attachment = rules.attachment_reason(child)
            if attachment is not None:
                result.ignored.append(Skipped(str(child), attachment))
                continue
            result.skipped.append(
                Skipped(str(child), f"unsupported file type ({suffix or 'no extension'})")
            )
            continue
        children.append(child)
    return children


def read_all(paths: list[Path], csv_map: CsvMap | None = None) -> ReadResult:
    """Every file under ``paths`` read (CSV files by ``csv_map``), with what was skipped."""
    result = ReadResult()
    for path in discover(paths, result):
        read_path(path, result, csv_map)
    return result
