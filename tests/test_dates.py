"""Note dates: front matter in the formats vault tools write, dated paths, the file's time, and
the order they are tried in (created > dated name > updated > modification time)."""

from __future__ import annotations

import os
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from sadie_tui.engine.ingest.dates import date_from_path, note_date, parse_when
from sadie_tui.engine.ingest.readers import ReadResult, read_path

APRIL_1 = datetime(2026, 4, 1)
APRIL_1_9AM = datetime(2026, 4, 1, 9, 0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-04-01", APRIL_1),
        ("2026-04-01T09:00", APRIL_1_9AM),  # Obsidian's, no seconds
        ("2026-04-01 09:00", APRIL_1_9AM),
        ("2026-04-01T09:00:30", datetime(2026, 4, 1, 9, 0, 30)),
        ("2026-04-01T09:00:00Z", APRIL_1_9AM),  # naive wall time, zone dropped
        ("2026-04-01T09:00+02:00", APRIL_1_9AM),
        ("2026/04/01", APRIL_1),
        ("2026/04/01 09:00", APRIL_1_9AM),
        ("2026.04.01", APRIL_1),
        ("April 1, 2026", APRIL_1),
        ("1 April 2026", APRIL_1),
        ("Apr 1st, 2026", APRIL_1),
        ("[[Mar 5th, 2026]]", datetime(2026, 3, 5)),  # Logseq's journal link
        ("Wednesday, April 1st 2026, 9:00:00 am", APRIL_1_9AM),
        (" '2026-04-01' ", APRIL_1),
        (date(2026, 4, 1), APRIL_1),  # YAML date objects
        (datetime(2026, 4, 1, 9, 0, tzinfo=timezone(timedelta(hours=2))), APRIL_1_9AM),
    ],
)
def test_parse_when_reads_the_usual_formats(value: object, expected: datetime) -> None:
    assert parse_when(value) == expected


@pytest.mark.parametrize("value", ["someday", "", "   ", None, 5, "2026-13-45", "x" * 100, []])
def test_parse_when_says_none_for_what_is_not_a_date(value: object) -> None:
    assert parse_when(value) is None


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("2026-03-05.md", datetime(2026, 3, 5)),
        ("journals/2026_03_05.md", datetime(2026, 3, 5)),
        ("Daily/2026-03-05 Thursday.md", datetime(2026, 3, 5)),
        ("2026/03/05.md", datetime(2026, 3, 5)),
        ("notes/run-2026.11.02.md", datetime(2026, 11, 2)),
        ("2026-02-31.md", None),  # impossible: no date
        ("notes/plain.md", None),
        ("v12026-03-051.md", None),  # digits run on: not a date
    ],
)
def test_dated_paths(rel: str, expected: datetime | None) -> None:
    assert date_from_path(Path("/somewhere/vault") / rel) == expected


def test_note_date_precedence(tmp_path: Path) -> None:
    dated = tmp_path / "2026-03-05.md"
    plain = tmp_path / "plain.md"
    for path in (dated, plain):
        path.write_text("x", encoding="utf-8")
    stamp = datetime(2024, 5, 6, 7, 8, 9)
    os.utime(plain, (stamp.timestamp(), stamp.timestamp()))
    os.utime(dated, (stamp.timestamp(), stamp.timestamp()))
    # created-type front matter beats the dated name
    assert note_date({"created": "2026-04-01T09:00"}, dated) == APRIL_1_9AM
    assert note_date({"date": "2026-04-01"}, dated) == APRIL_1
    assert note_date({"Date Created": "2026-04-01"}, dated) == APRIL_1
    assert note_date({"created_at": "2026-04-01"}, plain) == APRIL_1
    # date beats created when both are there
    assert note_date({"created": "2020-01-01", "date": "2026-04-01"}, plain) == APRIL_1
    # the dated name beats updated/modified
    assert note_date({"updated": "2026-04-01"}, dated) == datetime(2026, 3, 5)
    # updated/modified only when nothing else dates the note, then the file's time
    assert note_date({"modified": "2026-04-01 09:00"}, plain) == APRIL_1_9AM
    assert note_date({"updated": "not a date"}, plain) == stamp
    assert note_date({}, plain) == stamp


def test_a_note_is_never_dated_the_day_of_the_ingest(tmp_path: Path) -> None:
    (tmp_path / "Daily").mkdir()
    note = tmp_path / "Daily" / "untitled.md"
    note.write_text("---\ncreated: 2026-04-01T09:00\n---\nA day.", encoding="utf-8")
    yaml_dated = tmp_path / "y.md"
    yaml_dated.write_text("---\ncreated: 2026-04-01 09:00:00\n---\nA day.", encoding="utf-8")
    for path in (note, yaml_dated):
        result = ReadResult()
        read_path(path, result)
        assert [ep.occurred_at for ep in result.episodes] == [APRIL_1_9AM]
