"""One episode as a face shows it, and a note added from outside (another assistant's, over
MCP): written into the memory's ``notes`` folder and read in the way every note is (in an
encrypted memory the file is removed once it is read in: only the encrypted file keeps it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import NotFoundError, SadieError, UsageError

if TYPE_CHECKING:
    from .memory import Memory
    from .store.db import Database

NOTES = "notes"  # the memory's folder for notes added by other assistants
MAX_NOTE = 100_000


@dataclass(frozen=True)
class Episode:
    """One episode as a screen shows it."""

    id: str
    title: str
    date: str  # YYYY-MM-DD
    kind: str
    text: str


@dataclass(frozen=True)
class NoteAdded:
    """A note read into the memory: its episode, and the file that holds it."""

    id: str
    title: str
    date: str
    path: str


def episode(db: Database, episode_id: str) -> Episode:
    """The episode ``episode_id``; ``NotFoundError`` when the memory has none."""
    # lazy: store.episodes loads only when an episode is opened, off the start-up path
    from .store.episodes import get_episode

    record = get_episode(db, episode_id)
    if record is None:
        raise NotFoundError(f"no episode {episode_id!r} in this memory")
    return Episode(record.id, record.title, record.date, record.kind, record.text)


def add_note(memory: Memory, text: str, title: str | None = None) -> NoteAdded:
    """Write the note into the memory's ``notes`` folder and ingest that file (the path every
    note takes). A note that does not go in leaves no file behind."""
    import yaml  # lazy: yaml and the readers load only when a note is added

    # lazy: (as yaml)
    from ..paths import make_private_folder, write_private
    from .ingest.readers import episode_id
    from .titles import make_title

    text = text.strip()
    if not text:
        raise UsageError("the note is empty")
    if len(text) > MAX_NOTE:
        raise UsageError(f"the note is longer than {MAX_NOTE:,} characters")
    title = " ".join((title or "").split()) or make_title(text)
    now = datetime.now()
    folder = memory.home / NOTES
    make_private_folder(folder)
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40] or "note"
    path = _free(folder / f"{now:%Y-%m-%d-%H%M%S}-{slug}.md")
    front = {"title": title, "date": now.isoformat(timespec="seconds"), "kind": "note"}
    header = yaml.safe_dump(front, allow_unicode=True, sort_keys=False)
    write_private(path, f"---\n{header}---\n{text}\n")
    try:
        report = memory.ingest([path])
        if report.skipped:
            raise UsageError(f"the note was not taken: {report.skipped[0].reason}")
        try:
            found = episode(memory.db, episode_id(str(path.resolve())))
        except NotFoundError:
            raise SadieError("the note was written but is not in the memory") from None
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    if memory.db.encrypted:
        # Read in, the note lives in the encrypted file; a plain copy beside it would be the
        # one thing under the home anyone could read.
        path.unlink(missing_ok=True)
    return NoteAdded(found.id, found.title, found.date, str(path))


def _free(path: Path) -> Path:
    n = 1
    while path.exists():
        n += 1
        path = path.with_name(f"{path.stem.rsplit('~', 1)[0]}~{n}{path.suffix}")
    return path
