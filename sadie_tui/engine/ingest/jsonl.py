"""JSON Lines records: one episode per line with ``text`` (or ``content``), and optionally
``title``, ``date`` (or ``occurred_at``), ``kind``, ``salience`` and ``tags``; a line that is not
a JSON object with text is named and skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .dates import date_from_path, mtime, parse_when
from .measures import record_numbers
from .notes import salience
from .raw import MAX_JSON_DEPTH, RawEpisode, ReadResult, Skipped, _storable, clean_text, read_text
from .reader import Reader, ReadOptions

if TYPE_CHECKING:
    from ..jsonvalue import JSON, JSONObject


def _tags(value: JSON) -> list[str]:
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    if isinstance(value, list):
        return [str(t) for t in value if str(t).strip()]
    return []


def iter_jsonl(path: Path) -> Iterator[tuple[int, JSONObject | None, str]]:
    """(line number, object or None, error) for every non-blank line."""
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = _storable(json.loads(line))
        except json.JSONDecodeError as exc:
            yield number, None, f"invalid JSON ({exc.msg})"
            continue
        except RecursionError:  # deeper than the decoder's own limit
            yield number, None, f"invalid JSON (nested more than {MAX_JSON_DEPTH} levels deep)"
            continue
        except ValueError as exc:
            yield number, None, f"invalid JSON ({exc})"
            continue
        if not isinstance(obj, dict):
            yield number, None, "not a JSON object"
            continue
        yield number, obj, ""


def read_records(path: Path, key: str, result: ReadResult) -> None:
    fallback = date_from_path(path) or mtime(path)
    for number, obj, error in iter_jsonl(path):
        name = f"{path}#{number}"
        if obj is None:
            result.skipped.append(Skipped(name, error))
            continue
        text = clean_text(str(obj.get("text") or obj.get("content") or "")).strip()
        if not text:
            result.skipped.append(Skipped(name, "record has no text"))
            continue
        when = parse_when(obj.get("date") or obj.get("occurred_at")) or fallback
        result.episodes.append(
            RawEpisode(
                source_key=f"{key}#{number}",
                source=name,
                kind=str(obj.get("kind") or "record"),
                title=clean_text(str(obj.get("title") or text.split("\n")[0][:60])).strip(),
                occurred_at=when,
                text=text,
                salience=salience(obj.get("salience")),
                tags=_tags(obj.get("tags")),
                details=_numbers(text),
            )
        )


def _numbers(text: str) -> dict[str, dict[str, str | int | float]]:
    """The amount, distance and duration the record states, kept in its metadata as
    ``figures`` (``ingest.measures.record_numbers``); nothing when it states none."""
    numbers = record_numbers(text)
    return {"figures": {**numbers}} if numbers else {}


def _read(path: Path, key: str, result: ReadResult, options: ReadOptions) -> None:
    read_records(path, key, result)


READER = Reader("records", frozenset({".jsonl"}), _read)
