"""`sadie eval locomo` on a tiny LoCoMo-format file with known answers; metrics by hand."""

from __future__ import annotations

import json
import math
import tempfile
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from sadie_tui import cli
from sadie_tui.commands import output
from sadie_tui.engine.errors import ConfigError, NotFoundError
from sadie_tui.engine.wire import dump
from sadie_tui.eval.locomo import (
    LocomoResult,
    evidence_in,
    load_conversations,
    namespaced,
    ndcg_at,
    parse_session_date,
    recall_at,
    run_locomo,
)
from tests.support.shapes import assert_fits

TOPICS = [
    ("Ana", "I baked sourdough bread this morning, the crust cracked beautifully."),
    ("Ben", "My kayak flipped on the river rapids and I swam to the bank."),
    ("Ana", "The violin recital went well, I played the Bach partita."),
    ("Ben", "We adopted a grey kitten called Pepper from the shelter."),
    ("Ana", "I planted tomatoes and basil on the balcony garden."),
    ("Ben", "Our team won the chess tournament in the final round."),
]


def sample() -> dict:  # type: ignore[type-arg]
    data: dict = {"speaker_a": "Ana", "speaker_b": "Ben"}  # type: ignore[type-arg]
    for n, (speaker, text) in enumerate(TOPICS, start=1):
        other = "Ben" if speaker == "Ana" else "Ana"
        data[f"session_{n}_date_time"] = f"{n}:05 pm on {n} May, 2023"
        data[f"session_{n}"] = [
            {"speaker": speaker, "dia_id": f"D{n}:1", "text": text},
            {"speaker": other, "dia_id": f"D{n}:2", "text": "Oh nice, tell me more!"},
        ]
    data["session_7_date_time"] = "1:00 pm on 9 May, 2023"  # a date without turns: skipped
    data["qa"] = [
        {
            "question": "What kind of bread did Ana bake?",
            "answer": "sourdough",
            "evidence": ["D1:1"],
            "category": 4,
        },
        {
            "question": "When did Ben's kayak flip on the rapids?",
            "answer": "2 May 2023",
            "evidence": ["D2:1"],
            "category": 2,
        },
        {
            "question": "Which piece did Ana play at her violin recital?",
            "answer": "Bach",
            "evidence": ["D3:1"],
            "category": 1,
        },
        {
            "question": "What is the name of Ben's kitten?",
            "answer": "Pepper",
            "evidence": ["D4:1", "D:9"],
            "category": 3,
        },  # a malformed id counts as a miss
        {
            "question": "What did Ben say about chess?",
            "answer": "n/a",
            "evidence": ["D6:1"],
            "category": 5,
        },  # adversarial: left out
        {"question": "What did Ana cook?", "answer": "n/a", "evidence": [], "category": 4},
    ]
    return data


@pytest.fixture
def locomo_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "locomo"
    folder.mkdir()
    (folder / "99.json").write_text(json.dumps(sample()), encoding="utf-8")
    return folder


def test_parse_session_date() -> None:
    assert parse_session_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56)
    assert parse_session_date("12:04 am on 1 January, 2024") == datetime(2024, 1, 1, 0, 4)
    assert parse_session_date("10:37 am on 27 June, 2023") == datetime(2023, 6, 27, 10, 37)
    assert parse_session_date("sometime") is None


def test_load_conversations(locomo_dir: Path) -> None:
    [conv] = load_conversations(locomo_dir)
    assert conv.id == "99" and conv.speakers == ("Ana", "Ben")
    assert len(conv.sessions) == 6
    first = conv.sessions[0]
    assert first.title == "Session 1 — Ana and Ben"
    assert first.occurred_at == datetime(2023, 5, 1, 13, 5)
    assert first.text.splitlines()[0] == f"[D1:1] Ana: {TOPICS[0][1]}"
    assert [q.category for q in conv.questions] == [4, 2, 1, 3]
    with pytest.raises(NotFoundError):
        load_conversations(locomo_dir, ["42"])
    with pytest.raises(NotFoundError):
        load_conversations(locomo_dir / "missing")
    (locomo_dir / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_conversations(locomo_dir)


def test_recall_and_ndcg_by_hand() -> None:
    ranked = [{"D1:1"}, {"D2:1", "D2:2"}, set(), {"D3:1"}]
    everything = ranked + [{"D4:1"}]
    assert recall_at(["D2:1", "D4:1"], ranked, 5) == 0.5
    assert recall_at(["D3:1"], ranked, 3) == 0.0
    assert recall_at(["D3:1", "D:9"], ranked, 5) == 0.5  # malformed: a miss
    # Relevant chunks at ranks 2 and 4; ideal puts both first.
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3)
    assert ndcg_at(["D2:2", "D3:1"], ranked, everything) == pytest.approx(dcg / idcg)
    assert ndcg_at(["D9:9"], ranked, everything) == 0.0


def test_run_on_known_answers(
    locomo_dir: Path,
    tmp_path: Path,
    tmp_home: Path,
    embedder,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scratch_root = tmp_path / "scratch"
    scratch_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch_root))
    report = dump(run_locomo(locomo_dir, k=1, embedder=embedder).result())
    assert_fits(report, LocomoResult)
    assert report["questions"] == 4
    assert report["chunks"] == {"99": 6}
    fused = report["overall"]["fused"]
    keyword = report["overall"]["keyword"]
    # Every answer is its topic's only chunk, found first: full marks but the malformed id.
    assert fused["recall@5"] == pytest.approx((1 + 1 + 1 + 0.5) / 4)
    assert fused["ndcg@10"] == pytest.approx(1.0)
    assert keyword == fused
    assert set(report["overall"]) == {"vector", "keyword", "graph", "fused"}
    assert list(report["by_category"]) == ["multi-hop", "temporal", "open-domain", "single-hop"]
    assert report["by_category"]["open-domain"]["fused"]["recall@10"] == 0.5
    assert report["by_category"]["single-hop"]["questions"] == 1
    # The scratch home is gone and the person's home was never created.
    assert list(scratch_root.iterdir()) == []
    assert not tmp_home.exists()


def test_cli_json_and_table(
    locomo_dir: Path,
    tmp_home: Path,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
    embedder,
) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.setattr(output, "_out", None)
    monkeypatch.setattr(output, "_err", None)
    runner = CliRunner()
    result = runner.invoke(
        cli.main_group,
        [
            "eval",
            "locomo",
            str(locomo_dir / "99.json"),
            "--json",
            "-k",
            "3",
            "--conversations",
            "99",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["questions"] == 4
    for channel in ("vector", "keyword", "graph", "fused"):
        assert set(data["overall"][channel]) == {"recall@5", "recall@10", "ndcg@10"}
    table = runner.invoke(cli.main_group, ["eval", "locomo", str(locomo_dir)])
    assert table.exit_code == 0, table.output
    assert "recall@10" in table.stdout and "fused" in table.stdout
    one = runner.invoke(cli.main_group, ["eval", "locomo", str(locomo_dir), "--one-memory"])
    assert one.exit_code == 0, one.output
    assert "1 conversations in one memory" in one.stdout
    assert not tmp_home.exists()


def two_conversations(folder: Path) -> Path:
    """Two conversations whose dialogue ids are the same (``D1:1``, ``D2:1``) and whose texts
    differ. Conversation a asks about the kayak, which only b's ``D1:1`` mentions, and names
    a's ``D1:1`` (the bread) as its evidence: with ids shared across conversations b's chunk
    would be credited to it."""
    texts = {
        "a": ["I baked sourdough bread this morning, the crust cracked.", TOPICS[2][1]],
        "b": [TOPICS[1][1], TOPICS[3][1]],
    }
    questions = {
        "a": [
            ("What kind of bread did Ana bake?", ["D1:1"]),
            ("Whose kayak flipped on the river rapids?", ["D1:1"]),
        ],
        "b": [("Whose kayak flipped on the river rapids?", ["D1:1"])],
    }
    folder.mkdir()
    for conv, (first, second) in texts.items():
        data: dict = {"speaker_a": "Ana", "speaker_b": "Ben"}  # type: ignore[type-arg]
        for n, text in enumerate((first, second), start=1):
            data[f"session_{n}_date_time"] = f"{n}:05 pm on {n} May, 2023"
            data[f"session_{n}"] = [{"speaker": "Ana", "dia_id": f"D{n}:1", "text": text}]
        data["qa"] = [
            {"question": q, "answer": "x", "evidence": ev, "category": 4}
            for q, ev in questions[conv]
        ]
        (folder / f"{conv}.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_namespaced_ids(tmp_path: Path) -> None:
    a, b = load_conversations(two_conversations(tmp_path / "two"))
    na = namespaced(a)
    assert na.sessions == a.sessions  # the text chunks as in its own memory
    assert evidence_in(na.sessions[0].text) == {"D1:1"} == evidence_in(b.sessions[0].text)
    assert na.questions[0].evidence == ("a/D1:1",)
    assert namespaced(b).questions[0].evidence == ("b/D1:1",)
    ranked = [{"b/D1:1"}, {"a/D1:1"}]
    assert recall_at(["a/D1:1"], ranked, 1) == 0.0
    assert recall_at(["a/D1:1"], ranked, 2) == 1.0
    assert recall_at(["a/D:9"], ranked, 2) == 0.0  # malformed stays a miss


def test_one_memory_never_credits_another_conversation(
    tmp_path: Path,
    tmp_home: Path,
    embedder,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = two_conversations(tmp_path / "two")
    scratch_root = tmp_path / "scratch"
    scratch_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch_root))
    report = dump(run_locomo(folder, k=1, embedder=embedder, one_memory=True).result())
    assert report["one_memory"] is True
    assert report["questions"] == 3
    a, b = report["by_conversation"]["a"]["fused"], report["by_conversation"]["b"]["fused"]
    # a's bread question is found; its kayak question ranks b's D1:1 first, which is not a's.
    assert a["recall@5"] == pytest.approx(0.5)
    assert a["ndcg@10"] == pytest.approx(0.5)
    assert b["recall@5"] == pytest.approx(1.0)
    assert report["chunks"] == {"a": 2, "b": 2}  # four chunks in one memory, two of each
    assert set(report["overall"]) == {"vector", "keyword", "graph", "fused"}
    assert list(scratch_root.iterdir()) == []
    assert not tmp_home.exists()
