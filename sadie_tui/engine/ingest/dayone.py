"""Day One JSON exports as journal episodes.

An export (``Journal.json``: ``{"entries": [{"uuid", "creationDate", "text", "tags",
"location", "weather", ...}]}``) becomes one episode per entry, of kind ``journal``, dated by
its ``creationDate`` in the entry's own ``timeZone`` (else local time). Where and in what
weather it was written is kept in the episode's metadata (``location``, ``weather``) and as a
short first line of its text, so a search for the place finds the entry. An entry is keyed by
its ``uuid``: an edited entry replaces itself, a re-ingested export adds nothing. A JSON file
that is not a Day One export is left out (``ignored``) with the reason; one that does not
parse is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..jsonvalue import JSON, JSONObject
from .raw import (
    MAX_JSON_DEPTH,
    LeftOut,
    RawEpisode,
    ReadResult,
    Skipped,
    Unreadable,
    _storable,
    clean_text,
    read_text,
)
from .reader import Reader, ReadOptions

_MARKDOWN_IMAGE = "![]("
#: The location fields shown in the header line, most specific first.
PLACE_FIELDS = ("placeName", "localityName", "administrativeArea", "country")


def read_dayone(path: Path, key: str, result: ReadResult) -> None:
    """Every entry of the Day One export at ``path`` into ``result`` as a journal episode; an
    entry without text or date is skipped by itself (``path#uuid``)."""
    try:
        data = _storable(json.loads(read_text(path)))
    except json.JSONDecodeError as exc:
        raise Unreadable(f"invalid JSON ({exc.msg}, line {exc.lineno})") from exc
    except RecursionError as exc:
        raise Unreadable(f"invalid JSON (nested more than {MAX_JSON_DEPTH} levels deep)") from exc
    except ValueError as exc:
        raise Unreadable(f"invalid JSON ({exc})") from exc
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        # Settings and data files sit beside notes (a vault's plugins): left out, not failures.
        raise LeftOut('JSON but not a Day One export (no "entries" list)')
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            result.skipped.append(Skipped(f"{path}#{number}", "entry is not a JSON object"))
            continue
        ident = clean_text(str(entry.get("uuid") or number)).strip().replace("#", "%23")
        name = f"{path}#{ident}"
        when = entry_time(entry)
        body = _body(entry.get("text"))
        if when is None or not body:
            reason = "entry has no creationDate" if when is None else "entry has no text"
            result.skipped.append(Skipped(name, reason))
            continue
        details = {k: v for k in ("location", "weather") if (v := _kept(entry.get(k)))}
        header = header_line(details.get("location"), details.get("weather"))
        result.episodes.append(
            RawEpisode(
                source_key=f"{key}#{ident}",
                source=name,
                kind="journal",
                title=_title(body, when),
                occurred_at=when,
                text=f"{header}\n\n{body}" if header else body,
                salience=0.6 if entry.get("starred") is True else 0.5,
                tags=[t for t in (clean_text(str(x)).strip() for x in tags) if t]
                if isinstance(tags := entry.get("tags"), list)
                else [],
                details=details,
            )
        )


def entry_time(entry: JSONObject) -> datetime | None:
    """The entry's ``creationDate`` as wall time where it was written (its ``timeZone``),
    else local time; None when it is missing or not an ISO time."""
    raw = entry.get("creationDate")
    if not isinstance(raw, str):
        return None
    try:
        when = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return when
    zone_name = entry.get("timeZone")
    try:
        zone = ZoneInfo(zone_name) if isinstance(zone_name, str) and zone_name else None
    except (ZoneInfoNotFoundError, ValueError):
        zone = None
    return when.astimezone(zone).replace(tzinfo=None)


def _body(value: JSON) -> str:
    """The entry's Markdown, less Day One's photo placeholders and escaped punctuation."""
    if not isinstance(value, str):
        return ""
    lines = [
        line
        for line in clean_text(value).split("\n")
        if not line.strip().startswith(_MARKDOWN_IMAGE + "dayone-moment:")
    ]
    text = "\n".join(lines).replace("\\.", ".").replace("\\!", "!").replace("\\-", "-")
    return text.strip()


def _title(body: str, when: datetime) -> str:
    first = body.split("\n", 1)[0].lstrip("#").strip()
    return first[:80] if first else f"Journal {when:%Y-%m-%d}"


def _kept(value: JSON) -> dict[str, str | int | float]:
    """A location or weather object with its plain values only (what metadata can hold)."""
    if not isinstance(value, dict):
        return {}
    out: dict[str, str | int | float] = {}
    for k, v in value.items():
        if isinstance(v, str) and clean_text(v).strip():
            out[str(k)] = clean_text(v).strip()[:200]
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[str(k)] = v
    return out


def header_line(location: Mapping[str, object] | None, weather: Mapping[str, object] | None) -> str:
    """``Written at Café A Brasileira, Lisbon · 18 °C, partly cloudy``, or "" with neither."""
    parts: list[str] = []
    place: list[str] = []
    for field in PLACE_FIELDS:
        value = (location or {}).get(field)
        if isinstance(value, str) and value not in place:
            place.append(value)
    if place:
        parts.append("Written at " + ", ".join(place[:2]))
    sky: list[str] = []
    temperature = (weather or {}).get("temperatureCelsius")
    if isinstance(temperature, (int, float)):
        sky.append(f"{round(temperature)} °C")
    conditions = (weather or {}).get("conditionsDescription")
    if isinstance(conditions, str):
        sky.append(conditions.lower())
    if sky:
        parts.append(", ".join(sky))
    return " · ".join(parts)


def _read(path: Path, key: str, result: ReadResult, options: ReadOptions) -> None:
    read_dayone(path, key, result)


READER = Reader("Day One", frozenset({".json"}), _read)
