"""What a vault keeps beside its notes, and what the person asked to leave out.

An ingested folder may be an Obsidian or Logseq vault. Their own folders (``.obsidian``,
``.trash``, ``.logseq``, ``logseq/bak``, ``logseq/version-files``) and the templates folder (the
one named in the vault's settings, else a top-level ``Templates/``) are not memories, and
neither is a note that is mostly ``{{date}}``-style placeholders. In a vault, images and other
attachments are not notes either: they are left out without being called unreadable. A
``.sadieignore`` at the root of an ingested folder (gitignore syntax, read with ``pathspec``)
leaves out more, line by line: a line that does not compile, or that would take too long
to match (``MAX_STARS``), is named and skipped, and the other lines apply. Each of these is
reported with its reason, apart from the failures.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

    from ..jsonvalue import JSON

IGNORE_FILE = ".sadieignore"
#: Folders a vault tool keeps for itself, by name anywhere in the tree.
TOOL_FOLDERS = {
    ".obsidian": "Obsidian's settings folder",
    ".trash": "Obsidian's trash",
    ".logseq": "Logseq's settings folder",
}
#: Folders a vault tool keeps for itself, by their last two path parts.
TOOL_SUBFOLDERS = {
    ("logseq", "bak"): "Logseq's backups",
    ("logseq", "version-files"): "Logseq's file versions",
}
_PLACEHOLDER = re.compile(r"\{\{[^{}\n]{1,80}\}\}|<%[^%\n]{0,200}%>")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s.*$", re.M)
_WORD = re.compile(r"[^\W\d_]{2,}")
#: Wildcards in one part of a ``.sadieignore`` pattern (between slashes) at most: each one
#: more multiplies the time a long file name can take to match by its length (four: 0.4 s a
#: file, five: 20 s; the matcher backtracks). Runs of stars count once, as git reads them.
MAX_STARS = 3
#: ``**`` parts in one pattern at most (each multiplies the time by a path's depth).
MAX_DEEP = 3
_STARS = re.compile(r"(?<!\\)\*{2,}")


@dataclass
class FolderRules:
    """The rules of one ingested folder (its root), shared by everything under it."""

    root: Path
    vault: str = ""  # "obsidian", "logseq" or "" (a plain folder)
    templates: set[str] = field(default_factory=set)  # relative folder paths, case-folded
    templates_from: str = ""  # where the templates folder was named
    ignore: GitIgnoreSpec | None = None  # from .sadieignore
    problems: list[str] = field(default_factory=list)  # its lines not used, and why

    def folder_reason(self, path: Path) -> str | None:
        """Why the folder ``path`` is left out, or None to read it."""
        name = path.name
        if name in TOOL_FOLDERS:
            return TOOL_FOLDERS[name]
        tail = tuple(p.casefold() for p in path.parts[-2:])
        if tail in TOOL_SUBFOLDERS:
            return TOOL_SUBFOLDERS[tail]
        rel = self._relative(path)
        if rel is not None and rel.casefold() in self.templates:
            return f"templates folder ({self.templates_from})"
        return self._ignored(rel, folder=True)

    def file_reason(self, path: Path) -> str | None:
        """Why the file ``path`` is left out by the person's ``.sadieignore``, or None."""
        return self._ignored(self._relative(path), folder=False)

    def attachment_reason(self, path: Path) -> str | None:
        """In a vault, a file that is not a note is an attachment: left out, not unreadable."""
        if not self.vault:
            return None
        return f"attachment, not a note ({path.suffix.lower() or 'no extension'})"

    def _relative(self, path: Path) -> str | None:
        try:
            return PurePosixPath(*path.relative_to(self.root).parts).as_posix()
        except ValueError:
            return None

    def _ignored(self, rel: str | None, *, folder: bool) -> str | None:
        if self.ignore is None or not rel or rel == ".":
            return None
        if self.ignore.match_file(rel + "/" if folder else rel):
            return f"matched by {IGNORE_FILE}"
        return None


def rules_for(root: Path) -> FolderRules:
    """The rules of the ingested folder ``root``: which tool wrote it, its templates folder,
    its ``.sadieignore``."""
    rules = FolderRules(root)
    obsidian = root / ".obsidian"
    if obsidian.is_dir():
        rules.vault = "obsidian"
    elif (root / "logseq").is_dir() or (root / ".logseq").is_dir():
        rules.vault = "logseq"
    named = _templates_in_settings(obsidian) if rules.vault == "obsidian" else []
    if named:
        rules.templates = {n.casefold() for n, _ in named}
        rules.templates_from = f"named in {named[0][1]}"
    else:
        for name in ("Templates", "templates"):
            if (root / name).is_dir():
                rules.templates = {name.casefold()}
                rules.templates_from = "a top-level Templates folder"
    _read_ignore_file(root, rules)
    return rules


def _templates_in_settings(obsidian: Path) -> list[tuple[str, str]]:
    """(folder, settings file) of every templates folder the Obsidian settings name: the core
    Templates plugin, the Templater plugin, and the folder of the daily note's template."""
    found: list[tuple[str, str]] = []
    sources = (
        ("templates.json", "folder", False),
        ("plugins/templater-obsidian/data.json", "templates_folder", False),
        ("daily-notes.json", "template", True),
    )
    for rel, key, parent in sources:
        settings = _json(obsidian / rel)
        value = settings.get(key) if isinstance(settings, dict) else None
        if not isinstance(value, str) or not value.strip("/ "):
            continue
        folder = PurePosixPath(value.strip("/ "))
        if parent:
            folder = folder.parent
        if str(folder) not in ("", "."):
            found.append((folder.as_posix(), f".obsidian/{rel}"))
    return found


def _json(path: Path) -> JSON:
    try:
        if path.stat().st_size > 1_000_000:
            return None
        value: JSON = json.loads(path.read_text(encoding="utf-8"))
        return value
    except (OSError, ValueError):
        return None  # no settings, or settings we cannot read: the defaults apply


def _read_ignore_file(root: Path, rules: FolderRules) -> None:
    path = root / IGNORE_FILE
    try:
        if not path.is_file():
            return
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        rules.problems.append(f"cannot read it ({exc.__class__.__name__}); nothing left out by it")
        return
    # lazy: pathspec loads only when _read_ignore_file runs, off the start-up path
    import pathspec

    kept: list[str] = []
    for number, line in enumerate(lines, 1):
        pattern = squeeze_stars(line)
        why = too_costly(pattern)
        if why is None:
            try:
                pathspec.GitIgnoreSpec.from_lines([pattern])
            except (ValueError, TypeError, re.error) as exc:  # GitWildMatchPatternError: ValueError
                why = f"bad pattern ({' '.join(str(exc).split())[:120]})"
        if why is None:
            kept.append(pattern)
        else:
            rules.problems.append(f"line {number} {_shown(line)}: {why}; the other lines apply")
    if kept:
        rules.ignore = pathspec.GitIgnoreSpec.from_lines(kept)


def squeeze_stars(line: str) -> str:
    """The pattern with each run of stars inside a part made one star (``a***b`` is
    ``a*b`` to git); a part that is exactly ``**`` keeps its meaning (any folders)."""
    parts = line.split("/")
    return "/".join(p if p == "**" else _STARS.sub("*", p) for p in parts)


def too_costly(pattern: str) -> str | None:
    """Why matching ``pattern`` could take minutes on a long name (too many wildcards in one
    part, or too many ``**`` parts), or None. Escaped stars are not wildcards."""
    parts = pattern.split("/")
    deep = sum(1 for p in parts if p == "**")
    if deep > MAX_DEEP:
        return f"too costly to match ({deep} ** parts; at most {MAX_DEEP})"
    stars = max((re.sub(r"\\.", "", p).count("*") for p in parts if p != "**"), default=0)
    if stars > MAX_STARS:
        return f"too costly to match ({stars} wildcards in one part; at most {MAX_STARS})"
    return None


def _shown(line: str) -> str:
    """A pattern as a report shows it: quoted, control characters as stand-ins, cut short."""
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in line)
    return f'"{text[:80]}…"' if len(text) > 80 else f'"{text}"'


def template_reason(body: str) -> str | None:
    """Why a note looks like a template (mostly ``{{date}}``/``<% … %>`` placeholders, a few
    headings and empty bullets around them), or None when it reads as a note."""
    placeholders = _PLACEHOLDER.findall(body)
    if not placeholders:
        return None
    words = len(_WORD.findall(_PLACEHOLDER.sub(" ", _HEADING_LINE.sub(" ", body))))
    if words > 2 * len(placeholders) + 4:
        return None
    shown = ", ".join(dict.fromkeys(p.strip() for p in placeholders[:3]))
    return f"template (placeholders {shown}, little else)"
