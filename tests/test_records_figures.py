"""Records check what the notes claim (issue 36, item 2): figures from the records, computed
without a model, and the self-reports they contradict; and a quote must support its belief
(item 3). Real ingest, a real DuckDB file, the offline reasoner."""

from __future__ import annotations

import json
import re
import shutil
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from sadie_tui.config import Settings
from sadie_tui.engine.errors import ModelUnreachable
from sadie_tui.engine.ingest.measures import measure_of, record_numbers
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.operations import ListBeliefs, ShowBelief
from sadie_tui.engine.reflect.evidence import OPPOSITE, police_answer
from sadie_tui.engine.reflect.figures import check_records
from sadie_tui.engine.reflect.prompt import Shown
from sadie_tui.engine.session import Session
from sadie_tui.engine.store import figures as figure_store

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


# -- the connectors keep the numbers ------------------------------------------------------------


def test_a_text_observation_is_read_where_its_pattern_is_unambiguous() -> None:
    at = datetime(2026, 3, 14, 8, 20)
    night = measure_of("sleep-tracker", "Slept 4h58m. Bedtime 01:37.", at)
    assert night is not None and (night.measure, night.value) == ("sleep", 298)
    assert night.start == night.end == date(2026, 3, 14)
    month = measure_of(
        "screen-time",
        "January: phone use after 23:00 averaged 58 min/night.",
        datetime(2026, 1, 31),
    )
    assert month is not None and (month.measure, month.value) == ("phone_night", 58)
    assert (month.start, month.end) == (date(2026, 1, 1), date(2026, 1, 31))
    week = measure_of("sleep-tracker", "7-day average 5h48m asleep.", datetime(2026, 1, 4))
    assert week is not None and week.start == date(2025, 12, 29)
    # two averages over different periods: not guessed at
    both = "7-day average 6h10m. March average 5h44m."
    assert measure_of("sleep-tracker", both, datetime(2026, 3, 31)) is None
    assert measure_of("running-watch", "March: 3 activities, 0 continuous runs.", at) is None
    assert record_numbers("12.1 km, Belém and back, 1:08:40, avg 5:40/km.") == {
        "distance_km": 12.1,
        "duration_s": 4120,
    }
    assert record_numbers("Two orders, €12.00 and €9.50.") == {}


# -- sixty nights against three entries ---------------------------------------------------------


def _sleep_notes(root: Path) -> Path:
    """Sixty nights of tracker records between 5 h 30 and 6 h, three entries saying "I sleep
    about seven hours a night", one that only reports the phrase."""
    root.mkdir(parents=True)
    first = date(2026, 1, 1)
    lines = []
    for n in range(60):
        day = first + timedelta(days=n)
        minutes = 330 + (n * 7) % 31  # 5 h 30 .. 6 h 00
        text = f"Slept {minutes // 60}h{minutes % 60:02d}m; 2 awakenings."
        lines.append({"source": "sleep-tracker", "observed_at": f"{day}T07:00:00", "text": text})
    lines.append(
        {"source": "calendar", "observed_at": "2026-01-20T18:00:00", "text": "Week of 19 Jan."}
    )
    (root / "observations.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    for n, day in enumerate(("2026-01-20", "2026-02-10", "2026-02-28")):
        (root / f"{day}.md").write_text(
            f"---\ndate: {day}\n---\nLong day at work. I sleep about seven hours a night, so"
            f" I'm fine. Lunch with Kofi number {n}.\n"
        )
    (root / "2026-02-01.md").write_text(
        "---\ndate: 2026-02-01\n---\nI've stopped telling people I sleep seven hours.\n"
    )
    return root


def test_sixty_nights_contest_the_self_report_with_no_model(
    tmp_home: Path, tmp_path: Path, embedder
) -> None:
    """The offline reasoner: ``sadie reflect`` still checks the records (before it says it
    needs a model), and the self-report the notes make ends contested with the figure."""
    notes = _sleep_notes(tmp_path / "notes")
    with Memory.open(tmp_home, embedder=embedder) as memory:
        memory.ingest([notes])
    session = Session.open(tmp_home, Settings(reasoner="offline"))
    try:
        with pytest.raises(ModelUnreachable, match="needs a model"):
            session.reflect()
        contested = session.call(ListBeliefs(status="contested"))
        assert [b.statement for b in contested] == [
            "I sleep about seven hours a night, so I'm fine."
        ]
        detail = session.call(ShowBelief(contested[0].id))
        assert len([e for e in detail.evidence if e.stance == "supports"]) == 3
        said = [c.reason for c in detail.changes if c.action == "contested"]
        assert said and said[0].startswith("by the records: you say about seven hours; the tracker")
        # the window ending on one of the days it was said, with the nights it holds
        assert re.search(
            r"over the 90 nights to (20 Jan|10 Feb|28 Feb) 2026 \((20|41|59) with a figure\)",
            said[0],
        )
        figure = said[0].split("averaged ")[1].split(" asleep")[0]
        hours, minutes = int(figure.split(" h ")[0]), int(figure.split(" h ")[1][:2])
        assert 330 <= hours * 60 + minutes <= 360
        records = [x for x in detail.links if x.kind == "contradicts"]
        assert len(records) >= 20 and all(x.target_kind == "observation" for x in records)
        assert records[0].text.startswith("sleep-tracker ")
        backed = session.call(ListBeliefs(origin="records"))
        assert any("over the 30 nights to 1 Mar 2026" in b.statement for b in backed)
        assert all(b.evidence > 0 for b in backed)
        # a second run adds nothing
        with pytest.raises(ModelUnreachable):
            session.reflect()
        again = session.call(ShowBelief(contested[0].id))
        assert len(again.links) == len(detail.links)
        assert len(again.changes) == len(detail.changes)
        assert len(session.call(ListBeliefs(origin="records"))) == len(backed)
    finally:
        session.close()


def _contested_when_said_on(day: str, home: Path, root: Path, embedder) -> list[list[str]]:
    """Each contested belief's "contested" reasons after the records check (offline) on a
    memory of the sixty tracked nights (from 1 January 2026) and one self-report dated
    ``day``, before them."""
    notes = root / day
    _sleep_notes(notes)
    for dated in notes.glob("2026-*.md"):
        dated.unlink()
    (notes / f"{day}.md").write_text(
        f"---\ndate: {day}\n---\nI think I sleep about seven hours a night, most nights.\n"
    )
    with Memory.open(home, embedder=embedder) as memory:
        memory.ingest([notes])
    session = Session.open(home, Settings(reasoner="offline"))
    try:
        with pytest.raises(ModelUnreachable):
            session.reflect()
        return [
            [c.reason for c in session.call(ShowBelief(b.id)).changes if c.action == "contested"]
            for b in session.call(ListBeliefs(status="contested"))
        ]
    finally:
        session.close()


def test_a_habit_said_before_the_records_began_is_checked_by_the_first_window_after(
    tmp_home: Path, tmp_path: Path, embedder
) -> None:
    """Said eleven days before the tracker's first night: no window ending that day holds a
    figure, the first 90 nights after it do."""
    contested = _contested_when_said_on("2025-12-21", tmp_home, tmp_path, embedder)
    assert len(contested) == 1
    said = contested[0]
    assert said and "over the 90 nights from 1 Jan 2026, the first it recorded after you" in said[0]
    assert "(60 with a figure)" in said[0]
    # Said more than LEAD_DAYS before the records began, it is not checked.
    assert _contested_when_said_on("2025-11-01", tmp_path / "home2", tmp_path, embedder) == []


def test_the_figure_is_the_sql_the_readme_shows(tmp_home: Path, tmp_path: Path, embedder) -> None:
    """The README's query gives the figure the belief states, and a night recorded inside a
    month's average is not counted twice."""
    notes = _sleep_notes(tmp_path / "notes")
    extra = {
        "source": "sleep-tracker",
        "observed_at": "2026-01-31T09:00:00",
        "text": "January average 9h00m.",
    }
    with (notes / "observations.jsonl").open("a") as f:
        f.write(json.dumps(extra) + "\n")
    with Memory.open(tmp_home, embedder=embedder) as memory:
        memory.ingest([notes])
        w = figure_store.window(memory.db, "sleep", date(2026, 1, 1), date(2026, 1, 31))
        assert w.days == 31 and 330 <= w.mean <= 360  # the nights, not the month's 9 h
        assert figure_store.counts(memory.db) == (61, 1)  # the calendar line is left out


# -- the demo's four ----------------------------------------------------------------------------

FOUR = (
    "I sleep about seven hours a night.",
    "I barely look at my phone at night.",
    "I don't spend much on takeaway.",
    "I run four times a week.",
)


def test_the_demos_four_self_reports_end_contested_from_records_alone(
    tmp_home: Path, tmp_path: Path, embedder
) -> None:
    """The demo's beliefs.jsonl, its observations and the notes its four self-reports cite:
    each ends contested, the records' figure in words, with no model."""
    root = tmp_path / "demo"
    root.mkdir()
    shutil.copy(DEMO / "observations.jsonl", root)
    stated = [json.loads(x) for x in (DEMO / "beliefs.jsonl").read_text().splitlines() if x]
    four = [b for b in stated if b["statement"] in FOUR]
    for b in four:
        b["status"] = "active"  # the records, not the file, must contest them
        for ref in b["evidence"]:
            path = ref.split("#")[0]
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(DEMO / path, root / path)
    (root / "beliefs.jsonl").write_text("\n".join(json.dumps(b) for b in four) + "\n")
    with Memory.open(tmp_home, embedder=embedder) as memory:
        memory.ingest([root])
        report = check_records(memory.db, lambda t: memory.embedder.encode(list(t)))
    assert report.contested == 4 and report.left_out == 25 and report.read == 35
    session = Session.open(tmp_home, Settings(reasoner="offline"))
    try:
        words = {}
        for b in session.call(ListBeliefs(origin="stated")):
            assert b.status == "contested", b.statement
            detail = session.call(ShowBelief(b.id))
            words[b.statement] = next(c.reason for c in detail.changes if c.action == "contested")
    finally:
        session.close()
    assert (
        "the tracker averaged 5 h 46 m asleep a night over the 90 nights to 4 Jan 2026"
        in (words[FOUR[0]])
    )
    assert "phone use after 23:00 averaged 1 h 42 m a night" in words[FOUR[1]]
    assert "food delivery cost €192 a month over the 90 days to 6 Apr 2026" in words[FOUR[2]]
    assert "the watch averaged 2.8 runs a week over the 30 days to 22 Aug 2026" in words[FOUR[3]]


# -- a quote must support its belief ------------------------------------------------------------


def _shown(text: str) -> dict[str, Shown]:
    return {
        "E1": Shown("E1", "7d1b0d8e-0000-4000-8000-000000000001", "2026-06-02", "Cutover", text)
    }


@pytest.mark.parametrize(
    ("statement", "quote"),
    [
        (
            "I am confident that I will be able to sleep at home after the cutover",
            "Home at five, too wired to sleep.",
        ),
        ("I like my manager", "I don't like my manager, and I never have."),
        ("I am a morning person", "I could never be a morning person."),
    ],
)
def test_a_quote_that_says_the_opposite_is_never_support(statement: str, quote: str) -> None:
    answer = json.dumps(
        {
            "beliefs": [
                {"statement": statement, "kind": "habit", "evidence": [{"e": "E1", "quote": quote}]}
            ]
        }
    )
    policed = police_answer(
        answer, _shown(f"Cutover night. {quote} Tomorrow is another day."), None
    )
    assert policed.candidates == []
    assert policed.quotes_dropped[OPPOSITE] == 1


def test_a_quote_that_says_the_belief_still_backs_it() -> None:
    quote = "Could not sleep before the Warden meeting."
    answer = json.dumps(
        {
            "beliefs": [
                {
                    "statement": "I sleep badly before big meetings",
                    "kind": "health",
                    "evidence": [{"e": "E1", "quote": quote}],
                }
            ]
        }
    )
    policed = police_answer(answer, _shown(quote), None)
    assert [c.evidence[0].quote for c in policed.candidates] == [quote]
