"""Time in retrieval on a real memory: a window from the question is a filter (outside notes
only fill in, ranked below and marked), and recency questions ("the last time", "when did I
first") order their notes by date without the persona's decay hiding the oldest."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from sadie_tui import cli
from sadie_tui.commands import output
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.personas import get_persona
from sadie_tui.engine.prompt import build_briefing, render_observations
from sadie_tui.engine.retrieval import graph, keyword, retrieve
from sadie_tui.engine.turns.common import excerpt_order, excerpts_of
from tests.conftest import write_notes

NOW = datetime(2026, 11, 30, 9, 0)


def _note(day: str, title: str, text: str) -> tuple[str, str]:
    return f"journal/{day}.md", f"---\ntitle: {title}\ndate: {day}\nkind: journal\n---\n{text}"


NOTES = dict(
    [
        # Strong keyword matches for "worry", outside March.
        _note("2026-02-14", "Deadline dread", "Worry, worry, worry: I worry about the deadline."),
        _note("2026-11-05", "Money worries", "I worry about money. The worry keeps me up."),
        _note(
            "2026-06-02", "Worry list", "A list of what I worry about: rent, knee, worry itself."
        ),
        # March: three notes, only one of them about worry at all.
        _note("2026-03-03", "Tax forms", "Tax forms are piling up on the kitchen table."),
        _note("2026-03-12", "Coffee with Rui", "Met Rui for coffee in Alvalade; he talked bikes."),
        _note("2026-03-20", "Knee again", "A slight worry about the knee after the stairs."),
        # Runs with Ines, and runs without her, across the year.
        _note("2026-01-11", "Cold river", "Ran ten kilometres along the river with Ines."),
        _note("2026-05-17", "Belém", "Long run with Ines to Belém and back, pastries after."),
        _note(
            "2026-11-08", "Club morning", "Ines ran next to me at the club and showed me a ring."
        ),
        _note("2026-09-01", "Solo tempo", "Tempo run alone on the track, six kilometres."),
        _note("2026-10-02", "Solo easy", "Easy run alone before work, five kilometres."),
        _note("2026-11-20", "Solo long", "Long run alone on the river path, sixteen kilometres."),
        (
            "beliefs.jsonl",
            '{"statement": "I worry about deadlines more than anything", "status": "active",'
            ' "confidence": 0.7, "evidence": ["journal/2026-02-14.md"]}\n'
            '{"statement": "The knee is a small worry now", "status": "active",'
            ' "confidence": 0.5, "evidence": ["journal/2026-03-20.md"]}\n',
        ),
        (
            "observations.jsonl",
            '{"source": "sleep-tracker", "observed_at": "2026-03-10T07:00:00",'
            ' "text": "Worry night: slept 4h50m."}\n'
            '{"source": "sleep-tracker", "observed_at": "2026-11-06T07:00:00",'
            ' "text": "Worry night again: slept 5h02m."}\n',
        ),
    ]
)


@pytest.fixture(scope="module")
def time_home(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:  # type: ignore[no-untyped-def]
    notes = write_notes(tmp_path_factory.mktemp("time-notes"), NOTES)
    home = tmp_path_factory.mktemp("time") / "home"
    with Memory.open(home, embedder=embedder) as memory:
        memory.ingest([notes])
    return home


@pytest.fixture
def memory(time_home: Path, embedder):  # type: ignore[no-untyped-def]
    mem = Memory.open(time_home, embedder=embedder)
    yield mem
    mem.close()
    keyword.forget_cached(time_home)
    graph.forget_cached(str(time_home))


def dates(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.occurred_at.date().isoformat() for c in result.chunks]


# --------------------------------------------------------------------------- the window


def test_a_window_is_a_filter_outside_notes_only_fill_in_below(memory: Memory) -> None:
    result = retrieve(memory, "What did I worry about in March?", get_persona("analyst"), now=NOW)
    assert result.window is not None and result.window.phrase == "in March"
    inside = [c for c in result.chunks if c.in_window]
    # Every March note (the window reaches three days into April) comes before any other...
    assert {c.title for c in inside} == {"Tax forms", "Coffee with Rui", "Knee again"}
    assert [c.in_window for c in result.chunks[:3]] == [True, True, True]
    assert all(d.startswith("2026-03") for d in dates(result)[:3])
    assert result.chunks[0].title == "Knee again"  # the one March note about worry
    # ...and the strong "worry" notes of other months only fill the rest, marked outside.
    rest = result.chunks[3:]
    assert rest and all(c.in_window is False for c in rest)
    assert "Deadline dread" in {c.title for c in rest}
    assert max(c.final for c in rest) > min(c.final for c in inside)  # rank, not score


def test_a_window_holding_enough_notes_lets_nothing_else_in(memory: Memory) -> None:
    result = retrieve(
        memory, "What did I worry about in March?", get_persona("analyst"), now=NOW, k=2
    )
    assert len(result.chunks) == 2 and all(c.in_window for c in result.chunks)
    assert all(d.startswith("2026-03") for d in dates(result))


def test_no_window_no_marks(memory: Memory) -> None:
    result = retrieve(memory, "What do I worry about?", get_persona("analyst"), now=NOW)
    assert result.window is None and all(c.in_window is None for c in result.chunks)
    assert result.chunks[0].title in {"Deadline dread", "Money worries", "Worry list"}


def test_the_briefing_says_which_excerpts_are_outside_the_asked_time(memory: Memory) -> None:
    skeptic = get_persona("skeptic")  # observations too
    result = retrieve(memory, "What did I worry about in March?", skeptic, now=NOW)
    excerpts = excerpts_of(result)
    assert [e.outside for e in excerpts[:3]] == ["", "", ""]
    assert all(e.outside == "in March" for e in excerpts[3:])
    text = build_briefing(message="q", excerpts=excerpts).system
    assert text.count("[outside the asked time: in March]") == len(excerpts) - 3
    assert "Tax forms\n" in text  # an inside header is untouched
    sleep = [o for o in result.observations if o.source == "sleep-tracker"]
    assert [o.in_window for o in sleep][:1] == [True]
    assert sleep[0].observed_at.month == 3  # inside first
    rendered = render_observations(result.observations)
    assert "sleep-tracker [outside the asked time]" in rendered
    assert "2026-03-10 07:00 sleep-tracker: Worry night" in rendered


# --------------------------------------------------------------------------- recency


def test_the_last_time_puts_the_latest_matching_note_first(memory: Memory) -> None:
    result = retrieve(memory, "When did I last run with Ines?", get_persona("analyst"), now=NOW)
    assert result.recency is not None and result.recency.order == "newest"
    assert result.window is None
    titles = {c.title for c in result.chunks}
    assert "Club morning" in titles  # "ran", not "run": found all the same
    excerpts = excerpts_of(result)
    assert excerpts[0].title == "Club morning"
    # The relevant notes (runs with Ines) newest first; the solo runs after them.
    assert [e.title for e in excerpts[:3]] == ["Club morning", "Belém", "Cold river"]
    assert "Solo long" in [e.title for e in excerpts[3:]]
    assert excerpt_order(result) == "newest"
    text = build_briefing(message="q", excerpts=excerpts, excerpt_order="newest").system
    assert "Excerpts (the question asks about the most recent time: newest first" in text


def test_the_first_time_is_not_hidden_by_recency_decay(memory: Memory) -> None:
    # A persona that halves a note's recency share every week, and room for two notes only.
    hasty = dataclasses.replace(get_persona("coach"), half_life_days=7.0)
    first = retrieve(memory, "When did I first run with Ines?", hasty, now=NOW, k=3)
    assert first.recency is not None and first.recency.order == "oldest"
    assert "Cold river" in {c.title for c in first.chunks}
    assert excerpts_of(first)[0].title == "Cold river"


def test_search_json_marks_outside_notes_and_recency(
    time_home: Path, tmp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    shutil.copytree(time_home, tmp_home)
    monkeypatch.setenv("COLUMNS", "220")
    monkeypatch.setattr(output, "_out", None)
    monkeypatch.setattr(output, "_err", None)
    runner = CliRunner()
    try:
        out = runner.invoke(
            cli.main_group, ["search", "What did I worry about in March?", "--json"]
        )
        assert out.exit_code == 0, out.output
        data = json.loads(out.output)
        flags = [c["in_window"] for c in data["chunks"]]
        assert flags[:3] == [True, True, True] and set(flags[3:]) == {False}
        assert data["recency"] is None
        table = runner.invoke(cli.main_group, ["search", "What did I worry about in March?"])
        assert table.exit_code == 0, table.output
        assert "outside · Deadline dread" in table.output
        assert "marked outside: in March holds too few notes" in table.output
        last = runner.invoke(cli.main_group, ["search", "my latest run with Ines", "--json"])
        assert json.loads(last.output)["recency"] == {"order": "newest", "phrase": "my latest"}
        assert {c["in_window"] for c in json.loads(last.output)["chunks"]} == {None}
    finally:
        keyword.forget_cached(tmp_home)
        graph.forget_cached(str(tmp_home))


def test_beliefs_with_evidence_inside_the_window_come_first(memory: Memory) -> None:
    analyst = get_persona("analyst")
    result = retrieve(memory, "What did I worry about in March?", analyst, now=NOW)
    statements = [(b.statement, b.in_window) for b in result.beliefs]
    assert statements[0] == ("The knee is a small worry now", True)
    assert ("I worry about deadlines more than anything", False) in statements
    plain = retrieve(memory, "What do I worry about?", analyst, now=NOW)
    assert {b.in_window for b in plain.beliefs} == {None}
    from sadie_tui.engine.prompt import render_beliefs

    text = render_beliefs(result.beliefs)
    assert "confidence 0.7, outside the asked time] I worry about deadlines" in text


# ----------------------------------------------------- parts of a month, weekdays, 1:1s

PHRASE_NOTES = dict(
    [
        # Two long runs that went wrong: early February and the end of it.
        _note("2026-02-03", "Long run, early Feb", "Long run of 20 km; it went wrong at 15 km."),
        _note("2026-02-27", "Long run, cramp", "Long run of 24 km went wrong: a cramp at 19 km."),
        _note("2026-02-14", "Valentine's", "Tomás took me for dinner at the tasca in Alfama."),
        _note("2026-05-20", "Dinner out", "Dinner with Tomás at the tasca again, cheaper wine."),
        # A Sunday long ago that the question means, and last Sunday, which it does not.
        _note("2026-08-23", "After the fight", "Tomás was hurt that I went for a run and left."),
        _note("2026-11-29", "Quiet Sunday", "Sunday morning: coffee, a run along the river."),
        # One-to-ones with Henrik, spelt as the notes spell them.
        _note("2026-03-24", "1:1 with Henrik — March", "Henrik: scope, hiring, the roadmap."),
        _note("2026-10-02", "1:1 with Henrik — packet", "Henrik read the promotion packet."),
        _note("2026-11-17", "1:1 with Henrik — November", "Henrik on the team's next quarter."),
        _note("2026-11-25", "Team lunch", "Lunch with the team on the terrace; Henrik paid."),
        _note("2026-11-26", "Proposals", "Henrik picked one of the two; one more review to go."),
    ]
)


@pytest.fixture(scope="module")
def phrase_memory(tmp_path_factory: pytest.TempPathFactory, embedder):  # type: ignore[no-untyped-def]
    notes = write_notes(tmp_path_factory.mktemp("phrase-notes"), PHRASE_NOTES)
    home = tmp_path_factory.mktemp("phrase") / "home"
    with Memory.open(home, embedder=embedder) as memory:
        memory.ingest([notes])
    mem = Memory.open(home, embedder=embedder)
    yield mem
    mem.close()
    keyword.forget_cached(home)
    graph.forget_cached(str(home))


def test_the_end_of_a_month_narrows_to_its_last_days(phrase_memory: Memory) -> None:
    q = "What went wrong on my long run at the end of February?"
    result = retrieve(phrase_memory, q, get_persona("analyst"), now=NOW)
    assert result.window is not None and result.window.phrase == "at the end of February"
    assert result.chunks[0].title == "Long run, cramp"
    early = [c for c in result.chunks if c.title == "Long run, early Feb"]
    assert all(c.in_window is False for c in early)


def test_mid_month_narrows_to_its_middle(phrase_memory: Memory) -> None:
    q = "Where did Tomás take me for dinner in mid-February?"
    result = retrieve(phrase_memory, q, get_persona("analyst"), now=NOW)
    assert result.window is not None and (result.window.start, result.window.end) == (
        datetime(2026, 2, 11),
        datetime(2026, 2, 21),
    )
    assert result.chunks[0].title == "Valentine's"
    assert all(c.in_window is False for c in result.chunks if c.title == "Dinner out")


def test_one_sunday_morning_is_no_window_but_sunday_morning_is(phrase_memory: Memory) -> None:
    analyst = get_persona("analyst")
    q = "Why was Tomás hurt when I went for a run one Sunday morning?"
    result = retrieve(phrase_memory, q, analyst, now=NOW)
    assert result.window is None
    assert result.chunks[0].title == "After the fight"
    last = retrieve(phrase_memory, "What did I do Sunday morning?", analyst, now=NOW)
    assert last.window is not None and last.window.start == datetime(2026, 11, 29)
    assert last.chunks[0].title == "Quiet Sunday"


def test_my_latest_one_to_one_finds_the_notes_titled_1_1(phrase_memory: Memory) -> None:
    # "one-to-one" and "1:1" are one token: the 1:1 notes match both of the question's words,
    # and a note with "one" twice and Henrik once does not outrank them.
    q = "When was my latest one-to-one with Henrik?"
    result = retrieve(phrase_memory, q, get_persona("analyst"), now=NOW)
    assert result.recency is not None and result.recency.order == "newest"
    assert {c.title for c in result.chunks[:3]} == {
        "1:1 with Henrik — November",
        "1:1 with Henrik — packet",
        "1:1 with Henrik — March",
    }
    titled = [e.title for e in excerpts_of(result) if e.title.startswith("1:1")]
    assert titled == [
        "1:1 with Henrik — November",
        "1:1 with Henrik — packet",
        "1:1 with Henrik — March",
    ]
