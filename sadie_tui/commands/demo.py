"""The demo home for the CLI: built with a progress bar on first use (see ``engine.demo``)."""

from __future__ import annotations

from pathlib import Path

from ..engine.demo import MARKER, is_built
from ..engine.demo import ensure_demo as build_demo

__all__ = ["MARKER", "ensure_demo"]


def ensure_demo(home: Path, *, quiet: bool = False) -> bool:
    """Build the demo memory into ``home`` unless it is there. True if it was built."""
    if is_built(home):
        return False
    if quiet:
        return build_demo(home)
    from .progress import progress_bar  # rich's progress bar only when the demo is built

    with progress_bar("Building the demo memory (first run only)") as progress:
        return build_demo(home, progress)
