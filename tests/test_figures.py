"""Figures asked for and given (``engine/retrieval/figures.py``): pure."""

from __future__ import annotations

from sadie_tui.engine.retrieval.figures import asks_figure, figures, gives_asked, money_words
from sadie_tui.engine.retrieval.keyword.tokens import tokenize


def test_figures_are_numbers_amounts_and_number_words_not_numbering_or_ordinals() -> None:
    text = "2. On the 21st, the 3rd floor: 1.5 km, 340 emails, ~200 cherries, €148.70, three."
    assert figures(text) == {"1.5", "340", "200", "€", "148.70", "three"}


def test_asks_figure() -> None:
    assert asks_figure("How many emails were waiting?")
    assert asks_figure("What was my halfway split?")
    assert not asks_figure("How well did I sleep?")
    assert not asks_figure("When did I first run 20 km?")


def test_an_amount_answers_the_money_words() -> None:
    assert "spend" in money_words("Dog bed, lead. €148.70.")
    assert "paid" in money_words("It came to 60 euros.")
    assert money_words("Ran 20 km in 2:05.") == frozenset()


def test_gives_asked_binds_the_number_to_what_was_asked() -> None:
    emails = set(tokenize("emails waiting back japan"))
    assert gives_asked("There were 340 emails and a message.", emails, set())
    assert not gives_asked("Japan in three weeks.", emails, set())  # three counts weeks
    kiln = set(tokenize("saved kiln"))
    assert gives_asked("So far saved 420 euros for the kiln.", kiln, set())
    assert not gives_asked("The kiln is 40 cm wide.", kiln, set())
    # The question's own figure is no answer.
    assert not gives_asked("Ran 20 km today.", set(tokenize("km")), {"20"})
