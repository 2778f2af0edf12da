"""Entry point the CLI calls for `sadie` and `sadie "question"`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..launch import Launch


def _say(line: str) -> None:
    sys.stderr.write(f"sadie: {line}\n")
    sys.stderr.flush()


def _build_demo(home: Path) -> None:
    """The demo memory, built before the screen takes over, with a one-line progress count."""
    # lazy: only `sadie --demo` builds one
    from ..engine.demo import ensure_demo, is_built

    if is_built(home):
        return
    tty = sys.stderr.isatty()
    _say("building the demo memory (first run only)…")

    def progress(stage: str, done: int, total: int) -> None:
        if tty:
            sys.stderr.write(f"\r  {stage} {done}/{total}\x1b[K")
            sys.stderr.flush()

    ensure_demo(home, progress)
    if tty:
        sys.stderr.write("\r\x1b[K")


def run(launch: Launch, question: str | None = None) -> None:
    """Run the app; a memory that cannot be opened (another sadie holds it) ends it with one
    clear line on stderr and the error's exit status, never a traceback."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if launch.demo:
        _build_demo(launch.home)

    # lazy: Textual loads after the demo is built, so its progress prints at once
    from .app import SadieApp

    app = SadieApp(launch, question)
    app.run()
    if app.exit_error is not None:
        error = app.exit_error
        _say(error.one_line() if hasattr(error, "one_line") else str(error))
        sys.exit(int(getattr(error, "exit_code", 1)))
