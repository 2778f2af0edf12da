"""Issue #34, item 7: the words. A note read for the first time is "read", an edited one
"re-read"; notes from another terminal are counted as notes, added or updated alike; `ingest`
names what it ignored; a watch says a skipped file once; a reflection whose model answer
could not be read says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sadie_tui.cli import main_group
from sadie_tui.config import Settings
from sadie_tui.engine.ingest.pipeline import IngestReport
from sadie_tui.engine.ingest.watch import Batch, apply_changes
from sadie_tui.engine.session import Session
from sadie_tui.serve.job_routes import ingest_notice
from tests.support.ollama_server import Reply


def sadie(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main_group, list(args), terminal_width=200)


def test_the_batch_line_reads_new_notes_and_re_reads_edited_ones() -> None:
    assert Batch(read=10, new=10).line == "read 10 notes"
    assert Batch(read=1, new=1).line == "read 1 note"
    assert Batch(read=3, new=1, removed=1).line == "read 1 note, re-read 2 notes, removed 1"


def test_a_watch_batch_on_a_fresh_home_reads_and_says_a_skip_once(
    tmp_home: Path, embedder, tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "2026-04-01.md").write_text("Walked by the river with Maya.\n", encoding="utf-8")
    (notes / "2026-04-02.md").write_text("First pottery class tonight.\n", encoding="utf-8")
    (notes / "scan.md").write_bytes(b"\xff\xfe\x00\x00binary")
    session = Session.open(tmp_home, Settings(reasoner="offline"))
    try:
        said: set[tuple[str, str]] = set()
        first = apply_changes(session, [notes], [notes], said)
        assert first.line.startswith("read 2 notes, skipped ")
        assert first.line.count("scan.md") == 1
        (notes / "2026-04-02.md").write_text("Second pottery class.\n", encoding="utf-8")
        second = apply_changes(session, [notes], [notes], said)
        assert second.line == "re-read 1 note"  # the same skip is not said again
    finally:
        session.close()


@pytest.mark.parametrize(
    ("report", "line"),
    [
        (IngestReport(added=1), "1 note added from another terminal"),
        (IngestReport(updated=1), "1 note updated from another terminal"),
        (IngestReport(added=2, updated=3), "2 notes added, 3 notes updated from another terminal"),
    ],
)
def test_notes_from_another_terminal_are_counted_as_notes(report, line) -> None:
    assert ingest_notice(report) == line


def test_ingest_names_what_it_ignored(tmp_home: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "private").mkdir(parents=True)
    (vault / "private" / "diary.md").write_text("secret\n", encoding="utf-8")
    (vault / "2026-04-01.md").write_text("Walked with Maya.\n", encoding="utf-8")
    (vault / ".sadieignore").write_text("private/\n", encoding="utf-8")
    ran = sadie("ingest", "--quiet", str(vault))
    assert ran.exit_code == 0, ran.output
    assert f"ignored {vault / 'private'}: matched by .sadieignore" in ran.stdout


def test_a_reflection_answer_that_cannot_be_read_says_why(
    memory_home: Path, server, monkeypatch
) -> None:
    monkeypatch.setenv("SADIE_REASONER", "ollama")
    server.responder = lambda body: Reply(content="Sure! Here are some beliefs: none.")
    ran = sadie("reflect")
    assert ran.exit_code == 0, ran.output
    assert "could not be read: the answer is not JSON." in ran.stdout
