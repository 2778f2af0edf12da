"""Entry point the CLI calls for `sadie` and `sadie "question"`."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..commands.context import Context


def run(ctx: Context, question: str | None = None) -> None:
    """Run the app; a memory that cannot be opened (another sadie holds it) ends it with one
    clear line on stderr and the error's exit status, never a traceback."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if ctx.demo:
        # Built before the screen takes over, so its progress bar shows in the terminal.
        from ..commands.demo import ensure_demo

        ensure_demo(ctx.home)

    from .app import SadieApp

    app = SadieApp(ctx, question)
    app.run()
    if app.exit_error is not None:
        from ..commands.output import error_line

        error = app.exit_error
        error_line(error.one_line() if hasattr(error, "one_line") else str(error))
        sys.exit(int(getattr(error, "exit_code", 1)))
