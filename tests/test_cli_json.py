"""The CLI's ``--json`` output is its shape's, as ``wire`` derives it: ``stats``, ``doctor``,
``policies`` and ``eval reflect`` (``ingest``, ``eval demo`` and ``eval locomo`` are checked
where their tests already run them). Keys stay the ones scripts were promised."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sadie_tui.cli import main_group
from sadie_tui.engine.doctor import Check
from sadie_tui.engine.policy_listing import PolicyListing
from sadie_tui.engine.stats import Stats
from sadie_tui.engine.wire import dump
from sadie_tui.eval.reflect import HeldOutScore, Matched, ReflectEval
from tests.support.shapes import assert_fits

POLICIES = """[[policy]]
name = "gentle-words"
action = "rewrite"
pattern = "(?i)\\\\blazy\\\\b"
replacement = "tired"

[[policy]]
name = "broken"
action = "block"
pattern = "(unclosed"
"""


def _json(*args: str) -> object:
    result = CliRunner().invoke(main_group, [*args, "--json"])
    return json.loads(result.stdout)


def test_stats_json_is_the_stats_shape(memory_home: Path) -> None:
    data = _json("stats")
    assert_fits(data, Stats)
    assert isinstance(data, dict) and data["top_entities"], "the built memory names entities"


def test_doctor_json_is_a_list_of_checks(tmp_home: Path) -> None:
    data = _json("doctor", "--quick")
    assert_fits(data, list[Check])
    assert isinstance(data, list) and {c["name"] for c in data} >= {"home", "database"}


def test_policies_json_is_the_listing_shape(tmp_home: Path) -> None:
    tmp_home.mkdir(parents=True)
    (tmp_home / "policies.toml").write_text(POLICIES, encoding="utf-8")
    data = _json("policies")
    assert_fits(data, PolicyListing)
    assert isinstance(data, dict)
    assert [p["pattern"] for p in data["policies"]] == [r"(?i)\blazy\b"]
    assert len(data["errors"]) == 1 and "broken" in data["errors"][0]


def test_eval_reflect_json_keeps_its_keys() -> None:
    result = ReflectEval(
        model="m",
        episodes=4,
        held_out=2,
        derived=0,
        recovered=0,
        recovered_by_embedding=0,
        all_verbatim=0,
        all_verbatim_share=0,
        contested_held_out=1,
        contested_found=0,
        seconds_per_100_episodes=12.5,
        tokens_per_100_episodes={"read": 10, "written": 3},
        run={"run_id": "r1", "elapsed": 0.5, "new_ids": []},
        beliefs=[HeldOutScore("I run", "active", [Matched("I run often", "active")], [])],
    )
    data = dump(result)
    assert_fits(data, ReflectEval)
    assert list(data) == [
        "model",
        "episodes",
        "held_out",
        "derived",
        "recovered",
        "recovered_by_embedding",
        "all_verbatim",
        "all_verbatim_share",
        "contested_held_out",
        "contested_found",
        "seconds_per_100_episodes",
        "tokens_per_100_episodes",
        "run",
        "beliefs",
        "contested_from_records",
        "plans_or_events",
        "set_aside_as_plans_or_events",
    ]
    assert data["all_verbatim_share"] == 0 and type(data["all_verbatim_share"]) is int
    assert data["beliefs"][0]["matched"] == [{"statement": "I run often", "status": "active"}]
