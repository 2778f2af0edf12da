"""The offline reasoner's choice of passage: the sentence that best covers the question's
content words (not its filler), the wiki entry for "who is X", the newest note for "the last
time", no fragment shorter than a few words, and outside-the-window notes last."""

from __future__ import annotations

import json

from sadie_tui.engine.prompt import Attached, Excerpt, build_briefing
from sadie_tui.engine.reasoners.offline import compose, pick_quotes, pick_wiki
from sadie_tui.engine.wiki_pages import who_is

ID = "3f7f7a68-0b1c-4d2e-9f00-12345678900{}"


def ex(n: int, date: str, title: str, text: str, outside: str = "") -> Excerpt:
    return Excerpt(ID.format(n), date, title, text, outside)


KNEE = [
    ex(1, "2026-09-10", "Mum and Carla", 'Mum said "In 1993." She did not explain what happened.'),
    ex(2, "2026-11-28", "Bolacha home", "She ate everything. Then she put her chin on my knee."),
    ex(
        3,
        "2026-03-05",
        "Physio assessment",
        "Iliotibial band syndrome, left knee. The knee collapses inward on a single-leg squat. "
        "No running for three weeks.",
    ),
]


def test_the_question_words_not_its_filler_choose_the_sentence() -> None:
    quotes = pick_quotes(KNEE, "what happened with my knee?")
    sentences = [s for _, s in quotes]
    assert all("1993" not in s for s in sentences)  # "happened" is filler; "In 1993." too short
    assert quotes[0][0].title == "Physio assessment"  # the note about the knee comes first
    assert "knee" in quotes[0][1]


def test_a_short_sentence_only_when_it_is_the_whole_note() -> None:
    short = [ex(1, "2026-01-01", "Note", "Knee fine."), ex(2, "2026-01-02", "Long", "Knee? Ok.")]
    quotes = pick_quotes(short, "how is my knee")
    assert [s for _, s in quotes] == ["Knee fine."]  # a whole note may be short


def test_the_last_time_quotes_the_newest_matching_note_first() -> None:
    runs = [
        ex(1, "2026-02-07", "Long run", "Long run with Ines along the river, eighteen k."),
        ex(2, "2026-11-08", "Club", "Ines ran next to me and showed me a ring."),
        ex(3, "2026-10-04", "Last long", "Ines ran with me, sixteen k before the race."),
        ex(4, "2026-11-20", "Solo", "A long run alone by the river."),
    ]
    quotes = pick_quotes(runs, "When did I last run with Ines?")
    assert [e.date for e, _ in quotes] == ["2026-11-08", "2026-10-04", "2026-02-07"]
    first = pick_quotes(runs, "When did I first run with Ines?")
    assert first[0][0].date == "2026-02-07"


def test_notes_outside_the_asked_time_come_last() -> None:
    notes = [
        ex(1, "2026-02-14", "Dread", "I worry about the deadline, worry and worry.", "in March"),
        ex(2, "2026-03-20", "Knee", "A slight worry about the knee after the stairs."),
    ]
    quotes = pick_quotes(notes, "What did I worry about in March?")
    assert quotes[0][0].date == "2026-03-20"


def test_a_time_question_with_no_matching_word_quotes_the_notes_of_that_time() -> None:
    notes = [
        ex(1, "2026-03-03", "Tax", "Tax forms are piling up on the table."),
        ex(2, "2026-02-01", "Other", "A different month entirely here.", "in March"),
    ]
    quotes = pick_quotes(notes, "What did I worry about in March?")
    assert [e.title for e, _ in quotes] == ["Tax"]
    assert pick_quotes(notes, "What about the zeppelin?") == []


def test_who_is_reads_the_name() -> None:
    assert who_is("Who is Tomás to me?") == "Tomás"
    assert who_is("who's Ines?") == "Ines"
    assert who_is("What is Loom") == "Loom"
    assert who_is("How are you?") is None


def test_who_is_opens_with_the_wiki_entry() -> None:
    wiki = Attached("wiki", "Tomás", "Tomás Ribeiro, my partner of four years. A carpenter.")
    excerpts = [ex(1, "2026-11-20", "Staff", "No, Tomas first, he'll be hurt. I told him.")]
    briefing = build_briefing(message="Who is Tomas to me?", excerpts=excerpts, attached=[wiki])
    assert pick_wiki(briefing, "Who is Tomas to me?") == (
        "Tomás",
        "Tomás Ribeiro, my partner of four years. A carpenter.",
    )
    text = compose(briefing, "Who is Tomas to me?")
    body, tail = text.split("@@CITATIONS@@")
    lines = [line for line in body.splitlines() if line.startswith("- ")]
    assert lines[0].startswith("- Your wiki entry “Tomás”: “Tomás Ribeiro, my partner")
    assert all(c["episode"] == ID.format(1) for c in json.loads(tail))
    assert pick_wiki(briefing, "what did Tomas say?") is None


def test_ask_offline_quotes_the_wiki_entry_and_the_latest_run(memory) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    from sadie_tui.config import load_settings
    from sadie_tui.engine.session import Session

    companion = Session(memory, load_settings())  # OLLAMA_HOST is a closed port: offline
    who = asyncio.run(companion.ask("Who is Ines to me?"))
    assert who.offline and "Your wiki entry “Ines”: “My partner." in who.answer
    last = asyncio.run(companion.ask("When did I last run with Ines?"))
    assert last.offline and last.citations
    assert last.citations[0].date == "2026-11-20"  # "Long run by the river", the newest run


JAPAN = [
    ex(1, "2026-04-10", "Going back on Monday", "Back at work on Monday. Japan in three weeks."),
    ex(
        2,
        "2026-05-17",
        "Home, jet-lagged",
        "Home. Switched my phone back on and there were 340 emails and a message from Henrik.",
    ),
]


def test_asked_how_many_the_sentence_giving_the_count_comes_first() -> None:
    quotes = pick_quotes(JAPAN, "How many emails were waiting for me when I got back from Japan?")
    assert "340 emails" in quotes[0][1]  # not "Japan in three weeks.": three counts weeks


def test_asked_how_much_was_spent_the_amount_after_the_items_is_quoted_with_them() -> None:
    receipt = ex(
        1,
        "2026-11-22",
        "Dog supplies",
        "Zu (pet shop), Alvalade: dog bed, 2 bowls, harness, kibble 7 kg. €148.70. Net €32.",
    )
    home = ex(2, "2026-11-28", "She's home", "Bolacha slept on the grey bed from the pet shop.")
    quotes = pick_quotes([home, receipt], "How much did I spend at the pet shop for Bolacha?")
    assert quotes[0][0].title == "Dog supplies"
    assert (
        quotes[0][1] == "Zu (pet shop), Alvalade: dog bed, 2 bowls, harness, kibble 7 kg. €148.70."
    )
    assert quotes[0][1] in receipt.text  # verbatim


def test_a_short_sentence_giving_the_count_asked_for_is_quoted() -> None:
    garden = ex(
        1,
        "2026-06-03",
        "Balcony garden",
        "Dad's rules:\n2. Tomatoes: cherry, not beefsteak.\nWhat's there:\n"
        "- Lemon tree, three lemons.\n- Basil, three of five died.\n~200 cherries total.",
    )
    quotes = pick_quotes([garden], "How many cherry tomatoes did the balcony produce?")
    assert quotes[0][1] == "~200 cherries total."


def test_a_long_sentence_is_quoted_up_to_a_words_end() -> None:
    long = "The knee " + " ".join(["ached on the stairs"] * 30) + "."
    (quote,) = pick_quotes([ex(1, "2026-03-05", "Knee", long)], "how was my knee?")
    assert long.startswith(quote[1]) and len(quote[1]) <= 280
    assert long[len(quote[1])] == " "  # cut between words, not inside one
