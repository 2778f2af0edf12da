"""Files that hold what is derived rather than lived, read by name: ``beliefs.jsonl``,
``observations.jsonl``, ``soul.md``, and the pages under ``wiki/``, ``briefs/`` and ``today/``.
Each is a reader with a sniff, so it is preferred to the plain note or record reader of its
suffix.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .belief_quotes import read_quotes, source_id
from .dates import date_from_path, mtime, parse_when
from .jsonl import iter_jsonl
from .measures import measure_of
from .notes import TEXT_SUFFIXES, salience, split_front_matter, title_for
from .raw import (
    Derived,
    DerivedFields,
    ReadResult,
    Skipped,
    Unreadable,
    clean_text,
    read_text,
)
from .reader import Reader, ReadOptions

if TYPE_CHECKING:
    from ..jsonvalue import JSON

DERIVED_DIRS = {"wiki": "wiki", "briefs": "brief", "today": "today"}


def _evidence_ids(values: JSON, base: Path) -> list[str]:
    ids: list[str] = []
    for ref in values if isinstance(values, list) else []:
        ref = str(ref)
        try:
            uuid.UUID(ref)
            ids.append(ref.lower())
            continue
        except ValueError:
            pass
        ids.append(source_id(ref, base))
    return ids


def read_beliefs(path: Path, key: str, result: ReadResult) -> None:
    """The person's beliefs, each with the files it rests on and the quotes of them it gives
    (``belief_quotes``: a quote not found word for word is left out, named in ``skipped``)."""
    for number, obj, error in iter_jsonl(path):
        name = f"{path}#{number}"
        if obj is None or not str(obj.get("statement") or "").strip():
            result.skipped.append(Skipped(name, error or "belief has no statement"))
            continue
        status = str(obj.get("status") or "active").lower()
        if status not in {"active", "contested", "retired"}:
            result.skipped.append(Skipped(name, f"unknown belief status {status!r}"))
            continue
        try:
            evidence = _evidence_ids(obj.get("evidence"), path.parent)
            quotes, left_out = read_quotes(obj.get("quotes"), path.parent)
        except Unreadable as exc:
            result.skipped.append(Skipped(name, str(exc)))
            continue
        result.skipped.extend(Skipped(name, why) for why in left_out)
        result.derived.append(
            Derived(
                "beliefs",
                f"{key}#{number}",
                {
                    "statement": clean_text(str(obj["statement"])).strip(),
                    "status": status,
                    "confidence": salience(obj.get("confidence"), 0.5),
                    "evidence": evidence,
                    "quotes": quotes,
                },
            )
        )


def read_observations(path: Path, key: str, result: ReadResult) -> None:
    for number, obj, error in iter_jsonl(path):
        name = f"{path}#{number}"
        text = clean_text(str((obj or {}).get("text") or "")).strip()
        when = parse_when((obj or {}).get("observed_at") or (obj or {}).get("date"))
        if obj is None or not text or when is None:
            result.skipped.append(Skipped(name, error or "observation needs text and observed_at"))
            continue
        source = str(obj.get("source") or "record")
        fields: DerivedFields = {"source": source, "observed_at": when, "text": text}
        measure = measure_of(source, text, when)
        if measure is not None:  # the figure it states, kept as fields (``measures``)
            fields["measure"] = measure.measure
            fields["value"] = measure.value
            fields["period"] = (measure.start, measure.end)
        result.derived.append(Derived("observations", f"{key}#{number}", fields))


def read_derived_document(path: Path, key: str, folder: str, result: ReadResult) -> None:
    meta, body = split_front_matter(read_text(path))
    body = body.strip()
    if not body:
        raise Unreadable("empty file")
    title = str(meta.get("title") or title_for(path, body)).strip()
    fields: DerivedFields = {"title": title, "text": body}
    if folder == "wiki":
        fields["kind"] = str(meta.get("kind") or "note").lower()
        table = "wiki_entries"
    else:
        fields["occurred_at"] = parse_when(meta.get("date")) or date_from_path(path) or mtime(path)
        table = "briefs" if folder == "brief" else "today_cards"
    result.derived.append(Derived(table, key, fields))


def read_soul(path: Path, key: str, result: ReadResult) -> None:
    meta, body = split_front_matter(read_text(path))
    if not body.strip():
        raise Unreadable("empty file")
    result.derived.append(Derived("soul", key, {"text": body.strip()}))


def _named(name: str) -> Callable[[Path], bool]:
    """A sniff that takes the file of this name (whatever its case), in any folder."""
    return lambda path: path.name.lower() == name


def _under_derived_dir(path: Path) -> bool:
    return path.parent.name.lower() in DERIVED_DIRS


def _beliefs(path: Path, key: str, result: ReadResult, options: ReadOptions) -> None:
    read_beliefs(path, key, result)


def _observations(path: Path, key: str, result: ReadResult, options: ReadOptions) -> None:
    read_observations(path, key, result)


def _soul(path: Path, key: str, result: ReadResult, options: ReadOptions) -> None:
    read_soul(path, key, result)


def _page(path: Path, key: str, result: ReadResult, options: ReadOptions) -> None:
    read_derived_document(path, key, DERIVED_DIRS[path.parent.name.lower()], result)


JSONL = frozenset({".jsonl"})
BELIEFS = Reader("beliefs", JSONL, _beliefs, sniff=_named("beliefs.jsonl"))
OBSERVATIONS = Reader("observations", JSONL, _observations, sniff=_named("observations.jsonl"))
SOUL = Reader("soul", frozenset({".md"}), _soul, sniff=_named("soul.md"))
PAGES = Reader("derived page", TEXT_SUFFIXES, _page, sniff=_under_derived_dir)
