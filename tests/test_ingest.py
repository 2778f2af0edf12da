"""Ingest end to end: idempotence, changed notes, every bad input, derived records, exit status.
Real DuckDB files, the real embedding model, the real CLI (CliRunner and a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from sadie_tui.cli import main_group
from sadie_tui.engine.ingest.chunker import MAX_CHARS
from sadie_tui.engine.ingest.readers import episode_id
from sadie_tui.engine.ingest.summary import IngestSummary
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.wire import dump
from tests.support.shapes import assert_fits

ROOT = Path(__file__).resolve().parent.parent


def _snapshot(memory: Memory) -> dict[str, list]:
    db = memory.db
    return {
        "episodes": db.fetchall(
            "SELECT id, source_key, content_hash, ingested_at FROM episodes ORDER BY id"
        ),
        "chunks": db.fetchall("SELECT id, episode_id, ordinal, text FROM chunks ORDER BY id"),
        "entities": db.fetchall("SELECT id, key, kind FROM entities ORDER BY id"),
        "mentions": db.fetchall(
            "SELECT entity_id, chunk_id, count FROM entity_mentions ORDER BY ALL"
        ),
        "edges": db.fetchall("SELECT * FROM entity_edges ORDER BY ALL"),
        "beliefs": db.fetchall("SELECT * EXCLUDE (embedding) FROM beliefs ORDER BY id"),
        "observations": db.fetchall("SELECT * EXCLUDE (embedding) FROM observations ORDER BY id"),
        "wiki": db.fetchall("SELECT * FROM wiki_entries ORDER BY id"),
        "briefs": db.fetchall("SELECT * FROM briefs ORDER BY id"),
        "today": db.fetchall("SELECT * FROM today_cards ORDER BY id"),
        "soul": db.fetchall("SELECT * FROM soul"),
    }


# --------------------------------------------------------------------------- idempotence


def test_reingest_changes_nothing(memory_home: Path, notes_dir: Path, embedder) -> None:
    with Memory.open(memory_home, embedder=embedder) as memory:
        before = _snapshot(memory)
        assert len(before["episodes"]) == 6 and len(before["chunks"]) == 6
        report = memory.ingest([notes_dir])
        assert (report.added, report.updated, report.unchanged) == (0, 0, 6)
        assert report.chunks == 0 and not report.skipped
        assert not report.changed
        assert all(count == 0 for count in report.derived.values()), report.derived
        assert _snapshot(memory) == before  # nothing rewritten: same chunk ids, same timestamps


def test_changing_one_note_reingests_only_that_note(
    memory_home: Path, notes_dir: Path, tmp_path: Path, embedder
) -> None:
    notes = tmp_path / "notes"
    import shutil

    shutil.copytree(notes_dir, notes)
    # The copy has new paths, so ingest it once (new keys) and then change one file.
    with Memory.open(memory_home, embedder=embedder) as memory:
        first = memory.ingest([notes])
        assert first.added == 6
        before = _snapshot(memory)
        note = notes / "journal" / "2026-11-20.md"
        note.write_text(
            note.read_text("utf-8") + "\n\nPedro joined us in Porto afterwards.", "utf-8"
        )
        changed_id = episode_id(str(note.resolve()))
        report = memory.ingest([notes])
        assert (report.added, report.updated, report.unchanged) == (0, 1, 5)
        assert report.chunks == 1
        after = _snapshot(memory)
        old = {r for r in before["chunks"] if str(r[1]) != changed_id}
        new = {r for r in after["chunks"] if str(r[1]) != changed_id}
        assert old == new  # every other chunk untouched
        (rewritten,) = [r for r in after["chunks"] if str(r[1]) == changed_id]
        assert rewritten[0] > max(r[0] for r in before["chunks"])
        assert "Porto" in rewritten[3]
        untouched = {r for r in before["episodes"] if str(r[0]) != changed_id}
        assert untouched <= set(after["episodes"])
        assert len(after["episodes"]) == len(before["episodes"])
        # Mentions follow the new text; the graph is rebuilt from them.
        porto = memory.db.fetchone(
            "SELECT count(*) FROM entity_mentions m JOIN entities e ON e.id = m.entity_id"
            " WHERE e.key = 'porto' AND m.episode_id = ?",
            [changed_id],
        )
        assert porto == (1,)
        stale = memory.db.fetchone(
            "SELECT count(*) FROM entity_mentions WHERE chunk_id NOT IN (SELECT id FROM chunks)"
        )
        assert stale == (0,)


def test_each_chunk_carries_the_embedding_of_its_own_text(memory_home: Path, embedder) -> None:
    # The pipeline embeds in length order and puts the vectors back: check nothing got swapped.
    with Memory.open(memory_home, embedder=embedder) as memory:
        rows = memory.db.fetchall("SELECT text, embedding FROM chunks ORDER BY id")
    stored = np.array([r[1] for r in rows], dtype=np.float32)
    fresh = embedder.encode([r[0] for r in rows])
    assert len({len(r[0]) for r in rows}) > 1  # lengths differ, so the order was shuffled
    np.testing.assert_allclose(np.sum(stored * fresh, axis=1), 1.0, atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-4)


# --------------------------------------------------------------------------- bad input


@pytest.fixture
def messy_notes(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Good notes next to every kind of bad input; returns (folder, {name: reason fragment})."""
    root = tmp_path / "messy"
    (root / "journal").mkdir(parents=True)
    (root / "journal" / "2026-01-05.md").write_text(
        "---\ntitle: Good one\n---\nA calm day in Lisbon with Ines.", "utf-8"
    )
    (root / "plain.txt").write_text("Another good note about the garden.", "utf-8")
    long_para = " ".join(
        f"Sentence {i} of a long meeting about the Warden migration." for i in range(80)
    )
    (root / "long.md").write_text(long_para, "utf-8")
    (root / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (root / "latin1.txt").write_bytes("Olá, café às três".encode("latin-1"))
    (root / "broken-front.md").write_text("---\ntitle: [unclosed\n---\nbody", "utf-8")
    (root / "bad-date.md").write_text("---\ndate: 2026-13-45\n---\nbody", "utf-8")
    (root / "empty.md").write_text("", "utf-8")
    with (root / "huge.md").open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse 50 MB
    (root / "loop").symlink_to(root / "loop")
    (root / "cycle").symlink_to(root)
    missing = tmp_path / "does-not-exist"
    reasons = {
        str(root / "binary.md"): "binary file",
        str(root / "latin1.txt"): "not UTF-8",
        str(root / "broken-front.md"): "bad front matter",
        str(root / "bad-date.md"): "bad front matter",
        str(root / "empty.md"): "empty file",
        str(root / "huge.md"): "too large",
        str(root / "loop"): "symlink loop",
        str(root / "cycle"): "symlink loop",
        str(missing): "no such file or directory",
    }
    return root, reasons


def test_a_text_embedded_again_comes_from_memory(embedder, monkeypatch) -> None:
    from sadie_tui.engine.ingest import embedder as embedding

    calls: list[list[str]] = []
    real = embedder._encode

    def counting(texts, batch_size):  # type: ignore[no-untyped-def]
        calls.append(list(texts))
        return real(texts, batch_size)

    monkeypatch.setattr(embedder, "_encode", counting)
    embedder.forget_recent()
    first = embedder.encode_one("How was the marathon?")
    again = embedder.encode(["How was the marathon?"])[0]  # the classifier's call
    assert calls == [["How was the marathon?"]]
    assert np.array_equal(first, again)
    again[:] = 0  # a caller's copy: the remembered vector is untouched
    assert np.array_equal(embedder.encode_one("How was the marathon?"), first)
    # Batches are never served from memory; the oldest single texts are forgotten first.
    embedder.encode(["How was the marathon?", "and the race?"])
    for n in range(embedding.RECENT):
        embedder.encode_one(f"question {n}")
    calls.clear()
    embedder.encode_one("How was the marathon?")
    assert calls == [["How was the marathon?"]]
    embedder.forget_recent()
    embedder.encode_one("How was the marathon?")
    assert len(calls) == 2


def test_every_bad_input_is_named_and_the_rest_goes_in(
    tmp_home: Path, messy_notes, tmp_path: Path, embedder
) -> None:
    root, reasons = messy_notes
    missing = tmp_path / "does-not-exist"
    with Memory.open(tmp_home, embedder=embedder) as memory:
        report = memory.ingest([root, missing])
        got = {s.name: s.reason for s in report.skipped}
        assert set(got) == set(reasons), got
        for name, fragment in reasons.items():
            assert fragment in got[name], (name, got[name])
        assert report.added == 3
        titles = {r[0] for r in memory.db.fetchall("SELECT title FROM episodes")}
        assert titles == {"Good one", "Plain", "Long"}
        lengths = [r[0] for r in memory.db.fetchall("SELECT length(text) FROM chunks")]
        assert len(lengths) == report.chunks >= 4
        assert max(lengths) <= MAX_CHARS and min(lengths) > 0
        # The report survives JSON (the CLI's --json).
        data = json.loads(json.dumps(dump(report.summary())))
        assert {s["path"] for s in data["skipped"]} == set(reasons)


def test_cli_exit_status_6_when_anything_was_skipped(
    tmp_home: Path, messy_notes, notes_dir: Path, tmp_path: Path, embedder
) -> None:
    root, reasons = messy_notes
    runner = CliRunner()
    result = runner.invoke(main_group, ["ingest", str(root), str(tmp_path / "does-not-exist")])
    assert result.exit_code == 6, result.output
    for name in reasons:
        (line,) = [ln for ln in result.stdout.splitlines() if ln.startswith(f"skipped {name}:")]
        assert reasons[name] in line
    result = runner.invoke(main_group, ["ingest", "--json", str(notes_dir)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert_fits(data, IngestSummary)
    assert data["added"] == 6 and data["skipped"] == []
    assert data["derived"]["beliefs"] == 2
    result = runner.invoke(main_group, ["ingest", str(notes_dir)])
    assert result.exit_code == 0
    assert "Nothing changed" in result.stdout


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SADIE_HOME=str(home), OLLAMA_HOST="http://127.0.0.1:9", COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def test_cli_subprocess_exit_status(memory_home: Path, notes_dir: Path, tmp_path: Path) -> None:
    # Everything already in: nothing to embed, so the model is never loaded.
    ok = _cli(memory_home, "ingest", str(notes_dir))
    assert ok.returncode == 0, ok.stderr
    assert "Nothing changed" in ok.stdout
    assert "Traceback" not in ok.stderr
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "empty.md").write_text("", "utf-8")
    (bad / "binary.txt").write_bytes(b"\x00\x01\x02")
    partial = _cli(
        memory_home, "ingest", "--json", str(notes_dir), str(bad), str(tmp_path / "gone")
    )
    assert partial.returncode == 6, partial.stderr
    data = json.loads(partial.stdout)
    assert data["unchanged"] == 6
    assert {Path(s["path"]).name: s["reason"] for s in data["skipped"]} == {
        "empty.md": "empty file",
        "binary.txt": "binary file, not text",
        "gone": "no such file or directory",
    }
    usage = _cli(memory_home, "ingest")
    assert usage.returncode == 2
    assert "Traceback" not in usage.stderr


# --------------------------------------------------------------------------- derived records


def test_derived_records_are_loaded(memory_home: Path, notes_dir: Path, embedder) -> None:
    with Memory.open(memory_home, embedder=embedder) as memory:
        db = memory.db
        beliefs = db.fetchall(
            "SELECT statement, status, confidence, evidence, embedding FROM beliefs"
            " ORDER BY statement"
        )
        assert [(b[0], b[1], b[2]) for b in beliefs] == [
            ("I sleep seven hours most nights", "contested", 0.4),
            ("Running keeps me sane", "active", 0.8),
        ]
        episode_ids = {r[0] for r in db.fetchall("SELECT id FROM episodes")}
        for _, _, _, evidence, embedding in beliefs:
            assert evidence and set(evidence) <= episode_ids  # evidence resolves to real episodes
            assert len(embedding) == 384
        titles = dict(db.fetchall("SELECT id, title FROM episodes"))
        evidence_titles = {titles[e] for b in beliefs for e in b[3]}
        assert evidence_titles == {"Warden retro", "Long run by the river"}
        obs = db.fetchall("SELECT source, observed_at, text, embedding FROM observations")
        assert [(o[0], o[1].isoformat(), o[2]) for o in obs] == [
            ("sleep-tracker", "2026-11-21T07:10:00", "Slept 5h42m; 3 awakenings.")
        ]
        assert len(obs[0][3]) == 384
        assert db.fetchall("SELECT title, kind, text FROM wiki_entries") == [
            ("Ines", "person", "My partner. Runs with me on weekends.")
        ]
        brief = db.fetchone("SELECT title, occurred_at, text FROM briefs")
        assert brief[0] == "Week of 17 November" and brief[1].date().isoformat() == "2026-11-23"
        card = db.fetchone("SELECT title, occurred_at, text FROM today_cards")
        assert card[0] == "The garden" and "three weeks" in card[2]
        assert memory.soul().startswith("Maya, 34")
        # Derived files never become episodes.
        sources = {r[0] for r in db.fetchall("SELECT source FROM episodes")}
        assert not any(s.endswith(("soul.md", "Ines.md", "beliefs.jsonl")) for s in sources)
        kinds = dict(db.fetchall("SELECT kind, count(*) FROM episodes GROUP BY kind"))
        assert kinds == {"journal": 3, "voice_memo": 1, "record": 2}


def test_changed_derived_records_are_replaced(
    memory_home: Path, notes_dir: Path, tmp_path: Path, embedder
) -> None:
    import shutil

    notes = tmp_path / "notes"
    shutil.copytree(notes_dir, notes)
    with Memory.open(memory_home, embedder=embedder) as memory:
        memory.ingest([notes])
        (notes / "beliefs.jsonl").write_text(
            '{"statement": "Running keeps me sane", "status": "retired", "confidence": 0.3}\n',
            "utf-8",
        )
        (notes / "soul.md").write_text("Maya, 35 now.", "utf-8")
        report = memory.ingest([notes])
        assert report.derived["beliefs"] == 1 and report.derived["soul"] == 1
        assert report.unchanged == 6 and report.added == report.updated == 0
        statuses = memory.db.fetchall(
            "SELECT statement, status FROM beliefs WHERE source_key LIKE ?",
            [str((notes / "beliefs.jsonl").resolve()) + "#%"],
        )
        assert statuses == [("Running keeps me sane", "retired")]
        assert memory.db.fetchone("SELECT text FROM soul") == ("Maya, 35 now.",)
        again = memory.ingest([notes])
        assert not again.changed
