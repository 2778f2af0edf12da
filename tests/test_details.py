"""Unsupported details: every rule of sadie_tui.engine.reply.unsupported, a hand check against a
small set of realistic notes, and offsets on long, mixed and hostile text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sadie_tui.engine.reply.unsupported import SourceIndex, Span, find_details, unsupported


def details(text: str) -> list[tuple[str, str]]:
    return [(s.text, s.kind) for s in find_details(text)]


def flagged(text: str, sources: list[str]) -> list[str]:
    return [s.text for s in unsupported(text, sources)]


def assert_offsets(text: str, spans: list[Span]) -> None:
    last_end = 0
    for s in spans:
        assert text[s.start : s.end] == s.text, s
        assert s.start >= last_end, spans  # in order, non-overlapping
        assert s.start < s.end
        last_end = s.end


# --------------------------------------------------------------------------- the API


def test_span_as_json():
    span = Span("3:15", 16, 20, "time")
    assert span.as_json() == {"text": "3:15", "start": 16, "end": 20, "kind": "time"}


def test_the_example_from_the_brief():
    notes = ["episode 1 (2026-10-11) Race day\nThe marathon took 4:07:33."]
    reply = "You finished in 3:15."
    [span] = unsupported(reply, notes)
    assert span == Span("3:15", 16, 20, "time")
    assert reply[span.start : span.end] == "3:15"


def test_source_index_supports_each_kind():
    index = SourceIndex(
        ["Ines ran 18 km on 2026-03-14 at 7:30pm and paid £1,200.", "Kofi Mensah came."]
    )
    text = "Ines ran 18 km on March 14th at 7:30 pm and paid 1200 euros with Kofi Mensah."
    spans = find_details(text)
    assert [s.kind for s in spans] == ["name", "number", "date", "time", "amount", "name"]
    assert all(index.supports(s) for s in spans)
    assert not index.supports(Span("19", 0, 2, "number"))
    assert not index.supports(Span("Kofi Boateng", 0, 12, "name"))
    assert not index.supports(Span("March 15th", 0, 10, "date"))


def test_unsupported_accepts_a_prebuilt_index():
    index = SourceIndex(["Ines ran 18 km."])
    assert flagged("Ines ran 18 km, then 5 more.", index) == ["5"]  # type: ignore[arg-type]


def test_empty_inputs():
    assert find_details("") == []
    assert unsupported("", []) == []
    assert flagged("Ines ran 18 km.", []) == ["Ines", "18"]
    assert flagged("Ines ran 18 km.", ["", "Ines ran 18 km."]) == []


# --------------------------------------------------------------------------- times


def test_times_are_found_with_seconds_and_am_pm():
    text = "Your splits: 4:07:33, then 7:30, 07:05, 7:30pm, 7:30 p.m., 7pm and 7 a.m. OK."
    assert details(text) == [
        ("4:07:33", "time"),
        ("7:30", "time"),
        ("07:05", "time"),
        ("7:30pm", "time"),
        ("7:30 p.m.", "time"),
        ("7pm", "time"),
        ("7 a.m.", "time"),
    ]


def test_a_time_is_not_found_inside_a_longer_one():
    assert flagged("You started at 3:15.", ["We met at 13:15."]) == ["3:15"]
    assert flagged("You started at 13:15.", ["We met at 3:15."]) == ["13:15"]
    assert flagged("You started at 3:15.", ["We met at 3:15."]) == []


def test_time_support_rules():
    notes = ["Finished in 4:07:33. Club runs at 7:00pm. Physio at 19:30. Call at 8:15."]
    assert flagged("4:07:33, 4:07, 7pm, 7:00 PM, 7:30pm, 19:00 and 8:15am.", notes) == []
    assert flagged("4:07:34 or 4:08 or 7am or 7:30am or 8:15pm or 4:07:33:", notes) == [
        "4:07:34",
        "4:08",
        "7am",
        "7:30am",
    ]  # "8:15pm" is supported: the note gives no am/pm
    assert flagged("It took 4:07:33.", ["It took 4:07."]) == ["4:07:33"]  # more precise


def test_times_are_not_numbers():
    assert details("at 4:07:33") == [("4:07:33", "time")]
    # the parts of a time in a source do not support a number
    assert flagged("33 km", ["4:07:33"]) == ["33"]


# --------------------------------------------------------------------------- amounts


@pytest.mark.parametrize(
    "text",
    [
        "£1,200",
        "$40",
        "€3.50",
        "1,200 EUR",
        "40 dollars",
        "40 euros",
        "3 pounds",
        "US$5",
        "EUR 30",
        "£40k",
        "$3 million",
        "20 quid",
        "50 cents",
    ],
)
def test_amounts(text):
    assert details(f"It cost {text} in the end.") == [(text, "amount")]


def test_amount_support_ignores_separators_and_currency():
    for source in ["It was 1200.", "It was 1,200.", "It was £1200.", "1200 EUR", "$1,200.00"]:
        assert flagged("That cost £1,200.", [source]) == [], source
    assert flagged("That cost £1,200.", ["It was 12,000 or 120."]) == ["£1,200"]
    assert flagged("€3.50 and €3.5", ["3.5"]) == []
    assert flagged("£40k", ["a 40,000 budget"]) == []
    assert flagged("£40k", ["40 pounds"]) == ["£40k"]


# --------------------------------------------------------------------------- dates


@pytest.mark.parametrize(
    "text",
    [
        "2026-03-14",
        "March 3rd",
        "3 March",
        "3rd of March",
        "Mar 3",
        "Mar. 3",
        "March 3, 2026",
        "March the 3rd",
        "3 March 2026",
        "14/03/2026",
        "14.03.2026",
        "14/03/26",
        "SEPT 3",
    ],
)
def test_dates(text):
    assert details(f"It was on {text} that we ran.") == [(text, "date")]


def test_a_date_is_supported_by_the_same_month_and_day_in_any_form():
    reply = "It was March 3rd."
    for source in [
        "episode 1 (2026-03-03) Race",
        "on 3 March",
        "the 3rd of march",
        "mar 3",
        "March 3, 2026",
        "03/03/2026",
    ]:
        assert flagged(reply, [source]) == [], source
    assert flagged(reply, ["March 4th, or 13 March, or 2026-03-30"]) == ["March 3rd"]


def test_date_years_must_agree_when_both_are_given():
    assert flagged("On March 3, 2025.", ["(2026-03-03)"]) == ["March 3, 2025"]
    assert flagged("On March 3, 2026.", ["(2026-03-03)"]) == []
    assert flagged("On March 3, 2026.", ["on 3 March"]) == []
    assert flagged("On 2026-03-03.", ["on 3 March"]) == []


def test_numeric_dates_read_both_ways_when_ambiguous():
    assert flagged("On 03/04/2026.", ["April 3rd"]) == []
    assert flagged("On 03/04/2026.", ["March 4th"]) == []
    assert flagged("On 03/14/2026.", ["March 14th"]) == []  # only month first is valid


def test_bare_months_weekdays_and_month_years_are_not_dates():
    assert details("In March, on a Sunday in May, we ran. See you Tuesday.") == []
    assert details("Back in March 2026.") == [("2026", "number")]
    # a lowercase month in a reply is a word; its number is still checked
    assert details("we march 3 miles") == [("3", "number")]


def test_dates_and_their_numbers_in_sources_support_days_and_years():
    notes = ["episode 1 (2026-10-11) Race day"]
    assert flagged("On the 11th, in 2026.", notes) == []
    assert flagged("On the 12th, in 2025.", notes) == ["12th", "2025"]


# --------------------------------------------------------------------------- numbers


def test_numbers():
    text = "I ran 18 km, then 5.5 more, 40% faster, the 3rd time since 1993; 1,200 steps."
    assert details(text) == [
        ("18", "number"),
        ("5.5", "number"),
        ("40%", "number"),
        ("3rd", "number"),
        ("1993", "number"),
        ("1,200", "number"),
    ]


def test_number_support_ignores_suffixes_and_separators():
    notes = ["Ran 18km. Third of 3 sets, 40 percent effort, 1200 steps, 5.50 average."]
    assert flagged("18 km, the 3rd set, 40%, 1,200 steps, 5.5 average", notes) == []
    assert flagged("19 km, the 4th set, 41%, 1,300 steps, 5.6", notes) == [
        "19",
        "4th",
        "41%",
        "1,300",
        "5.6",
    ]


def test_units_after_digits_are_not_part_of_the_span():
    text = "Ran 18km and a 5k."
    assert [s.text for s in find_details(text)] == ["18", "5"]
    assert_offsets(text, find_details(text))


def test_spelled_out_numbers_are_not_details():
    assert details("I ran three times, twice uphill, and one more.") == []


def test_identifiers_versions_links_and_list_markers_are_not_checked():
    text = (
        "1. See https://example.com/2026/run?id=42 and mail maya84@example.com.\n"
        "2) Episode 6f1c2a9e-3b7d-4e21-9a0c-5d8e7f6a1b2c, hash 3f2a1b9c, v1.2.3, B12.\n"
        "- 3. See footnotes [1] and [^2]."
    )
    assert find_details(text) == []


# --------------------------------------------------------------------------- names


def test_names_unicode_hyphen_apostrophe_and_runs():
    text = "I saw Tomás, Zoë, O'Brien and Jean-Luc with Kofi Mensah at the Lisbon Marathon."
    assert details(text) == [
        ("Tomás", "name"),
        ("Zoë", "name"),
        ("O'Brien", "name"),
        ("Jean-Luc", "name"),
        ("Kofi Mensah", "name"),
        ("Lisbon Marathon", "name"),
    ]


def test_possessive_is_not_part_of_the_name():
    for text in ["It was Ife's sign.", "It was Ife’s sign."]:
        [span] = find_details(text)
        assert (span.text, span.kind) == ("Ife", "name")
        assert text[span.start : span.end] == "Ife"
    assert details("Kofi Mensah's shoes") == [("Kofi Mensah", "name")]
    assert flagged("Ife's sign", ["Ife made a sign."]) == []
    assert flagged("Ife's sign", ["Ifeoma made a sign."]) == ["Ife"]


def test_a_name_is_not_found_inside_a_longer_word():
    assert flagged("Ife came.", ["Ifeoma came."]) == ["Ife"]
    assert flagged("Ifeoma came.", ["Ife came."]) == ["Ifeoma"]


def test_names_at_the_start_of_a_sentence_are_names():
    assert details("Tomás said hi. Ines was there! Kofi? Ife: yes.") == [
        ("Tomás", "name"),
        ("Ines", "name"),
        ("Kofi", "name"),
        ("Ife", "name"),
    ]


def test_ordinary_sentence_starters_are_not_names():
    text = (
        "The race went well. You did it. Your knee held. It was hard. On Sunday you ran. "
        "In the end, fine. After that, rest. That helps. This too. When you can. Yes. "
        "Sure. Maybe later. Here it is. There you go. I ran. I'm glad. I've seen it. "
        "I'd say so. Today is good. Honestly, great. Let's see. Don't worry.\n"
        "- **Stretching** helps.\n> Remember to rest.\n1. Finished strong."
    )
    assert find_details(text) == []


def test_never_names():
    text = (
        "we met in March and on Tuesday, OK, Sadie said so; I think A and X too, "
        "Dr and Mr and Sat and Sept, GREAT JOB"
    )
    assert find_details(text) == []


def test_a_common_word_inside_a_sentence_can_be_a_name():
    assert details("I ran with Will and Grace.") == [("Will", "name"), ("Grace", "name")]


def test_a_capitalised_word_known_in_lowercase_is_an_ordinary_word():
    notes = ["running along the river with the physio's plan"]
    assert flagged("Running helps. Physio says so.", notes) == []
    assert flagged("Podcasts help.", ["I ran."]) == ["Podcasts"]
    assert flagged("Podcasts help.", ["I listen to podcasts."]) == []
    # lowercase elsewhere in the reply itself also counts
    assert details("Clamshells first. Then more clamshells.") == []
    assert details("Clamshells first.") == [("Clamshells", "name")]


def test_a_sentence_start_word_drops_from_a_run_but_the_name_stays():
    assert details("After Lisbon Marathon training, rest.") == [("Lisbon Marathon", "name")]
    assert details("So Ines said.") == [("Ines", "name")]


def test_a_run_of_ordinary_words_is_not_a_name():
    assert details("## Long Run By The River\nWe ran by the river.") == []


def test_title_case_headings_and_bold_lead_ins():
    text = (
        "## Your Recovery Plan For Maya\n"
        "- **Rest Days Matter**: take two.\n"
        "**Next Steps With Ines**\n"
        "A **Porto Trip** mid-sentence is a name."
    )
    assert details(text) == [("Maya", "name"), ("Ines", "name"), ("Porto Trip", "name")]


def test_a_multi_word_name_needs_every_word_in_the_sources():
    notes = ["Second physio session with Dr Tiago Ramos."]
    assert flagged("Dr Tiago Ramos said so.", notes) == []
    assert flagged("Dr Tiago Silva said so.", notes) == ["Tiago Silva"]
    assert flagged("Ramos Tiago said so.", notes) == []  # words, not order
    assert flagged("The Porto Marathon, not the marathon here.", ["the marathon"]) == [
        "Porto Marathon"
    ]


def test_name_support_folds_case_and_accents():
    assert flagged("Tomas and INES came.", ["tomás and Inês came"]) == []


def test_hyphenated_words_keep_the_capitalised_part():
    assert details("Lisbon-based runners, a T-shirt and an X-ray.") == [("Lisbon", "name")]


def test_words_without_case_are_never_names_and_other_scripts_do_not_crash():
    text = "東京マラソン was fun, 走った 42 km. Москва is big; мы бежали 10 км. Αθήνα too."
    assert details(text) == [
        ("42", "number"),
        ("Москва", "name"),
        ("10", "number"),
        ("Αθήνα", "name"),
    ]
    assert flagged(text, ["москва and 42 and 10 and Αθήνα"]) == []


def test_markdown_emphasis_does_not_hide_details():
    text = "You ran **3:15** with _Ife_ and *Ines* on __March 3rd__ for `£40`."
    spans = find_details(text)
    assert [(s.text, s.kind) for s in spans] == [
        ("3:15", "time"),
        ("Ife", "name"),
        ("Ines", "name"),
        ("March 3rd", "date"),
        ("£40", "amount"),
    ]
    assert_offsets(text, spans)


def test_rich_markup_and_escape_characters_do_not_crash():
    text = (
        "[bold]Ines[/bold] ran [red]18 km[/] \x1b[31m4:07:33\x1b[0m \\[not markup] \x1b \x00 \r\n"
    )
    spans = find_details(text)
    assert [(s.text, s.kind) for s in spans] == [
        ("Ines", "name"),
        ("18", "number"),
        ("4:07:33", "time"),
    ]
    assert_offsets(text, spans)
    assert flagged(text, ["ines ran 18 km in 4:07:33"]) == []


# --------------------------------------------------------------------------- hand check

NOTES = [
    "episode 6f1c2a9e-3b7d-4e21-9a0c-5d8e7f6a1b2c (2026-10-11) Race day\n"
    "Lisbon Marathon done! Finished in 4:07:33, a PB by six minutes. Ines met me at the "
    "30 km mark with orange slices and Ife held a sign that said GO AUNTIE MAYA. Bib "
    "number 2417. My left knee started aching around km 35 but held.",
    "episode 0a9b8c7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d (2026-09-02) Physio\n"
    "Second physio session with Dr Tiago Ramos for the knee. He wants 3 sets of 15 "
    "clamshells twice a day and no downhill running for 10 days. The session cost €45. "
    "Next appointment is on 16 September at 8:15.",
    "episode 1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e (2026-08-20) Long run\n"
    "Ran 32 km along the Tagus with Ines. Average pace 5:41 per km. The training plan "
    "has 7 weeks left before race day.",
    "episode 2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f (2026-07-03) Ife's birthday\n"
    "Ife turned 7 on the 3rd of July. We took her to the Oceanário and I spent £60 on a "
    "stuffed octopus from the gift shop.",
    "Maya Okafor, 34, a product designer in Lisbon. Lives with her partner Ines Duarte. "
    "Runs with the Alfama Runners club on Tuesdays at 7:00pm. Goal: a sub-4 marathon "
    "in 2027.",
    "How did the marathon go compared with my goal?",
]

# (reply sentence, the detail it states); every detail in these sentences is in the notes
SUPPORTED = [
    ("You finished in 4:07:33, which was a personal best.", "4:07:33"),
    ("The Lisbon Marathon went well overall.", "Lisbon Marathon"),
    ("Ines met you at the 30 km mark with orange slices.", "30"),
    ("Ife's sign said GO AUNTIE MAYA.", "Ife"),
    ("That was on October 11th.", "October 11th"),
    ("Your bib number was 2417.", "2417"),
    ("Your physio, Dr Tiago Ramos, wants 3 sets of 15 clamshells.", "Tiago Ramos"),
    ("The last session cost €45.", "€45"),
    ("Your next appointment is on 16 September.", "16 September"),
    ("It's at 8:15 in the morning.", "8:15"),
    ("You ran 32 km along the Tagus with Ines.", "32"),
    ("Your average pace was 5:41 per km.", "5:41"),
    ("At that point the plan had 7 weeks left.", "7"),
    ("Ife turned 7 on the 3rd of July.", "3rd of July"),
    ("You spent £60 on a stuffed octopus.", "£60"),
    ("You took Ife to the Oceanário for her birthday.", "Oceanário"),
    ("You run with the Alfama Runners on Tuesdays.", "Alfama Runners"),
    ("Club night is Tuesday at 7pm.", "7pm"),
    ("Your goal is a sub-4 marathon in 2027.", "2027"),
    ("Ines Duarte has been there for all of it.", "Ines Duarte"),
    ("Maya, you were 34 when you ran it.", "34"),
    ("On 2026-10-11 you crossed the line.", "2026-10-11"),
    ("No downhill running for 10 days, Dr Ramos said.", "10"),
]

# (reply sentence, the detail that is in none of the notes)
UNSUPPORTED = [
    ("You finished in 3:15.", "3:15"),
    ("You ran the Porto Marathon last year.", "Porto Marathon"),
    ("Kofi cheered from the 30 km mark.", "Kofi"),
    ("The race was on March 3rd.", "March 3rd"),
    ("Your new shoes cost £1,200.", "£1,200"),
    ("Your next physio appointment is at 8:45.", "8:45"),
    ("Dr Tiago Silva wants you to rest.", "Tiago Silva"),
    ("The session cost €55.", "€55"),
    ("The appointment is on 17 September.", "17 September"),
    ("Your average pace was 6:02 per km.", "6:02"),
    ("The plan had 9 weeks left.", "9"),
    ("Ife turned 8 this year.", "8"),
    ("You ran past the Benfica stadium.", "Benfica"),
    ("In 2025 you ran your first half.", "2025"),
    ("That was Sunday, 12 October.", "12 October"),
    ("Ifeoma held up a sign.", "Ifeoma"),
    ("You started at 13:15.", "13:15"),
    ("You were 40% faster in the second half.", "40%"),
    ("The entry fee was $300.", "$300"),
    ("Your official time was 4:07:35.", "4:07:35"),
    ("You ran 42 km.", "42"),
    ("You and Ines ran through Sintra.", "Sintra"),
]


def test_hand_check_against_realistic_notes():
    index = SourceIndex(NOTES)
    # the stated detail is found in each sentence
    for sentence, detail in SUPPORTED + UNSUPPORTED:
        assert detail in [s.text for s in find_details(sentence)], (sentence, detail)

    false_alarms = []  # supported sentences with anything flagged
    for sentence, _ in SUPPORTED:
        spans = unsupported(sentence, index)  # type: ignore[arg-type]
        if spans:
            false_alarms.append((sentence, [s.text for s in spans]))
    misses = []  # unsupported details not flagged
    for sentence, detail in UNSUPPORTED:
        if detail not in [s.text for s in unsupported(sentence, index)]:  # type: ignore[arg-type]
            misses.append((sentence, detail))

    assert len(SUPPORTED) >= 20 and len(UNSUPPORTED) >= 20
    caught = 1 - len(misses) / len(UNSUPPORTED)
    false_rate = len(false_alarms) / len(SUPPORTED)
    report = f"caught {caught:.0%}, misses {misses}; false alarms {false_rate:.0%}: {false_alarms}"
    print(report)
    assert caught >= 0.9, report
    assert false_rate <= 0.1, report


def test_hand_check_as_one_reply():
    reply = " ".join(sentence for sentence, _ in SUPPORTED + UNSUPPORTED)
    flags = [s.text for s in unsupported(reply, NOTES)]
    expected = [detail for _, detail in UNSUPPORTED]
    assert [f for f in flags if f in expected] == expected, flags
    assert [f for f in flags if f not in expected] == []


# --------------------------------------------------------------------------- offsets

LONG = (
    "**Race recap** — You finished the Lisbon Marathon in 4:07:33 on 2026-10-11, "
    "about 3:15 faster than Kofi Mensah's guess.\n\n"
    "1. Ines met you at the 30 km mark; Ife’s sign said GO AUNTIE MAYA.\n"
    "2. Your physio (Dr Tiago Ramos) charged €45, or £1,200 for the year, 1,200 EUR…\n"
    "- Next: 16 September at 8:15am, then March 3rd, 3 March and the 3rd of March.\n"
    "Zoë, Tomás, O'Brien and Jean-Luc ran 5.5 km at 40% effort in 1993 — 東京, Москва.\n"
    "[bold]Sadie[/bold] says \x1b[31mOK\x1b[0m: see https://example.com/42 "
    "and episode 6f1c2a9e-3b7d-4e21-9a0c-5d8e7f6a1b2c.\t"
    "Combining: Zoe\u0308 ran 7pm, ¥5000, US$30, 14/03/2026; e\u0301 Émile’s.\r\n"
)


def test_offsets_on_a_long_mixed_text():
    text = LONG * 40
    spans = find_details(text)
    assert len(spans) > 40 * 20
    assert_offsets(text, spans)
    assert {s.kind for s in spans} == {"number", "time", "date", "amount", "name"}
    flags = unsupported(text, NOTES)
    assert_offsets(text, flags)
    assert {(s.text, s.kind) for s in flags} >= {
        ("3:15", "time"),
        ("Kofi Mensah", "name"),
        ("£1,200", "amount"),
        ("March 3rd", "date"),
        ("Zoe\u0308", "name"),
    }


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    *" \n\t.,:;!?'’-_*[]/$£€%",
                    "3",
                    "12",
                    "1,200",
                    "4:07:33",
                    "pm",
                    "March",
                    "3rd",
                    "of",
                    "Ife",
                    "Ife's",
                    "Ines",
                    "the",
                    "EUR",
                    "2026-03-14",
                    "\x1b[31m",
                    "[bold]",
                    "東京",
                    "Москва",
                    "e\u0301",
                ]
            ),
            st.text(max_size=4),
        ),
        max_size=40,
    ).map("".join)
)
def test_any_text_gives_in_order_exact_spans(text):
    spans = find_details(text)
    assert_offsets(text, spans)
    assert all(s.kind in {"number", "time", "date", "amount", "name"} for s in spans)
    flags = unsupported(text, [text[::2], "Ines ran 3 km"])
    assert_offsets(text, flags)
    # a text supports every detail in it
    index = SourceIndex([text])
    assert all(index.supports(s) for s in spans), [s for s in spans if not index.supports(s)]
