"""`sadie eval demo`: the question file's labels point at real demo files, recall is scored on
chunks (not distinct episodes) with the right cut-off, and the command runs on a demo home that
is the small session memory copied into place (no demo build)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from sadie_tui.cli import main, main_group
from sadie_tui.engine.demo import MARKER
from sadie_tui.engine.errors import ConfigError, NotFoundError
from sadie_tui.engine.wire import dump
from sadie_tui.eval.demo import (
    KINDS,
    DemoQuestion,
    DemoReport,
    DemoResult,
    default_questions,
    demo_now,
    load_questions,
    matches,
    recall_at,
    score,
)
from sadie_tui.paths import project_root, resolve_home
from tests.support.shapes import assert_fits

DEMO = project_root() / "data" / "demo"
DERIVED = ("wiki/", "briefs/", "today/", "beliefs.jsonl", "observations.jsonl", "soul.md")


# --------------------------------------------------------------------------- the question file


def test_the_question_file_parses_and_every_label_is_a_demo_episode() -> None:
    questions = load_questions(default_questions())
    assert len(questions) == 40
    kinds = Counter(q.kind for q in questions)
    assert set(kinds) == set(KINDS) and min(kinds.values()) >= 6, kinds
    assert len({q.question for q in questions}) == 40
    for q in questions:
        assert q.answer, q.question
        for label in q.episodes:
            path, _, line = label.partition("#")
            file = DEMO / path
            assert file.is_file(), label
            # Derived files (wiki, briefs, …) never become chunks: a label there could not be found.
            assert not path.startswith(DERIVED), label
            if path.endswith(".jsonl"):
                assert line.isdigit(), f"{label}: a record is named by its line"
                lines = file.read_text(encoding="utf-8").splitlines()
                assert 1 <= int(line) <= len(lines) and lines[int(line) - 1].strip(), label
            else:
                assert not line, label


def test_a_bad_question_file_is_named_in_one_error(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="no demo questions"):
        load_questions(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "ok?", "episodes": ["journal/a.md"]}\n{"question": "no"}\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:2"):
        load_questions(bad)
    bad.write_text("not json\n")
    with pytest.raises(ConfigError, match="invalid JSON"):
        load_questions(bad)


# --------------------------------------------------------------------------- scoring


def src(label: str) -> str:
    return f"/opt/site-packages/sadie_tui/assets/demo/{label}"


def test_a_label_matches_its_file_and_not_a_longer_name() -> None:
    assert matches(src("journal/a.md"), "journal/a.md")
    assert matches("journal/a.md", "journal/a.md")
    assert matches(src("records/r.jsonl#3"), "records/r.jsonl#3")
    assert not matches(src("records/r.jsonl#31"), "records/r.jsonl#3")
    assert not matches(src("journal/xa.md"), "journal/a.md")
    assert not matches(src("journal/a.md.bak"), "journal/a.md")


def test_recall_counts_chunks_and_cuts_at_k() -> None:
    """Four labels; ``a`` has four chunks in front, so ``b`` is 7th as a chunk (3rd as a
    distinct episode), ``c`` is exactly 10th and ``d`` 11th; the 3rd chunk is record #31,
    which is not record #3."""
    ranked = [
        src("journal/a.md"),
        src("journal/a.md"),
        src("records/r.jsonl#31"),
        src("journal/a.md"),
        src("journal/a.md"),
        src("voice/x.txt"),
        src("journal/b.md"),
        src("voice/y.txt"),
        src("voice/z.txt"),
        src("meetings/c.md"),
        src("records/r.jsonl#3"),
    ]
    labels = ["journal/a.md", "journal/b.md", "meetings/c.md", "records/r.jsonl#3"]
    assert recall_at(labels, ranked, 5) == 0.25  # only a: b is the 7th chunk
    assert recall_at(labels, ranked, 10) == 0.75  # c is 10th, in; d is 11th, out
    assert recall_at(labels, ranked, 11) == 1.0
    assert recall_at(labels, [], 10) == 0.0
    assert recall_at([], ranked, 10) == 0.0

    q = DemoQuestion("?", "time", tuple(labels), "x")
    scored = score(q, ranked)
    assert scored.recall == {5: 0.25, 10: 0.75}
    assert scored.missing(10) == ["records/r.jsonl#3"]


def test_the_report_averages_overall_and_by_kind_and_lists_the_misses() -> None:
    hit = DemoQuestion("hit?", "who", ("journal/a.md",), "a")
    half = DemoQuestion("half?", "time", ("journal/a.md", "journal/b.md"), "a and b")
    miss = DemoQuestion("miss?", "time", ("journal/c.md",), "c")
    report = DemoReport("analyst", datetime(2026, 11, 30, 12))
    for q in (hit, half, miss):
        report.questions.append(score(q, [src("journal/a.md")] * 3 + [src("voice/x.txt")]))
    data = dump(report.result())
    assert_fits(data, DemoResult)
    assert data["questions"] == 3
    assert data["overall"] == {"questions": 3, "recall@5": 0.5, "recall@10": 0.5}
    assert list(data["by_kind"]) == ["time", "who"]  # KINDS order, only kinds asked
    assert data["by_kind"]["time"] == {"questions": 2, "recall@5": 0.25, "recall@10": 0.25}
    assert data["by_kind"]["who"]["recall@10"] == 1.0
    assert [m["question"] for m in data["misses"]] == ["half?", "miss?"]
    assert data["misses"][0]["missing"] == ["journal/b.md"]
    assert data["misses"][0]["retrieved"][0] == "journal/a.md"


def test_the_demo_present_is_the_day_after_its_last_note() -> None:
    assert demo_now(datetime(2026, 11, 29, 21, 40)) == datetime(2026, 11, 30, 12)


# --------------------------------------------------------------------------- the command


@pytest.fixture
def demo_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, built_home: Path, embedder) -> Path:
    """The session's small memory as an already built demo home (nothing is ingested)."""
    monkeypatch.delenv("SADIE_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    home = resolve_home(demo=True)
    shutil.copytree(built_home, home)
    (home / MARKER).write_text("test\n", encoding="utf-8")
    return home


def test_eval_demo_json_scores_the_questions_against_the_demo_home(
    demo_home: Path, tmp_path: Path
) -> None:
    questions = tmp_path / "q.jsonl"
    rows = [
        {"question": "When did I finish the marathon?", "kind": "time",
         "episodes": ["journal/2026-10-11.md"], "answer": "3:58"},
        {"question": "How far did I run by the river with Ines?", "kind": "number",
         "episodes": ["journal/2026-11-20.md"], "answer": "18 km"},
        {"question": "What did the promotion conversation leave me thinking?", "kind": "feeling",
         "episodes": ["voice/2026-11-26-commute.txt", "journal/never-written.md"],
         "answer": "maybe in the spring"},
    ]  # fmt: skip
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = CliRunner().invoke(
        main_group, ["eval", "demo", "--json", "--questions", str(questions)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["questions"] == 3 and data["persona"] == "analyst"
    assert data["now"].startswith("2026-11-27")  # the day after the last note (26 November)
    assert set(data["by_kind"]) == {"time", "number", "feeling"}
    # The unwritten file can never be found: at most 5 of the 6 halves, and a sane floor.
    assert 0.5 <= data["overall"]["recall@10"] <= 5 / 6
    (missed,) = [m for m in data["misses"] if m["kind"] == "feeling"]
    assert "journal/never-written.md" in missed["missing"]
    assert all(r and not r.startswith("/") for r in missed["retrieved"])
    counts = CliRunner().invoke(main_group, ["--demo", "stats", "--json"])
    assert json.loads(counts.stdout)["counts"]["turns"] == 0  # read-only: no telemetry rows

    table = CliRunner().invoke(
        main_group, ["eval", "demo", "-v", "--questions", str(questions)], terminal_width=200
    )
    assert table.exit_code == 0, table.output
    assert "overall" in table.stdout and "recall@10" in table.stdout
    assert "journal/never-written.md" in table.stdout


def test_eval_demo_without_its_question_file_says_so_in_one_line(
    demo_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["eval", "demo", "--questions", str(tmp_path / "nowhere.jsonl")])
    assert info.value.code != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no demo questions" in err and "Traceback" not in err
