"""What a small model reads (``engine/passages.py``): pure, no memory needed."""

from __future__ import annotations

from sadie_tui.engine.passages import Fit, choose
from sadie_tui.engine.prompt import Excerpt


def _excerpt(episode: str, date: str, text: str, outside: str = "") -> Excerpt:
    return Excerpt(episode, date, "Iron", text, outside=outside)


# Retrieval's order for "when did I first…": the notes it judged relevant in date order, then
# the rest in rank order, so a later note can come before the first one.
RETRIEVED = [
    _excerpt("a1", "2026-04-06", "Then the iron tablets. I'll take a tablet and push through."),
    _excerpt("b2", "2026-03-20", "First iron tablet, taken with orange juice at seven."),
    _excerpt("c3", "2026-03-19", "Iron tablets every other day, recheck in three months."),
    _excerpt("d4", "2025-11-02", "Iron tablets, a note from before the asked time.", "in 2026"),
]


def test_a_first_time_question_is_shown_its_passages_oldest_first() -> None:
    shown = choose(RETRIEVED, "When did I start taking iron tablets?", Fit(4, 700), dated="oldest")
    # The header says "oldest first, by date": the shown order is that, the note outside the
    # asked time last.
    assert [e.date for e in shown] == ["2026-03-19", "2026-03-20", "2026-04-06", "2025-11-02"]


def test_a_last_time_question_is_shown_its_passages_newest_first() -> None:
    shown = choose(RETRIEVED[:3], "When did I last take iron tablets?", Fit(4, 700), dated="newest")
    assert [e.date for e in shown] == ["2026-04-06", "2026-03-20", "2026-03-19"]


def test_without_a_time_order_the_passages_keep_retrievals_order() -> None:
    shown = choose(RETRIEVED[:3], "What did I take the iron tablets with?", Fit(4, 700))
    assert [e.episode_id for e in shown] == ["a1", "b2", "c3"]
