"""The demo home: built from ``data/demo/`` on first use, never mixed with the person's memory."""

from __future__ import annotations

from pathlib import Path

from ..engine.errors import SadieError
from ..paths import db_path, demo_source

MARKER = ".demo-built"


def ensure_demo(home: Path, *, quiet: bool = False) -> bool:
    """Ingest the demo memory into ``home`` unless it is already there. True if it was built."""
    if (home / MARKER).is_file() and db_path(home).is_file():
        return False
    source = demo_source()
    if not source.is_dir():
        raise SadieError(f"the demo memory is missing ({source})", fix="reinstall sadie")
    from ..engine.memory import Memory
    from .ingest import run_ingest

    home.mkdir(parents=True, exist_ok=True)
    with Memory.open(home) as memory:
        run_ingest(memory, [source], quiet=quiet, title="Building the demo memory (first run only)")
    soul = source / "soul.md"
    if soul.is_file() and not (home / "soul.md").exists():
        (home / "soul.md").write_text(soul.read_text(encoding="utf-8"), encoding="utf-8")
    (home / MARKER).write_text("built from data/demo\n", encoding="utf-8")
    return True
