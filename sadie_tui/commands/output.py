"""Printing for the CLI: Rich consoles that never interpret note text as markup, one-line errors."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

_out: Console | None = None
_err: Console | None = None


def console() -> Console:
    global _out
    if _out is None:
        _out = Console(highlight=False, soft_wrap=False)
    return _out


def err_console() -> Console:
    global _err
    if _err is None:
        _err = Console(stderr=True, highlight=False)
    return _err


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str, indent=2) + "\n")
    sys.stdout.flush()


def print_ndjson(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def error_line(message: str) -> None:
    """One line on stderr, prefixed so scripts can grep it."""
    text = " ".join(str(message).split())
    sys.stderr.write(f"sadie: {text}\n")
    sys.stderr.flush()
