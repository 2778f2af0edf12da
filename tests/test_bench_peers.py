"""The pure helpers of ``bench/peers.py``: /proc parsing, process-tree RSS, the figures
table, the scripted reply's first word. The bench itself drives real apps in tmux and is
not run here."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def peers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_peers", ROOT / "bench" / "peers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_peers"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_stat_lines_parse_whatever_the_command_name_holds(peers: ModuleType) -> None:
    assert peers.parse_stat("4242 (python3) S 4200 4242 4200 0 -1") == (4242, 4200)
    assert peers.parse_stat("77 (tmux: server (x)) S 1 77 77 0 -1") == (77, 1)
    assert peers.parse_stat("9 (a b) R 3 9 9 0") == (9, 3)


def test_status_fields_are_read_in_kib_and_missing_ones_are_zero(peers: ModuleType) -> None:
    status = "Name:\tpython3\nVmHWM:\t  310000 kB\nVmRSS:\t  123456 kB\nThreads:\t4\n"
    assert peers.parse_status_kib(status) == 123456
    assert peers.parse_status_kib(status, "VmHWM") == 310000
    assert peers.parse_status_kib("Name:\tkworker\nState:\tI (idle)\n") == 0


def test_the_tree_sums_every_descendant_but_not_the_root(peers: ModuleType) -> None:
    # 10 is the pane's shell; 11 the app, 12 and 13 its children, 14 a grandchild; 20 and
    # 21 belong to someone else.
    parents = {10: 1, 11: 10, 12: 11, 13: 11, 14: 13, 20: 1, 21: 20}
    rss = {10: 1_000, 11: 200_000, 12: 3_000, 13: 4_000, 14: 500, 20: 9_999, 21: 9_999}
    assert peers.descendants(10, parents) == [11, 12, 13, 14]
    assert peers.tree_kib(10, parents, rss) == 207_500
    assert peers.tree_kib(99, parents, rss) == 0
    assert peers.tree_kib(10, {**parents, 15: 14}, rss) == 207_500  # gone before its RSS read


def test_the_table_shows_median_and_range_per_app_and_a_dash_for_nothing(
    peers: ModuleType,
) -> None:
    rows = [
        ("launch → first paint", {"sadie": [0.5, 0.4, 0.9], "elia": [1.0]}, "s", 2),
        ("peak RSS", {"sadie": [300.4, 310.0], "elia": [77.0, 80.0]}, "MiB", 0),
    ]
    assert peers.table(rows, ["sadie", "elia", "oterm"]).splitlines() == [
        "| median (min–max) | sadie | elia | oterm |",
        "| --- | --- | --- | --- |",
        "| launch → first paint | 0.50 s (0.40–0.90) | 1.00 s (1.00–1.00) | — |",
        "| peak RSS | 305 MiB (300–310) | 78 MiB (77–80) | — |",
    ]


def test_each_reply_starts_with_the_word_of_the_question_it_answers(
    peers: ModuleType,
) -> None:
    def body(*users: str) -> dict:
        messages = [{"role": "system", "content": "Briefing: question number 7 is not it"}]
        return {"messages": [*messages, *({"role": "user", "content": u} for u in users)]}

    first = peers.scripted_reply(body(peers.question(1)))
    assert first.text.split(":")[0] == peers.WORDS[0]
    third = peers.scripted_reply(body(peers.question(1), peers.question(2), peers.question(3)))
    assert third.text.startswith(peers.WORDS[2])
    # A structured request (sadie's citations, emotions) still gets valid JSON.
    structured = peers.scripted_reply({**body(peers.question(2)), "format": "json"})
    assert json.loads(structured.text) == {}
    assert all(peers.WORDS[n] not in peers.question(n + 1) for n in range(len(peers.WORDS)))
