"""The demo memory: built from the shipped ``data/demo/`` into its own home on first use,
never mixed with a person's memory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..paths import db_path, demo_source, keep_private, make_private_folder
from .errors import SadieError

MARKER = ".demo-built"

Progress = Callable[[str, int, int], None]


def is_built(home: Path) -> bool:
    return (home / MARKER).is_file() and db_path(home).is_file()


def ensure_demo(home: Path, progress: Progress | None = None) -> bool:
    """Ingest the demo memory into ``home`` unless it is already there. True if it was built.

    ``progress(stage, done, total)`` follows the ingest."""
    if is_built(home):
        return False
    source = demo_source()
    if not source.is_dir():
        raise SadieError(f"the demo memory is missing ({source})", fix="reinstall sadie")
    # lazy: DuckDB loads only when the demo memory has to be built
    from .memory import Memory
    from .retrieval.keyword import keep_current

    make_private_folder(home)
    with Memory.open(home) as memory:
        keep_current(memory)  # the index is saved with the memory: the first search loads it
        memory.ingest([source], progress)
    soul = source / "soul.md"
    if soul.is_file() and not (home / "soul.md").exists():
        (home / "soul.md").write_text(soul.read_text(encoding="utf-8"), encoding="utf-8")
    (home / MARKER).write_text("built from data/demo\n", encoding="utf-8")
    for written in (home / "soul.md", home / MARKER):
        keep_private(written)
    return True
