"""Issue #34, item 9: a capitalised verb opening a daily note's line ("Ran", "Called",
"Walked", "Met") is not an entity, whatever ends the line before it, while the names on
those lines still are."""

from __future__ import annotations

from sadie_tui.engine.ingest.entities import EntityIndex

DAY_ONE = """# 2026-03-02

- Ran ten kilometres with [[Ana]] along the river.
- Called [[Mum]] about the Easter plans.
- Walked to the office, rain all the way.

## Work
Met [[Diogo Costa]] about Aurora. Wrote the migration plan.
"""

DAY_TWO = """# 2026-03-03
Coffee with Ines
Ran 5k before work with Ines.
Lunch with Biscuit
Called Diogo about the flat.
Walked Biscuit in the park.
Cooked dinner for Ines and Diogo.
Finished the Aurora review.
"""


def _keys(texts: list[str]) -> set[str]:
    index = EntityIndex({"ana": ("Ana", "person")})
    index.learn(texts)
    found: set[str] = set()
    for text in texts:
        found |= set(index.mentions(text))
    return found


def test_verbs_opening_lines_are_not_entities() -> None:
    found = _keys([DAY_ONE, DAY_TWO])
    for verb in ("ran", "called", "walked", "met", "wrote", "cooked", "finished"):
        assert not any(verb in key.split() for key in found), (verb, found)
    assert {"ana", "mum", "diogo costa", "ines", "diogo", "biscuit", "aurora"} <= found


def test_a_name_ending_in_ed_still_counts() -> None:
    found = _keys(["Ted said the plan was fine.\nWe met Ted and Fred at the pub with Alfred."])
    assert {"ted", "fred", "alfred"} <= found


def test_a_verb_after_a_comma_and_a_verb_before_the_are_left_out() -> None:
    found = _keys(["Woke early, Ran 8k.\nFinished the Aurora review with Priya."])
    assert "ran" not in found and "the aurora" not in found
    assert {"aurora", "priya"} <= found
