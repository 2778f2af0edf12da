"""Printing for the CLI: Rich consoles that never interpret note text as markup and never let
a control character or escape sequence through (``display.safe`` on every text segment),
JSON with the same guarantee, and one-line errors."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from rich.console import Console
from rich.segment import Segment

from ..display import safe, safe_json


class SafeConsole(Console):
    """A Console whose text segments pass through ``safe`` as they are written: whatever a
    note or a reply holds, only Rich's own styles and controls reach the terminal."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        cleaned = (
            seg if seg.control else Segment(safe(seg.text), seg.style, seg.control)
            for seg in buffer
        )
        return super()._render_buffer(cleaned)


_out: Console | None = None
_err: Console | None = None


def console() -> Console:
    global _out
    if _out is None:
        _out = SafeConsole(highlight=False, soft_wrap=False)
    return _out


def err_console() -> Console:
    global _err
    if _err is None:
        _err = SafeConsole(stderr=True, highlight=False)
    return _err


def print_json(data: object) -> None:
    """``data`` as indented JSON on stdout, safe to print (``display.safe_json``)."""
    sys.stdout.write(safe_json(data, indent=2) + "\n")
    sys.stdout.flush()


def print_ndjson(data: object) -> None:
    """``data`` as one line of JSON on stdout, safe to print."""
    sys.stdout.write(safe_json(data) + "\n")
    sys.stdout.flush()


def error_line(message: str) -> None:
    """One line on stderr, prefixed so scripts can grep it."""
    text = " ".join(safe(str(message)).split())
    sys.stderr.write(f"sadie: {text}\n")
    sys.stderr.flush()


def write_text(text: str) -> None:
    """Plain text on stdout (a streamed reply, citation lines), made safe."""
    sys.stdout.write(safe(text))
