"""Calendar files (``.ics``) as observations: one per event, recurrences expanded in a window.

Each event becomes an observation from source ``calendar`` that says its title, when it
starts and ends, where, and with whom (attendees' and the organizer's names, else their
addresses). A repeating event is expanded (with ``recurring-ical-events``: RRULE, RDATE,
EXDATE and edited occurrences) between two years before the ingest and one year after it
(``WINDOW_PAST``, ``WINDOW_AHEAD``); a one-off event is kept whenever it is. Times are shown
and stored in local wall time, like every date in the memory.

An event may repeat every second for ever: one whose rule would take more than
``MAX_STEPS`` steps to expand is kept once, and one that repeats more than
``MAX_OCCURRENCES`` times in the window keeps its first ones; each is said in the report.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .raw import MAX_BYTES, Derived, ReadResult, Skipped, Unreadable, clean_text
from .reader import Reader, ReadOptions

if TYPE_CHECKING:
    from icalendar import Component

#: How far recurrences are expanded around the ingest: two years back, one year ahead.
WINDOW_PAST = timedelta(days=2 * 365)
WINDOW_AHEAD = timedelta(days=365)
#: The longest description kept in an observation's text.
MAX_DESCRIPTION = 400
#: Occurrences of one event kept from the window, at most (three years of a daily event).
MAX_OCCURRENCES = 2_000
#: Steps the expander may take for one event's rule, from its start to the window's end,
#: at most (an hourly event over six years; each step costs the expander time and memory).
MAX_STEPS = 50_000
#: The shortest time a rule's frequency steps by, in days.
_PERIOD_DAYS = {
    "SECONDLY": 1 / 86_400,
    "MINUTELY": 1 / 1_440,
    "HOURLY": 1 / 24,
    "DAILY": 1.0,
    "WEEKLY": 7.0,
    "MONTHLY": 28.0,
    "YEARLY": 365.0,
}


def local_naive(value: date | datetime) -> tuple[datetime, bool]:
    """A calendar time as naive local wall time, and whether it is a whole day (a date)."""
    if not isinstance(value, datetime):
        return datetime(value.year, value.month, value.day), True
    if value.tzinfo is not None:
        value = value.astimezone()
    return value.replace(tzinfo=None), False


def read_calendar(path: Path, key: str, result: ReadResult, now: datetime | None = None) -> None:
    """Every event of the ``.ics`` file at ``path`` into ``result`` as a calendar observation;
    a file that does not parse is ``Unreadable`` with the parser's first line."""
    # lazy: the calendar libraries load only when a calendar is read
    import icalendar
    import recurring_ical_events

    data = _read_bytes(path)
    try:
        calendar = icalendar.Calendar.from_ical(data)
    except (ValueError, IndexError, KeyError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise Unreadable(f"not an iCalendar file ({first[:200]})") from exc
    if not isinstance(calendar, icalendar.Calendar):
        raise Unreadable("not an iCalendar file (no VCALENDAR)")
    if not calendar.walk("VEVENT"):
        raise Unreadable("no events in the calendar")
    now = now or datetime.now()
    for event in calendar.walk("VEVENT"):
        too_often = _too_often(event, now)
        if too_often:  # kept once, as a one-off: the expander would never end
            del event["RRULE"]
            result.skipped.append(Skipped(_record_name(path, event), too_often))
    try:
        events = list(
            recurring_ical_events.of(calendar, skip_bad_series=True).between(
                now - WINDOW_PAST, now + WINDOW_AHEAD
            )
        )
        events += [e for e in calendar.walk("VEVENT") if _outside_window(e, now)]
    except Exception as exc:  # the expander's own errors have no common base class
        raise Unreadable(f"calendar events cannot be expanded ({str(exc)[:200]})") from exc
    seen: set[str] = set()
    kept: dict[str, int] = {}
    for event in events:
        uid = _text(event.get("UID"))
        if kept.get(uid, 0) >= MAX_OCCURRENCES:
            kept[uid] += 1
            continue
        item = _observation(event, key)
        if item is not None and item.source_key not in seen:
            seen.add(item.source_key)
            result.derived.append(item)
            kept[uid] = kept.get(uid, 0) + 1
    for event in calendar.walk("VEVENT"):
        uid = _text(event.get("UID"))
        count = kept.pop(uid, 0)
        if count > MAX_OCCURRENCES:
            result.skipped.append(
                Skipped(
                    _record_name(path, event),
                    f"event {_title(event)} repeats {count:,} times in the window; its first "
                    f"{MAX_OCCURRENCES:,} kept",
                )
            )


def _record_name(path: Path, event: Component) -> str:
    return f"{path}#{_text(event.get('UID'))[:80]}"


def _title(event: Component) -> str:
    return '"' + (_text(event.get("SUMMARY"))[:60] or "(untitled event)") + '"'


def _too_often(event: Component, now: datetime) -> str | None:
    """Why the event's rules are too costly to expand (more than ``MAX_STEPS`` steps from its
    start to the window's end, by an upper bound from their frequency and BY parts), or None."""
    found = event.get("RRULE")
    if found is None or event.get("DTSTART") is None:
        return None
    start, _ = local_naive(_moment(event, "DTSTART"))
    total, freqs = 0.0, []
    for rule in found if isinstance(found, list) else [found]:
        freq = str((rule.get("FREQ") or [""])[0]).upper()
        steps = _steps(rule, freq, start, now)
        if steps is not None:
            total += steps
            freqs.append(freq)
    if total <= MAX_STEPS:
        return None
    return (
        f"event {_title(event)} repeats too often to expand (FREQ={'+'.join(freqs)}, about "
        f"{total:,.0f} times); kept once"
    )


def _steps(rule: Any, freq: str, start: datetime, now: datetime) -> float | None:  # Any: vRecur
    """At most how many steps the expander takes for one rule (``vRecur``), or None for a
    rule it will refuse anyway."""
    if freq not in _PERIOD_DAYS:
        return None
    try:
        interval = max(1, int((rule.get("INTERVAL") or [1])[0]))
        count = int((rule.get("COUNT") or [0])[0])
    except (TypeError, ValueError):
        return None
    times = 1
    finer = list(_PERIOD_DAYS)[: list(_PERIOD_DAYS).index(freq)]
    for part, unit in (("BYSECOND", "SECONDLY"), ("BYMINUTE", "MINUTELY"), ("BYHOUR", "HOURLY")):
        if unit in finer:
            times *= max(1, len(rule.get(part) or []))
    days = ("BYDAY", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYMONTH")
    if freq in ("WEEKLY", "MONTHLY", "YEARLY") and any(rule.get(p) for p in days):
        times *= round(_PERIOD_DAYS[freq])  # at most one a day
    per_day = times / (_PERIOD_DAYS[freq] * interval)
    end = now + WINDOW_AHEAD
    until = (rule.get("UNTIL") or [None])[0]
    if isinstance(until, date):
        end = min(end, local_naive(until)[0])
    steps = per_day * max(0.0, (end - start).total_seconds() / 86_400)
    return min(steps, count) if count else steps


def _read_bytes(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise Unreadable(
                f"too large ({size / 1e6:.1f} MB; the limit is {MAX_BYTES // 2**20} MB)"
            )
        return path.read_bytes()
    except OSError as exc:
        raise Unreadable(exc.strerror.lower() if exc.strerror else str(exc)) from exc


def _moment(event: Component, key: str) -> date | datetime:
    """DTSTART's or DTEND's value as icalendar parsed it (a date, or a date-time)."""
    value: date | datetime = getattr(event[key], "dt")  # noqa: B009 - its union has no .dt
    return value


def _outside_window(event: Component, now: datetime) -> bool:
    """A one-off event outside the expansion window: kept too (a past meeting is a memory)."""
    if event.get("RRULE") is not None or event.get("RDATE") is not None:
        return False
    if event.get("RECURRENCE-ID") is not None or event.get("DTSTART") is None:
        return False
    start, _ = local_naive(_moment(event, "DTSTART"))
    return not (now - WINDOW_PAST <= start < now + WINDOW_AHEAD)


def _text(value: object) -> str:
    return clean_text(str(value or "")).strip()


def people(event: Component) -> list[str]:
    """Who the event is with: the organizer and attendees by name (CN), else by address."""
    found: dict[str, str] = {}
    values: list[object] = []
    for field in ("ORGANIZER", "ATTENDEE"):
        value = event.get(field)
        if value is None:
            continue
        values.extend(value if isinstance(value, list) else [value])
    for value in values:
        params = getattr(value, "params", {}) or {}
        name = _text(params.get("CN")) or _text(value).removeprefix("mailto:").removeprefix(
            "MAILTO:"
        )
        if name:
            found.setdefault(name.casefold(), name)
    return list(found.values())


def _when(start: datetime, start_day: bool, end: datetime | None, end_day: bool) -> str:
    if start_day:
        last = (end - timedelta(days=1)) if end is not None and end_day else None
        if last is not None and last.date() > start.date():
            return f"{start:%Y-%m-%d} to {last:%Y-%m-%d}, all day"
        return f"{start:%Y-%m-%d}, all day"
    if end is None or end == start:
        return f"{start:%Y-%m-%d %H:%M}"
    if end.date() == start.date():
        return f"{start:%Y-%m-%d %H:%M}–{end:%H:%M}"
    return f"{start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M}"


def describe(event: Component) -> tuple[datetime, str] | None:
    """The event's start (local) and its observation text, or None without a start."""
    if event.get("DTSTART") is None:
        return None
    start, start_day = local_naive(_moment(event, "DTSTART"))
    end: datetime | None = None
    end_day = start_day
    if event.get("DTEND") is not None:
        end, end_day = local_naive(_moment(event, "DTEND"))
    elif event.get("DURATION") is not None:
        duration: timedelta = getattr(event["DURATION"], "dt")  # noqa: B009 - as _moment
        end = start + duration
    title = _text(event.get("SUMMARY")) or "(untitled event)"
    parts = [f"Calendar event: {title}", _when(start, start_day, end, end_day)]
    place = _text(event.get("LOCATION"))
    if place:
        parts.append(f"at {place}")
    who = people(event)
    if who:
        parts.append("with " + ", ".join(who))
    text = ", ".join(parts) + "."
    description = _text(event.get("DESCRIPTION"))
    if description:
        if len(description) > MAX_DESCRIPTION:
            description = description[:MAX_DESCRIPTION].rstrip() + "…"
        text += "\n" + description
    return start, text


def _observation(event: Component, key: str) -> Derived | None:
    described = describe(event)
    if described is None:
        return None
    start, text = described
    uid = _text(event.get("UID")) or text.split("\n")[0]
    # "#" separates the file from the record in a source key: keep it out of the record part.
    record = f"{uid}@{start:%Y-%m-%dT%H:%M}".replace("#", "%23")
    return Derived(
        "observations",
        f"{key}#{record}",
        {"source": "calendar", "observed_at": start, "text": text},
    )


def _read(path: Path, key: str, result: ReadResult, options: ReadOptions) -> None:
    read_calendar(path, key, result)


READER = Reader("calendar", frozenset({".ics"}), _read)
