"""The quotes a belief file gives for its beliefs: each one's note, its words, and its side.

A line of ``beliefs.jsonl`` (or of the demo's ``derived_beliefs.jsonl``) may carry
``"quotes": [{"source": "journal/2026-01-04.md", "quote": "…", "stance": "for"}]``: the
sentence(s) of that note that bear on the statement, ``for`` it or ``against`` it. A quote is
kept only when its words are in its source (whitespace aside; a record line's ``text``), so
what F5 and ``sadie beliefs show`` mark verbatim is: one that is not is left out, with the
reason, never shown as the note's words.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from .raw import Quote, Unreadable, clean_text, episode_id, read_text

if TYPE_CHECKING:
    from ..jsonvalue import JSON

#: A quote's side as the file writes it, and as the store keeps it.
STANCES = {"for": "supports", "against": "contradicts"}

_SPACE = re.compile(r"\s+")


def source_id(ref: str, base: Path) -> str:
    """The episode id of ``ref`` (``journal/x.md``, ``records/runs.jsonl#31``) under ``base``."""
    path_part, _, line = ref.partition("#")
    try:
        key = str((base / path_part).resolve())
    except (OSError, ValueError, RuntimeError) as exc:  # a NUL byte, a symlink loop
        raise Unreadable(f"bad evidence path {ref!r}: {exc}") from exc
    return episode_id(f"{key}#{line}" if line else key)


def _flat(text: str) -> str:
    return _SPACE.sub(" ", clean_text(text)).strip()


def source_text(ref: str, base: Path) -> str:
    """The words of ``ref``: the file's text, or a record line's ``text`` (``#n``)."""
    path_part, _, line = ref.partition("#")
    text = read_text(base / path_part)
    if not line:
        return text
    lines = text.splitlines()
    if not line.isdigit() or not 1 <= int(line) <= len(lines):
        raise Unreadable(f"{ref}: no such line")
    try:
        record = json.loads(lines[int(line) - 1])
    except json.JSONDecodeError as exc:
        raise Unreadable(f"{ref}: invalid JSON ({exc.msg})") from exc
    if not isinstance(record, dict):
        raise Unreadable(f"{ref}: not a JSON object")
    return str(record.get("text") or record.get("content") or "")


def read_quotes(values: JSON, base: Path) -> tuple[list[Quote], list[str]]:
    """The quotes of one belief line found word for word in their sources, and why each of
    the others was left out. A malformed list raises ``Unreadable`` (the line is skipped)."""
    if values is None:
        return [], []
    if not isinstance(values, list):
        raise Unreadable("quotes must be a list")
    texts: dict[str, str] = {}
    kept: list[Quote] = []
    left_out: list[str] = []
    for n, item in enumerate(values, start=1):
        if not isinstance(item, dict):
            raise Unreadable(f"quote {n} is not a JSON object")
        source, words = str(item.get("source") or ""), str(item.get("quote") or "").strip()
        stance = STANCES.get(str(item.get("stance") or "for"))
        if not source or not words or stance is None:
            raise Unreadable(f"quote {n} needs a source, a quote and a stance (for or against)")
        try:
            if source not in texts:
                texts[source] = _flat(source_text(source, base))
        except Unreadable as exc:
            left_out.append(f"quote {n} left out: {source} cannot be read ({exc})")
            continue
        if _flat(words) not in texts[source]:
            left_out.append(f"quote {n} left out: not word for word in {source}")
            continue
        verbatim = item.get("verbatim")
        kept.append(
            Quote(source_id(source, base), words, stance, verbatim is not False),
        )
    return kept, left_out
