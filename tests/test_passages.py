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


def test_asked_how_many_the_passage_giving_the_figure_is_shown() -> None:
    # Two notes about the trip back name the emails; one says how many.
    retrieved = [
        Excerpt(
            "j1", "2026-05-16", "Last day in Japan", "Emails can wait. Emails, emails, emails."
        ),
        Excerpt("j2", "2026-05-17", "Jet lag", "Back at my desk and the emails are waiting."),
        Excerpt("j3", "2026-05-18", "Home", "Unpacked the boxes. 340 emails waiting for me."),
    ]
    shown = choose(retrieved, "How many emails were waiting for me after Japan?", Fit(2, 700))
    assert "j3" in [e.episode_id for e in shown]


def test_a_long_note_is_cut_around_the_figure_asked_for() -> None:
    filler = " ".join(f"The exam room was cold, sentence {w}." for w in "abcdefghij")
    note = Excerpt(
        "c1",
        "2026-06-12",
        "CIPLE, then sardines",
        f"I sat the CIPLE exam today. {filler} There were 140 people in the room with me.",
    )
    (shown,) = choose([note], "How many people sat the CIPLE exam with me?", Fit(1, 200))
    assert "140 people" in shown.text


def test_asked_how_much_was_spent_the_record_giving_an_amount_is_shown() -> None:
    # "How much did I spend": the receipt names no "spend", its amount answers it; the notes
    # about the dog name her again and again but give no amount.
    dog = [
        Excerpt("d1", "2026-11-21", "Bolacha", "Bolacha leaned on me. Bolacha is calm."),
        Excerpt("d2", "2026-11-28", "Bolacha home", "Bolacha ate. Bolacha snores, little snores."),
        Excerpt("d3", "2026-11-29", "Walk", "First walk with Bolacha, to the garden."),
        Excerpt(
            "r1",
            "2026-11-22",
            "Dog supplies",
            "Zu (pet shop), Alvalade: dog bed, 2 bowls, harness, lead. €148.70.",
        ),
    ]
    question = "How much did I spend at the pet shop getting ready for Bolacha?"
    shown = choose(dog, question, Fit(2, 700), people=["Bolacha"])
    assert "r1" in [e.episode_id for e in shown]


def test_a_lists_numbering_and_an_ordinal_give_no_figure() -> None:
    # Rule "2." and the "3rd floor" are no answer to "how many": the count at the end is.
    rules = "\n".join(f"{n}. Tomatoes: cherry, rule {w}." for n, w in enumerate("abcdefgh", 1))
    note = Excerpt(
        "b1",
        "2026-06-03",
        "Balcony garden",
        f"Balcony, 3rd floor, faces south-east.\n{rules}\nWhat's there:\n"
        "- Lemon tree, three green lemons.\n- Tomatoes, pulled 22 Oct. ~200 cherries total.",
    )
    (shown,) = choose([note], "How many cherry tomatoes did the balcony produce?", Fit(1, 300))
    assert "~200 cherries total" in shown.text
