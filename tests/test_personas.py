"""Persona files: the shipped four, user additions and overrides, and errors naming file and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sadie_tui.engine.errors import ConfigError
from sadie_tui.engine.personas import (
    STAGES,
    Personas,
    get_persona,
    load_personas,
    persona_json,
)

GOOD = """
name = "gardener"
description = "Slow and seasonal."
chunks = 7
window_days = 365
half_life_days = 30
mmr = 0.8
voice = "Speak like someone who plants things."
stages = ["retrieve", "draft"]

[weights]
vector = 0.5
keyword = 0.5

[channels]
graph = false
observations = false
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_personas_follow_the_spec(tmp_path: Path) -> None:
    personas = load_personas(tmp_path / "none")
    assert set(personas) == {"analyst", "coach", "friend", "skeptic"}
    counts = {name: p.chunks for name, p in personas.items()}
    assert counts == {"analyst": 10, "coach": 10, "friend": 12, "skeptic": 20}
    coach, friend, skeptic, analyst = (
        personas[n] for n in ("coach", "friend", "skeptic", "analyst")
    )
    assert not coach.graph and coach.weights["graph"] == 0
    assert not friend.observations and friend.graph
    assert skeptic.contested and skeptic.observation_weight > 1.0
    assert not analyst.contested and analyst.observation_weight == 1.0
    for p in personas.values():
        assert set(p.weights) == {"vector", "keyword", "graph"}
        assert "retrieve" in p.stages and set(p.stages) <= set(STAGES)
        assert p.voice and p.source.endswith(f"{p.name}.toml")
    assert analyst.mmr is None  # the analyst wants the best evidence, not variety
    assert friend.mmr is not None and 0 < friend.mmr < 1


def test_user_personas_add_and_override(tmp_path: Path) -> None:
    folder = tmp_path / "personas"
    write(folder, "gardener", GOOD)
    write(folder, "friend", GOOD.replace('name = "gardener"', 'name = "friend"'))
    personas = load_personas(folder)
    g = personas["gardener"]
    assert (g.chunks, g.window_days, g.half_life_days, g.mmr) == (7, 365, 30.0, 0.8)
    assert dict(g.weights) == {"vector": 0.5, "keyword": 0.5, "graph": 0.0}
    assert not g.graph and not g.observations and g.beliefs and not g.contested
    assert g.stages == ("retrieve", "draft")
    assert personas["friend"].chunks == 7  # the user's file wins
    assert get_persona("Gardener", folder).name == "gardener"


def test_user_folder_defaults_to_the_config_folder(tmp_home: Path, tmp_path: Path) -> None:
    write(tmp_path / "config" / "personas", "gardener", GOOD)  # SADIE_CONFIG from tmp_home
    assert "gardener" in load_personas()


def test_unknown_persona_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        get_persona("pirate", tmp_path / "none")
    assert "pirate" in info.value.message
    assert "analyst, coach, friend, skeptic" in info.value.message


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (("chunks = 7", 'chunks = "ten"'), "chunks"),
        (("chunks = 7", "chunks = 0"), "chunks"),
        (("chunks = 7", "chunks = 7.5"), "chunks"),
        (("chunks = 7\n", ""), "chunks"),
        (("window_days = 365", "window_days = -3"), "window_days"),
        (("half_life_days = 30", 'half_life_days = "a month"'), "half_life_days"),
        (("mmr = 0.8", "mmr = 2"), "mmr"),
        (("vector = 0.5", "vector = -1"), "weights.vector"),
        (("vector = 0.5", "vectors = 0.5"), "weights.vectors"),
        (("vector = 0.5\nkeyword = 0.5", "vector = 0\nkeyword = 0"), "weights"),
        (("graph = false", 'graph = "no"'), "channels.graph"),
        (("graph = false", "grpah = false"), "channels.grpah"),
        (('stages = ["retrieve", "draft"]', 'stages = ["retrieve", "dance"]'), "stages"),
        (('stages = ["retrieve", "draft"]', 'stages = ["draft"]'), "stages"),
        (('voice = "Speak like someone who plants things."', 'voice = ""'), "voice"),
        (('name = "gardener"', 'name = "gar dener"'), "name"),
        (('description = "Slow and seasonal."', 'colour = "green"'), "colour"),
    ],
)
def test_invalid_files_name_file_and_field(
    tmp_path: Path, change: tuple[str, str], field: str
) -> None:
    old, new = change
    assert old in GOOD
    path = write(tmp_path / "personas", "gardener", GOOD.replace(old, new, 1))
    personas = load_personas(path.parent)
    assert "gardener" not in personas and "friend" in personas  # set aside, the rest load
    [(where, problem)] = personas.problems
    assert where == path
    assert str(path) in problem.message
    assert f"'{field}'" in problem.message
    with pytest.raises(ConfigError) as info:  # asked for by name: its own error
        get_persona("gardener", path.parent)
    assert info.value.message == problem.message


def test_broken_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "personas", "broken", "chunks = [1,\n")
    [(_, problem)] = load_personas(path.parent).problems
    assert str(path) in problem.message and "TOML" in problem.message


def test_one_broken_file_leaves_the_others_working(tmp_path: Path) -> None:
    folder = tmp_path / "personas"
    write(folder, "gardener", GOOD)
    write(folder, "broken", "chunks = [1,\n")
    assert get_persona("gardener", folder).chunks == 7
    assert get_persona("friend", folder).name == "friend"
    with pytest.raises(ConfigError) as info:
        get_persona("pirate", folder)
    assert "1 persona file(s) could not be loaded" in info.value.message


# -- the result a face gets: Session.personas() -------------------------------------------
def test_a_problem_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "personas", "broken", "chunks = [1,\n")
    [problem] = load_personas(path.parent).problems
    assert problem.path == path
    assert "\n" not in problem.reason and problem.reason.startswith(f"persona file {path}:")
    assert problem.reason == problem.error.one_line()


def test_the_wire_form_reads_back_the_same(tmp_path: Path) -> None:
    folder = tmp_path / "personas"
    write(folder, "gardener", GOOD)
    write(folder, "broken", "chunks = [1,\n")
    loaded = load_personas(folder)
    back = Personas.from_json(json.loads(json.dumps(loaded.to_json())))
    assert back == loaded and list(back) == list(loaded)  # every field, in the same order
    assert back["analyst"].mmr is None and back["gardener"].mmr == 0.8
    assert [(p.path, p.reason) for p in back.problems] == [
        (p.path, p.reason) for p in loaded.problems
    ]
    assert back.descriptions()["gardener"] == "Slow and seasonal."


def test_a_persona_that_does_not_check_out_on_the_wire_is_a_problem() -> None:
    good = persona_json(load_personas(Path("/nonexistent"))["friend"])
    bad = {**good, "name": "pirate", "chunks": 0, "source": "/holder/pirate.toml"}
    back = Personas.from_json({"personas": [good, bad, "not an object"], "problems": [{}]})
    assert list(back) == ["friend"]
    reasons = [p.reason for p in back.problems]
    assert "persona file /holder/pirate.toml: field 'chunks'" in reasons[0]
    assert "must be an object" in reasons[1] and reasons[2] == "could not be loaded"
    assert Personas.from_json(None) == {} and Personas.from_json([]).problems == []


def test_a_client_gets_the_holders_personas_over_the_api(
    memory_home: Path, embedder, tmp_path: Path
) -> None:
    """``Session.personas`` on the holder (the shipped four, the person's own, the broken
    file named), and the same over ``GET /v1/personas`` for a client of it."""
    from sadie_tui.config import load_settings
    from sadie_tui.launch import Launch
    from sadie_tui.serve.remote import RemoteSession

    write(tmp_path / "config" / "personas", "gardener", GOOD)
    write(tmp_path / "config" / "personas", "broken", "chunks = [1,\n")
    launch = Launch.create()
    holder = launch.session(wait_for_embedder=False, hold=True)
    try:
        sock = memory_home / "sadie.sock"
        client = RemoteSession(memory_home, load_settings(), sock, holder="the test")
        offered, theirs = client.personas(), holder.personas()
        assert offered == theirs and "gardener" in offered
        assert [p.reason for p in offered.problems] == [p.reason for p in theirs.problems]
        client.close()
    finally:
        launch.close()


def test_a_persona_that_sets_no_half_life_gets_the_default_and_recency_weighs_its_ranking(
    tmp_path: Path,
) -> None:
    """Issue 34, item 13: recency adjusts every persona's ranking, a default half-life where a
    file sets none (the analyst's, the skeptic's); two chunks that score the same rank the
    newer first."""
    import numpy as np

    from sadie_tui.engine.personas import DEFAULT_HALF_LIFE_DAYS, get_persona
    from sadie_tui.engine.retrieval import fusion

    for name in ("analyst", "skeptic"):
        assert get_persona(name).half_life_days == DEFAULT_HALF_LIFE_DAYS
    assert get_persona("friend").half_life_days == 365.0  # a file's own still wins
    analyst = get_persona("analyst")
    scores = fusion.adjust(
        np.array([1.0, 1.0]), np.array([0.5, 0.5]), np.array([400.0, 10.0]), analyst.half_life_days
    )
    assert scores[1] > scores[0] > 0.95 * scores[1]  # newer first, and only gently
