"""Records as memory, through the real pipeline (real DuckDB file, the real embedder):
calendars (.ics), workouts (GPX, FIT), Day One exports and mapped CSV files."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sadie_tui.engine.ingest.readers import ReadResult, read_path
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.personas import get_persona
from sadie_tui.engine.retrieval import retrieve
from sadie_tui.engine.turns.steps import briefing_for

DATA = Path(__file__).parent / "data" / "records"


@pytest.fixture
def mem(tmp_home: Path, embedder) -> Iterator[Memory]:  # type: ignore[no-untyped-def]
    """An empty memory in a real DuckDB file of its own."""
    with Memory.open(tmp_home, embedder=embedder) as memory:
        yield memory


def observations(memory: Memory, source: str) -> list[tuple[datetime, str]]:
    rows = memory.db.fetchall(
        "SELECT observed_at, text FROM observations WHERE source = ? ORDER BY observed_at, text",
        [source],
    )
    return [(r[0], r[1]) for r in rows]


def read_one(path: Path) -> ReadResult:
    result = ReadResult()
    read_path(path, result)
    return result


# --------------------------------------------------------------------------- calendars


def calendar_text(today: datetime) -> str:
    """A calendar around ``today``: a one-off with a place and people, a weekly event of
    three occurrences with one cancelled (EXDATE), an old all-day event, a weekly series
    that started long ago (only the window's occurrences count)."""
    visit = (today - timedelta(days=10)).replace(hour=9, minute=30)
    choir = (today - timedelta(days=40)).replace(hour=19, minute=0)
    cancelled = choir + timedelta(days=7)
    long_ago = today - timedelta(days=5 * 365)
    stamp = "20260101T000000Z"
    return "\r\n".join(
        [
            "BEGIN:VCALENDAR",
            "VERSION:2.0",
            "PRODID:-//sadie tests//EN",
            "BEGIN:VEVENT",
            "UID:dentist-1@example.org",
            f"DTSTAMP:{stamp}",
            f"DTSTART:{visit:%Y%m%dT%H%M%S}",
            f"DTEND:{visit + timedelta(hours=1):%Y%m%dT%H%M%S}",
            "SUMMARY:Dentist appointment",
            "LOCATION:Clinica Sorriso\\, Rua Augusta 12",
            "ORGANIZER;CN=Dr. Helena Costa:mailto:helena@example.org",
            "ATTENDEE;CN=Ana Ribeiro:mailto:ana@example.org",
            "ATTENDEE:mailto:bruno@example.org",
            "DESCRIPTION:Bring the X-ray from March.",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "UID:choir#weekly@example.org",
            f"DTSTAMP:{stamp}",
            f"DTSTART:{choir:%Y%m%dT%H%M%S}",
            f"DTEND:{choir + timedelta(hours=2):%Y%m%dT%H%M%S}",
            "RRULE:FREQ=WEEKLY;COUNT=3",
            f"EXDATE:{cancelled:%Y%m%dT%H%M%S}",
            "SUMMARY:Choir rehearsal",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "UID:holiday@example.org",
            f"DTSTAMP:{stamp}",
            "DTSTART;VALUE=DATE:20100704",
            "DTEND;VALUE=DATE:20100706",
            "SUMMARY:Beach holiday in Comporta",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "UID:standup@example.org",
            f"DTSTAMP:{stamp}",
            f"DTSTART:{long_ago:%Y%m%d}T080000",
            f"DTEND:{long_ago:%Y%m%d}T081500",
            "RRULE:FREQ=WEEKLY",
            "SUMMARY:Team standup",
            "END:VEVENT",
            "END:VCALENDAR",
            "",
        ]
    )


def test_calendar_events_become_observations(mem: Memory, tmp_path: Path) -> None:
    today = datetime.now().replace(second=0, microsecond=0)
    path = tmp_path / "cal" / "personal.ics"
    path.parent.mkdir()
    path.write_text(calendar_text(today), encoding="utf-8")
    (path.parent / "broken.ics").write_text("BEGIN:VCALENDAR\nnot a line\n", encoding="utf-8")
    (path.parent / "empty.ics").write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n", encoding="utf-8"
    )

    report = mem.ingest([path.parent])
    rows = observations(mem, "calendar")
    texts = [text for _, text in rows]
    visit = (today - timedelta(days=10)).replace(hour=9, minute=30)
    assert (
        visit,
        f"Calendar event: Dentist appointment, {visit:%Y-%m-%d} 09:30–10:30, at Clinica Sorriso,"
        " Rua Augusta 12, with Dr. Helena Costa, Ana Ribeiro, bruno@example.org.\n"
        "Bring the X-ray from March.",
    ) in rows
    # Three weekly rehearsals less the cancelled one.
    choir = [when for when, text in rows if "Choir rehearsal" in text]
    first = (today - timedelta(days=40)).replace(hour=19, minute=0)
    assert choir == [first, first + timedelta(days=14)]
    # A one-off outside the window is kept; an endless series only inside it.
    assert "Calendar event: Beach holiday in Comporta, 2010-07-04 to 2010-07-05, all day." in texts
    standups = [when for when, text in rows if "Team standup" in text]
    assert standups and min(standups) >= today - timedelta(days=2 * 365 + 7)
    assert max(standups) <= today + timedelta(days=366)
    assert report.derived["observations"] == len(rows)

    reasons = {Path(s.name).name: s.reason for s in report.skipped}
    assert reasons["broken.ics"].startswith("not an iCalendar file")
    assert reasons["empty.ics"] == "no events in the calendar"

    again = mem.ingest([path.parent])
    assert not again.changed
    assert observations(mem, "calendar") == rows


def test_calendar_event_reaches_the_briefing(mem: Memory, tmp_path: Path) -> None:
    today = datetime.now().replace(second=0, microsecond=0)
    path = tmp_path / "personal.ics"
    path.write_text(calendar_text(today), encoding="utf-8")
    mem.ingest([path])

    persona = get_persona("analyst")
    question = "When was my dentist appointment?"
    result = retrieve(mem, question, persona, now=today)
    assert result.observations[0].source == "calendar"
    assert "Dentist appointment" in result.observations[0].text
    briefing = briefing_for(mem, question, result, persona, "neutral")
    everything = briefing.system + "\n".join(m["content"] for m in briefing.messages)
    assert "Dentist appointment" in everything and "Clinica Sorriso" in everything
