"""Records as memory, through the real pipeline (real DuckDB file, the real embedder):
calendars (.ics), workouts (GPX, FIT), Day One exports and mapped CSV files."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
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


# --------------------------------------------------------------------------- workouts


def haversine_km(points: list[tuple[float, float]]) -> float:
    """The track's length by the haversine formula (independent of gpxpy's own)."""
    import math

    total = 0.0
    for (lat1, lon1), (lat2, lon2) in zip(points, points[1:], strict=False):
        p1, p2 = math.radians(lat1), math.radians(lat2)
        dp, dl = p2 - p1, math.radians(lon2 - lon1)
        a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
        total += 2 * 6371.0 * math.asin(math.sqrt(a))
    return total


def write_fit(path: Path, start: datetime, *, session: bool) -> None:
    """A small FIT activity written with fit-tool: four records 10 minutes apart (1.7 km and
    one beat per minute more each), and, when ``session``, a session message summing them."""
    from fit_tool.fit_file_builder import FitFileBuilder
    from fit_tool.profile.messages.file_id_message import FileIdMessage
    from fit_tool.profile.messages.record_message import RecordMessage
    from fit_tool.profile.messages.session_message import SessionMessage
    from fit_tool.profile.profile_type import FileType, Manufacturer, Sport

    ms = round(start.timestamp() * 1000)
    builder = FitFileBuilder(auto_define=True)
    file_id = FileIdMessage()
    file_id.type = FileType.ACTIVITY
    file_id.manufacturer = Manufacturer.DEVELOPMENT.value
    file_id.product = 0
    file_id.time_created = ms
    file_id.serial_number = 1
    builder.add(file_id)
    for i in range(4):
        record = RecordMessage()
        record.timestamp = ms + i * 600_000
        record.distance = i * 1700.0
        record.heart_rate = 140 + i
        builder.add(record)
    if session:
        summary = SessionMessage()
        summary.timestamp = ms + 1_800_000
        summary.start_time = ms
        summary.sport = Sport.CYCLING
        summary.total_elapsed_time = 1800.0
        summary.total_timer_time = 1800.0
        summary.total_distance = 5100.0
        summary.avg_heart_rate = 148
        builder.add(summary)
    builder.build().to_file(str(path))


def test_gpx_and_fit_workouts(mem: Memory, tmp_path: Path) -> None:
    import re
    import shutil

    folder = tmp_path / "workouts"
    folder.mkdir()
    shutil.copy(DATA / "morning-run.gpx", folder / "morning-run.gpx")
    start = datetime(2026, 11, 20, 7, 15)
    write_fit(folder / "ride.fit", start, session=True)
    write_fit(folder / "watch.fit", start - timedelta(days=1), session=False)
    (folder / "broken.gpx").write_text("<gpx><trk><name>cut off", encoding="utf-8")
    (folder / "route.gpx").write_text(
        '<gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><rte><name>Plan</name>'
        '<rtept lat="38.69" lon="-9.21"/></rte></gpx>',
        encoding="utf-8",
    )
    (folder / "garbage.fit").write_bytes(b"this is not a FIT file at all")
    whole = (folder / "ride.fit").read_bytes()
    (folder / "truncated.fit").write_bytes(whole[: len(whole) // 2])

    report = mem.ingest([folder])
    rows = observations(mem, "workout")
    by_day = {when.date(): text for when, text in rows}
    assert len(rows) == 3

    # The GPX times are UTC: shown and stored in local wall time.
    began = datetime(2026, 3, 14, 7, 0, tzinfo=UTC).astimezone().replace(tzinfo=None)
    run = by_day[began.date()]
    match = re.fullmatch(
        r"Workout: running, (\d+\.\d\d) km in 15:00 \(pace (\d+):(\d\d) /km\), started"
        + f" {began:%Y-%m-%d %H:%M}"
        + r", average heart rate 146 bpm\.",
        run,
    )
    assert match, run
    points = [(38.6916, -9.2160), (38.6950, -9.2060), (38.6990, -9.1960), (38.7030, -9.1860)]
    km = float(match.group(1))
    assert km == pytest.approx(haversine_km(points), rel=0.01)
    pace = int(match.group(2)) * 60 + int(match.group(3))
    assert pace == pytest.approx(15 * 60 / km, abs=1)

    assert by_day[start.date()] == (
        "Workout: cycling, 5.10 km in 30:00 (10.2 km/h), started 2026-11-20 07:15,"
        " average heart rate 148 bpm."
    )
    # Without a session message: summed from the records (mean of 140..143 is 141.5).
    assert by_day[(start - timedelta(days=1)).date()] == (
        "Workout: workout, 5.10 km in 30:00 (pace 5:53 /km), started 2026-11-19 07:15,"
        " average heart rate 142 bpm."
    )

    reasons = {Path(s.name).name: s.reason for s in report.skipped}
    assert reasons["broken.gpx"].startswith("not a GPX file")
    assert reasons["route.gpx"] == "no tracks in the GPX file"
    assert reasons["garbage.fit"].startswith("not a readable FIT file")
    assert reasons["truncated.fit"].startswith("not a readable FIT file")
    assert len(reasons) == 4

    again = mem.ingest([folder])
    assert not again.changed
    assert observations(mem, "workout") == rows


# --------------------------------------------------------------------------- Day One


def journal_rows(memory: Memory) -> list[tuple[str, str, datetime, str, list[str], str | None]]:
    rows = memory.db.fetchall(
        "SELECT kind, title, occurred_at, text, tags, metadata::VARCHAR FROM episodes"
        " WHERE kind = 'journal' ORDER BY occurred_at"
    )
    return [(r[0], r[1], r[2], r[3], list(r[4]), r[5]) for r in rows]


def test_day_one_export(mem: Memory, tmp_path: Path) -> None:
    import json
    import shutil

    folder = tmp_path / "dayone"
    folder.mkdir()
    export = folder / "Journal.json"
    shutil.copy(DATA / "Journal.json", export)
    (folder / "settings.json").write_text('{"theme": "dark"}', encoding="utf-8")
    (folder / "cut.json").write_text('{"entries": [{"uuid": ', encoding="utf-8")

    report = mem.ingest([folder])
    assert report.added == 2
    rows = journal_rows(mem)
    assert [r[:3] for r in rows] == [
        ("journal", "Dinner with Ana", datetime(2026, 4, 2, 22, 40)),  # Lisbon, summer time
        ("journal", "Slept badly, the neighbours' dog again.", rows[1][2]),
    ]
    # No timeZone: local time.
    utc = datetime(2026, 4, 5, 8, 5, tzinfo=UTC)
    assert rows[1][2] == utc.astimezone().replace(tzinfo=None)
    dinner = rows[0]
    assert dinner[3].startswith(
        "Written at Taberna da Rua da Rosa, Lisbon · 18 °C, partly cloudy\n\n# Dinner with Ana\n"
    )
    assert "bacalhau place on Rua da Rosa. Ana" in dinner[3]
    assert "dayone-moment" not in dinner[3]
    assert dinner[4] == ["family", "evening"]
    meta = json.loads(dinner[5])
    assert meta["location"]["localityName"] == "Lisbon"
    assert meta["location"]["latitude"] == 38.7139
    assert meta["weather"] == {
        "conditionsDescription": "Partly Cloudy",
        "temperatureCelsius": 17.6,
        "weatherCode": "partly-cloudy-night",
    }
    assert rows[1][5] is None  # nothing recorded beside the text

    reasons = {Path(s.name).name: s.reason for s in report.skipped}
    assert reasons == {
        "Journal.json#DEADBEEF000000000000000000000000": "entry has no creationDate",
        "Journal.json#C0FFEE00000000000000000000000000": "entry has no text",
        "cut.json": reasons["cut.json"],
    }
    assert reasons["cut.json"].startswith("invalid JSON")
    # Other JSON (a vault plugin's settings) is left out on purpose, not a failure.
    assert [(Path(s.name).name, s.reason) for s in report.ignored] == [
        ("settings.json", 'JSON but not a Day One export (no "entries" list)')
    ]

    again = mem.ingest([folder])
    assert (again.added, again.updated, again.unchanged) == (0, 0, 2)
    # An entry edited in the app replaces itself (keyed by its uuid).
    data = json.loads(export.read_text(encoding="utf-8"))
    data["entries"][1]["text"] = "Slept well for once."
    export.write_text(json.dumps(data), encoding="utf-8")
    edited = mem.ingest([folder])
    assert (edited.added, edited.updated, edited.unchanged) == (0, 1, 1)
    assert journal_rows(mem)[1][3] == "Slept well for once."


# --------------------------------------------------------------------------- CSV by a mapping


BANK_CSV = """Date,Description,Amount,Balance
2026-03-01,Padaria Portuguesa,-4.20,1200.00
2026-03-02,"Salary, March",2500.00,3700.00

2026-03-03,Rent,-900.00,2800.00
yesterday,Coffee,-1.10,2798.90
2026-03-04,,-3.00,2795.90
"""

TRACKER_CSV = "Tag;Schritte\n05.03.2026;11200\n06.03.2026;4300\n"


def test_csv_by_mapping_through_the_cli(tmp_home: Path, tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    import json

    from click.testing import CliRunner

    from sadie_tui.cli import main_group

    folder = tmp_path / "exports"
    folder.mkdir()
    bank = folder / "bank.csv"
    bank.write_text(BANK_CSV, encoding="utf-8")
    runner = CliRunner()

    unmapped = runner.invoke(main_group, ["ingest", str(bank)], terminal_width=200)
    assert unmapped.exit_code == 6, unmapped.output
    assert (
        f"skipped {bank}: a CSV file is read with a column mapping:"
        " --map date=COLUMN,text=COLUMN[,source=NAME]" in unmapped.stdout
    )
    assert "ignored" in unmapped.stdout  # the summary counts what was left out on purpose

    spec = "date=Date,text=Description,source=bank,amount=Amount"
    mapped = runner.invoke(main_group, ["ingest", "--json", "--map", spec, str(bank)])
    assert mapped.exit_code == 6, mapped.output  # two rows skipped
    data = json.loads(mapped.stdout)
    assert data["derived"]["observations"] == 3
    assert {(s["path"].rsplit("#", 1)[1], s["reason"]) for s in data["skipped"]} == {
        ("6", "date 'yesterday' not understood (give its format: format=%d/%m/%Y)"),
        ("7", "row has no text"),
    }
    again = runner.invoke(main_group, ["ingest", "--json", "--map", spec, str(bank)])
    assert json.loads(again.stdout)["derived"]["observations"] == 0

    tracker = folder / "steps.csv"
    tracker.write_text(TRACKER_CSV, encoding="utf-8")
    steps = runner.invoke(
        main_group,
        ["ingest", "--json", "--map", "date=Tag,text=Schritte,source=steps", str(tracker)],
    )
    assert steps.exit_code == 0, steps.output
    missing = runner.invoke(
        main_group, ["ingest", "--json", "--map", "date=Datum,text=Schritte", str(tracker)]
    )
    (skip,) = json.loads(missing.stdout)["skipped"]
    assert skip["reason"] == "no column 'Datum' (the columns are: Tag, Schritte)"

    bad = runner.invoke(main_group, ["ingest", "--map", "date=Date", str(bank)])
    assert bad.exit_code == 2
    assert "--map needs text=COLUMN" in bad.output

    with Memory.open(tmp_home, embedder=embedder) as memory:
        assert observations(memory, "bank") == [
            (datetime(2026, 3, 1), "Padaria Portuguesa (amount: -4.20)"),
            (datetime(2026, 3, 2), "Salary, March (amount: 2500.00)"),
            (datetime(2026, 3, 3), "Rent (amount: -900.00)"),
        ]
        assert observations(memory, "steps") == [
            (datetime(2026, 3, 5), "11200"),
            (datetime(2026, 3, 6), "4300"),
        ]
