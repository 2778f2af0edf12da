"""`sadie eval reflect`'s model-free rule and its held-out beliefs (the run itself needs a
real model: its figures are in the README)."""

from __future__ import annotations

from sadie_tui.eval.reflect import held_out, matches
from sadie_tui.paths import demo_source


def test_the_demo_holds_out_its_27_beliefs() -> None:
    held = held_out(demo_source())
    assert len(held) == 27
    assert sum(h.status == "contested" for h in held) == 11
    assert all(h.evidence for h in held)


def test_the_matching_rule() -> None:
    assert matches("I do my best work in the mornings.", "I work best in the morning")
    assert matches("I catastrophise.", "I tend to catastrophise about work")
    # Four content stems or more need two of them.
    assert not matches("I sleep about seven hours a night.", "I sleep badly")
    assert matches("I sleep about seven hours a night.", "I sleep seven hours")
    assert not matches("Lisbon is home now.", "I run along the river")
