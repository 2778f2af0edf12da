"""Time words in a query narrow retrieval's time window."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sadie_tui.engine.retrieval.timewords import (
    TimeWindow,
    parse_time_window,
    strip_time_words,
)

MONDAY = datetime(2026, 11, 30, 14, 0)  # a Monday
SUNDAY = datetime(2026, 11, 29, 10, 0)  # a Sunday
NEW_YEAR = datetime(2027, 1, 1, 9, 0)  # a Friday


def at(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d)


def check(query: str, now: datetime, start: datetime | None, end: datetime | None, phrase: str):
    window = parse_time_window(query, now)
    assert window is not None, query
    assert (window.start, window.end) == (start, end), query
    assert window.phrase == phrase
    if window.start is not None:
        assert window.start.tzinfo is None
    return window


# --------------------------------------------------------------------------- Monday 2026-11-30

MONDAY_CASES = [
    ("what did I do today?", at(2026, 11, 30), at(2026, 12, 1), "today"),
    ("Today", at(2026, 11, 30), at(2026, 12, 1), "Today"),
    ("notes from this morning", at(2026, 11, 30), at(2026, 12, 1), "this morning"),
    ("yesterday", at(2026, 11, 29), at(2026, 11, 30), "yesterday"),
    ("How did I sleep last night", at(2026, 11, 29), at(2026, 11, 30), "last night"),
    ("the day before yesterday", at(2026, 11, 28), at(2026, 11, 29), "the day before yesterday"),
    ("this week", at(2026, 11, 30), at(2026, 12, 7), "this week"),
    ("What did I do LAST WEEK?", at(2026, 11, 23), at(2026, 11, 30), "LAST WEEK"),
    ("this past week", at(2026, 11, 23), at(2026, 11, 30), "this past week"),
    ("this month", at(2026, 11, 1), at(2026, 12, 1), "this month"),
    ("last month", at(2026, 10, 1), at(2026, 11, 1), "last month"),
    ("this year", at(2026, 1, 1), at(2027, 1, 1), "this year"),
    ("last year", at(2025, 1, 1), at(2026, 1, 1), "last year"),
    # N units ago
    ("3 days ago", at(2026, 11, 27), at(2026, 11, 28), "3 days ago"),
    ("one day ago", at(2026, 11, 29), at(2026, 11, 30), "one day ago"),
    ("a couple of days ago", at(2026, 11, 28), at(2026, 11, 29), "a couple of days ago"),
    ("couple days ago", at(2026, 11, 28), at(2026, 11, 29), "couple days ago"),
    ("a week ago", at(2026, 11, 23), at(2026, 11, 30), "a week ago"),
    ("two weeks ago", at(2026, 11, 16), at(2026, 11, 23), "two weeks ago"),
    ("a month ago", at(2026, 10, 1), at(2026, 11, 1), "a month ago"),
    ("six months ago", at(2026, 5, 1), at(2026, 6, 1), "six months ago"),
    ("twelve months ago", at(2025, 11, 1), at(2025, 12, 1), "twelve months ago"),
    ("11 months ago", at(2025, 12, 1), at(2026, 1, 1), "11 months ago"),
    ("a year ago", at(2025, 1, 1), at(2026, 1, 1), "a year ago"),
    ("2 years ago", at(2024, 1, 1), at(2025, 1, 1), "2 years ago"),
    ("a few days ago", at(2026, 11, 26), at(2026, 11, 29), "a few days ago"),
    ("a few weeks ago", at(2026, 11, 2), at(2026, 11, 23), "a few weeks ago"),
    # rolling windows
    ("the past 3 days", at(2026, 11, 27), at(2026, 12, 1), "the past 3 days"),
    ("in the last two weeks", at(2026, 11, 16), at(2026, 12, 1), "in the last two weeks"),
    ("over the past month", at(2026, 10, 30), at(2026, 12, 1), "over the past month"),
    ("past year", at(2025, 11, 30), at(2026, 12, 1), "past year"),
    # months
    ("in March", at(2026, 3, 1), at(2026, 4, 1), "in March"),
    ("what happened in march 2025?", at(2025, 3, 1), at(2025, 4, 1), "in march 2025"),
    ("in Sept", at(2026, 9, 1), at(2026, 10, 1), "in Sept"),
    ("in sep.", at(2026, 9, 1), at(2026, 10, 1), "in sep."),
    ("in December", at(2025, 12, 1), at(2026, 1, 1), "in December"),
    ("in November", at(2026, 11, 1), at(2026, 12, 1), "in November"),
    ("during May", at(2026, 5, 1), at(2026, 6, 1), "during May"),
    ("in May of 2024", at(2024, 5, 1), at(2024, 6, 1), "in May of 2024"),
    ("February 2025", at(2025, 2, 1), at(2025, 3, 1), "February 2025"),
    ("last March", at(2026, 3, 1), at(2026, 4, 1), "last March"),
    ("last November", at(2025, 11, 1), at(2025, 12, 1), "last November"),
    # years
    ("in 2025", at(2025, 1, 1), at(2026, 1, 1), "in 2025"),
    ("during 1999", at(1999, 1, 1), at(2000, 1, 1), "during 1999"),
    # dates
    ("on 2026-03-14", at(2026, 3, 14), at(2026, 3, 15), "on 2026-03-14"),
    ("notes 2025-12-01 please", at(2025, 12, 1), at(2025, 12, 2), "2025-12-01"),
    ("on March 14", at(2026, 3, 14), at(2026, 3, 15), "on March 14"),
    ("March 14th", at(2026, 3, 14), at(2026, 3, 15), "March 14th"),
    ("on March 14, 2025", at(2025, 3, 14), at(2025, 3, 15), "on March 14, 2025"),
    ("on 14 March", at(2026, 3, 14), at(2026, 3, 15), "on 14 March"),
    ("14 March 2024", at(2024, 3, 14), at(2024, 3, 15), "14 March 2024"),
    ("on the 14th of March", at(2026, 3, 14), at(2026, 3, 15), "on the 14th of March"),
    ("on december 25", at(2025, 12, 25), at(2025, 12, 26), "on december 25"),
    ("jan 5", at(2026, 1, 5), at(2026, 1, 6), "jan 5"),
    ("on may 3", at(2026, 5, 3), at(2026, 5, 4), "on may 3"),
    ("on Sunday, March 15", at(2026, 3, 15), at(2026, 3, 16), "on Sunday, March 15"),
    ("on Feb 29", at(2024, 2, 29), at(2024, 3, 1), "on Feb 29"),
    ("on the 14th", at(2026, 11, 14), at(2026, 11, 15), "on the 14th"),
    ("on the 31st", at(2026, 10, 31), at(2026, 11, 1), "on the 31st"),
    # since / before / until / after
    ("since March", at(2026, 3, 1), None, "since March"),
    ("since 2025", at(2025, 1, 1), None, "since 2025"),
    ("since March 14", at(2026, 3, 14), None, "since March 14"),
    ("since 2026-01-10", at(2026, 1, 10), None, "since 2026-01-10"),
    ("since last week", at(2026, 11, 23), None, "since last week"),
    ("since may", at(2026, 5, 1), None, "since may"),
    ("after last week", at(2026, 11, 30), None, "after last week"),
    ("before March", None, at(2026, 3, 1), "before March"),
    ("until yesterday", None, at(2026, 11, 30), "until yesterday"),
    ("how many, as of September 2025?", None, at(2025, 10, 1), "as of September 2025"),
    ("by June", None, at(2026, 7, 1), "by June"),
    # ranges
    (
        "between March 3 and March 10",
        at(2026, 3, 3),
        at(2026, 3, 11),
        "between March 3 and March 10",
    ),
    ("from may to june", at(2026, 5, 1), at(2026, 7, 1), "from may to june"),
    ("from 2020 through 2022", at(2020, 1, 1), at(2023, 1, 1), "from 2020 through 2022"),
    ("between Dec 20 and Jan 5", at(2025, 12, 20), at(2026, 1, 6), "between Dec 20 and Jan 5"),
    # a unit next to a date
    ("the week before March 14", at(2026, 3, 7), at(2026, 3, 14), "the week before March 14"),
    ("the day after March 14", at(2026, 3, 15), at(2026, 3, 16), "the day after March 14"),
    ("the month after June 2025", at(2025, 7, 1), at(2025, 8, 1), "the month after June 2025"),
    (
        "her pups over the weekend before 4th October, 2025?",
        at(2025, 9, 27),
        at(2025, 9, 29),
        "over the weekend before 4th October, 2025",
    ),
    ("the weekend after March 14", at(2026, 3, 21), at(2026, 3, 23), "the weekend after March 14"),
    # weekdays
    ("last Tuesday", at(2026, 11, 24), at(2026, 11, 25), "last Tuesday"),
    ("on Friday", at(2026, 11, 27), at(2026, 11, 28), "on Friday"),
    ("what did I do on Monday", at(2026, 11, 23), at(2026, 11, 24), "on Monday"),
    ("Saturday", at(2026, 11, 28), at(2026, 11, 29), "Saturday"),
    ("on sat", at(2026, 11, 28), at(2026, 11, 29), "on sat"),
    ("last wed", at(2026, 11, 25), at(2026, 11, 26), "last wed"),
    # weekends
    ("last weekend", at(2026, 11, 28), at(2026, 11, 30), "last weekend"),
    ("over the weekend", at(2026, 11, 28), at(2026, 11, 30), "over the weekend"),
    ("this weekend", at(2026, 12, 5), at(2026, 12, 7), "this weekend"),
    # seasons
    ("this spring", at(2026, 3, 1), at(2026, 6, 1), "this spring"),
    ("over the summer", at(2026, 6, 1), at(2026, 9, 1), "over the summer"),
    ("last summer", at(2026, 6, 1), at(2026, 9, 1), "last summer"),
    ("in the fall", at(2026, 9, 1), at(2026, 12, 1), "in the fall"),
    ("last autumn", at(2025, 9, 1), at(2025, 12, 1), "last autumn"),
    ("last winter", at(2025, 12, 1), at(2026, 3, 1), "last winter"),
]


@pytest.mark.parametrize(("query", "start", "end", "phrase"), MONDAY_CASES)
def test_forms_on_a_monday(query, start, end, phrase):
    check(query, MONDAY, start, end, phrase)


SUNDAY_CASES = [
    ("today", at(2026, 11, 29), at(2026, 11, 30), "today"),
    ("this week", at(2026, 11, 23), at(2026, 11, 30), "this week"),
    ("last week", at(2026, 11, 16), at(2026, 11, 23), "last week"),
    ("a week ago", at(2026, 11, 16), at(2026, 11, 23), "a week ago"),
    ("last Sunday", at(2026, 11, 22), at(2026, 11, 23), "last Sunday"),
    ("on Saturday", at(2026, 11, 28), at(2026, 11, 29), "on Saturday"),
    ("on Monday", at(2026, 11, 23), at(2026, 11, 24), "on Monday"),
    ("this weekend", at(2026, 11, 28), at(2026, 11, 30), "this weekend"),
    ("last weekend", at(2026, 11, 21), at(2026, 11, 23), "last weekend"),
    ("over the weekend", at(2026, 11, 28), at(2026, 11, 30), "over the weekend"),
]


@pytest.mark.parametrize(("query", "start", "end", "phrase"), SUNDAY_CASES)
def test_forms_on_a_sunday(query, start, end, phrase):
    check(query, SUNDAY, start, end, phrase)


NEW_YEAR_CASES = [
    ("yesterday", at(2026, 12, 31), at(2027, 1, 1), "yesterday"),
    ("this week", at(2026, 12, 28), at(2027, 1, 4), "this week"),
    ("last week", at(2026, 12, 21), at(2026, 12, 28), "last week"),
    ("this month", at(2027, 1, 1), at(2027, 2, 1), "this month"),
    ("last month", at(2026, 12, 1), at(2027, 1, 1), "last month"),
    ("last year", at(2026, 1, 1), at(2027, 1, 1), "last year"),
    ("3 months ago", at(2026, 10, 1), at(2026, 11, 1), "3 months ago"),
    ("2 days ago", at(2026, 12, 30), at(2026, 12, 31), "2 days ago"),
    ("in January", at(2027, 1, 1), at(2027, 2, 1), "in January"),
    ("in December", at(2026, 12, 1), at(2027, 1, 1), "in December"),
    ("in March", at(2026, 3, 1), at(2026, 4, 1), "in March"),
    ("on December 31", at(2026, 12, 31), at(2027, 1, 1), "on December 31"),
    ("on the 14th", at(2026, 12, 14), at(2026, 12, 15), "on the 14th"),
    ("last Friday", at(2026, 12, 25), at(2026, 12, 26), "last Friday"),
    ("this winter", at(2026, 12, 1), at(2027, 3, 1), "this winter"),
    ("last winter", at(2025, 12, 1), at(2026, 3, 1), "last winter"),
]


@pytest.mark.parametrize(("query", "start", "end", "phrase"), NEW_YEAR_CASES)
def test_forms_on_new_years_day(query, start, end, phrase):
    check(query, NEW_YEAR, start, end, phrase)


def test_time_of_day_is_ignored():
    late = datetime(2026, 11, 30, 23, 59, 59)
    assert parse_time_window("today", late) == TimeWindow(
        at(2026, 11, 30), at(2026, 12, 1), "today"
    )


# --------------------------------------------------------------------------- no time words


@pytest.mark.parametrize(
    "query",
    [
        "",
        "what did I write about Ana?",
        "I may have said something",
        "May I ask about the garden",
        "we march on",
        "we march 14 miles",
        "I sat with her",
        "the sun came out",
        "wed in a small chapel",
        "mon ami",
        "I ate 3 may flowers",
        "what about the week before?",
        "the month before",
        "between us and them",
        "from the start",
        "on the 2nd time I tried",
        "I read 2025 pages",
        "room 12 days",
        "next Friday",
        "every friday we swim",
        "on February 30",
        "2026-02-30",
        "days ago",
        "weekday mornings",
        "it was a good fall",
    ],
)
def test_no_false_positives(query):
    assert parse_time_window(query, MONDAY) is None


# --------------------------------------------------------------------------- precedence


def test_leftmost_phrase_wins():
    window = parse_time_window("yesterday and also last week", MONDAY)
    assert window is not None and window.phrase == "yesterday"


def test_longest_phrase_at_the_same_place_wins():
    window = parse_time_window("in March 2024 we moved", MONDAY)
    assert window is not None
    assert window.phrase == "in March 2024"
    assert window.start == at(2024, 3, 1)


def test_in_month_followed_by_a_count_is_the_month():
    check("in March 14 people came", MONDAY, at(2026, 3, 1), at(2026, 4, 1), "in March")


def test_since_after_a_unit_word_still_counts():
    check("how many days since March?", MONDAY, at(2026, 3, 1), None, "since March")


def test_dates_outside_the_calendar_are_ignored():
    assert parse_time_window("999 years ago", datetime(200, 1, 1)) is None
    assert parse_time_window("yesterday", datetime(1, 1, 1)) is None


def test_phrase_keeps_query_case():
    window = parse_time_window("Since MARCH, how am I?", MONDAY)
    assert window is not None and window.phrase == "Since MARCH"


# --------------------------------------------------------------------------- strip_time_words


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what did I do last week?", "what did I do?"),
        ("Yesterday, I felt tired", "I felt tired"),
        ("notes in March 2025 about Ana", "notes about Ana"),
        ("how was  Ana   on Friday ?", "how was Ana?"),
        ("today", ""),
        ("today?", ""),
        ("the garden (last summer) plans", "the garden plans"),
    ],
)
def test_strip_time_words(query, expected):
    window = parse_time_window(query, MONDAY)
    assert window is not None
    assert strip_time_words(query, window) == expected


def test_strip_without_window_tidies_whitespace():
    assert strip_time_words("  what   about\nAna ? ", None) == "what about Ana?"


def test_strip_with_a_phrase_in_another_case():
    window = TimeWindow(at(2026, 11, 23), at(2026, 11, 30), "last week")
    assert strip_time_words("LAST WEEK with Ana", window) == "with Ana"


# --------------------------------------------------------------------------- robustness

_WORDS = [
    "in",
    "on",
    "since",
    "before",
    "until",
    "after",
    "last",
    "this",
    "past",
    "the",
    "of",
    "a",
    "few",
    "couple",
    "two",
    "3",
    "14th",
    "31",
    "29",
    "2025",
    "2026-02-28",
    "ago",
    "day",
    "days",
    "week",
    "weeks",
    "month",
    "year",
    "weekend",
    "today",
    "yesterday",
    "march",
    "may",
    "Sept",
    "feb",
    "friday",
    "sat",
    "summer",
    "winter",
    "early",
    "mid-",
    "late",
    "end",
    "start",
    "first",
    "half",
    "one",
    "my",
    "Sunday",
    "mornings",
    ",",
    "?",
    "Ana",
]


@given(
    st.lists(st.sampled_from(_WORDS), max_size=12).map(" ".join) | st.text(max_size=80),
    st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 12, 31)),
)
def test_never_raises_and_windows_are_sane(query, now):
    window = parse_time_window(query, now)
    stripped = strip_time_words(query, window)
    assert isinstance(stripped, str)
    if window is None:
        return
    assert window.phrase and window.phrase in query
    assert window.start is not None or window.end is not None
    if window.start is not None and window.end is not None:
        assert window.start < window.end
    assert len(stripped) < len(query)


# ------------------------------------------------------------------ parts of a month or year

PART_CASES = [
    # thirds of a month: early 1-10, mid 11-20, late 21 to the end
    (
        "my long run at the end of February?",
        at(2026, 2, 21),
        at(2026, 3, 1),
        "at the end of February",
    ),
    ("dinner in mid-February", at(2026, 2, 11), at(2026, 2, 21), "in mid-February"),
    ("mid February", at(2026, 2, 11), at(2026, 2, 21), "mid February"),
    ("mid-Feb", at(2026, 2, 11), at(2026, 2, 21), "mid-Feb"),
    ("early March", at(2026, 3, 1), at(2026, 3, 11), "early March"),
    ("in early May", at(2026, 5, 1), at(2026, 5, 11), "in early May"),
    ("late June", at(2026, 6, 21), at(2026, 7, 1), "late June"),
    ("in late march", at(2026, 3, 21), at(2026, 4, 1), "in late march"),
    ("late March 2025", at(2025, 3, 21), at(2025, 4, 1), "late March 2025"),
    ("end of Feb", at(2026, 2, 21), at(2026, 3, 1), "end of Feb"),
    ("at the end of may", at(2026, 5, 21), at(2026, 6, 1), "at the end of may"),
    ("the beginning of June", at(2026, 6, 1), at(2026, 6, 11), "the beginning of June"),
    ("at the start of April", at(2026, 4, 1), at(2026, 4, 11), "at the start of April"),
    ("the very start of April", at(2026, 4, 1), at(2026, 4, 11), "the very start of April"),
    ("in the middle of June", at(2026, 6, 11), at(2026, 6, 21), "in the middle of June"),
    ("the end of February 2024", at(2024, 2, 21), at(2024, 3, 1), "the end of February 2024"),
    # halves and weeks of a month
    ("the first half of March", at(2026, 3, 1), at(2026, 3, 16), "the first half of March"),
    ("the second half of April", at(2026, 4, 16), at(2026, 5, 1), "the second half of April"),
    ("the first week of March", at(2026, 3, 1), at(2026, 3, 8), "the first week of March"),
    ("the last week of March", at(2026, 3, 25), at(2026, 4, 1), "the last week of March"),
    ("last week of February", at(2026, 2, 22), at(2026, 3, 1), "last week of February"),
    # the most recent such part that has begun
    ("late November", at(2026, 11, 21), at(2026, 12, 1), "late November"),
    ("early December", at(2025, 12, 1), at(2025, 12, 11), "early December"),
    # parts of a year: thirds (Jan-Apr, May-Aug, Sep-Dec) and halves
    ("early 2025", at(2025, 1, 1), at(2025, 5, 1), "early 2025"),
    ("mid-2025", at(2025, 5, 1), at(2025, 9, 1), "mid-2025"),
    ("at the end of 2024", at(2024, 9, 1), at(2025, 1, 1), "at the end of 2024"),
    ("the second half of 2025", at(2025, 7, 1), at(2026, 1, 1), "the second half of 2025"),
    # parts of this / last month or year
    ("late last month", at(2026, 10, 21), at(2026, 11, 1), "late last month"),
    ("at the start of this month", at(2026, 11, 1), at(2026, 11, 11), "at the start of this month"),
    ("early this year", at(2026, 1, 1), at(2026, 5, 1), "early this year"),
    ("the end of last year", at(2025, 9, 1), at(2026, 1, 1), "the end of last year"),
    # with the open-ended words and ranges
    ("since mid-March", at(2026, 3, 11), None, "since mid-March"),
    ("by the end of March", None, at(2026, 4, 1), "by the end of March"),
    ("before late March", None, at(2026, 3, 21), "before late March"),
    (
        "between early March and late April",
        at(2026, 3, 1),
        at(2026, 5, 1),
        "between early March and late April",
    ),
]


@pytest.mark.parametrize(("query", "start", "end", "phrase"), PART_CASES)
def test_parts_of_a_month_or_year(query, start, end, phrase):
    check(query, MONDAY, start, end, phrase)


def test_a_part_of_a_month_in_a_leap_year_ends_with_it():
    check("late February", datetime(2024, 6, 1), at(2024, 2, 21), at(2024, 3, 1), "late February")
    check(
        "the last week of February",
        datetime(2024, 6, 1),
        at(2024, 2, 23),
        at(2024, 3, 1),
        "the last week of February",
    )


@pytest.mark.parametrize(
    ("query", "phrase"),
    [
        # an adverb, not a part: "early in March" is the whole month
        ("did I wake early in March?", "in March"),
        ("I stayed late in May", "in May"),
        # a verb "start", not "the start of"
        ("my project will start in March", "in March"),
        # a date after the month: the date
        ("leaving early June 14", "June 14"),
    ],
)
def test_not_a_part_of_a_month(query, phrase):
    window = parse_time_window(query, MONDAY)
    assert window is not None and window.phrase == phrase


@pytest.mark.parametrize(
    "query",
    [
        "we left late, march on",
        "late march of the ants",
        "early may be better",
        "the end of the month",
        "the end of the year",
        "the first week of 2025",
        "mid-run I stopped",
        "the start of it all",
        "the end of term",
    ],
)
def test_parts_that_are_not_dates(query):
    assert parse_time_window(query, MONDAY) is None, query


# --------------------------------------------------------------------------- one weekday or many

WEEKDAY_CASES = [
    ("what did I do Sunday morning?", at(2026, 11, 29), at(2026, 11, 30), "Sunday"),
    ("what did I do Saturday with Ana?", at(2026, 11, 28), at(2026, 11, 29), "Saturday"),
    ("Saturday, I think", at(2026, 11, 28), at(2026, 11, 29), "Saturday"),
    ("how was Saturday's run?", at(2026, 11, 28), at(2026, 11, 29), "Saturday"),
    ("who did I see on Saturday?", at(2026, 11, 28), at(2026, 11, 29), "on Saturday"),
    ("the run on Saturday morning", at(2026, 11, 28), at(2026, 11, 29), "on Saturday"),
    ("my long run last Saturday", at(2026, 11, 28), at(2026, 11, 29), "last Saturday"),
    ("what did I do the last Saturday?", at(2026, 11, 28), at(2026, 11, 29), "last Saturday"),
    # "this <weekday>": that day of this Monday-to-Sunday week, as "this week"
    ("this Sunday", at(2026, 12, 6), at(2026, 12, 7), "this Sunday"),
    ("this Monday", at(2026, 11, 30), at(2026, 12, 1), "this Monday"),
]


@pytest.mark.parametrize(("query", "start", "end", "phrase"), WEEKDAY_CASES)
def test_a_weekday_that_points_at_one_day(query, start, end, phrase):
    check(query, MONDAY, start, end, phrase)


def test_this_weekday_on_a_sunday_is_within_the_week():
    check("this Saturday", SUNDAY, at(2026, 11, 28), at(2026, 11, 29), "this Saturday")
    check("this Sunday", SUNDAY, at(2026, 11, 29), at(2026, 11, 30), "this Sunday")


@pytest.mark.parametrize(
    "query",
    [
        "When was my first Saturday session with the running club?",
        "Why was Tomás hurt when I went for a run one Sunday morning?",
        "what do I do on Saturdays?",
        "on Saturday mornings I swim",
        "last Sunday nights were quiet",
        "every Sunday",
        "a Saturday with nothing planned",
        "my Saturday session",
        "our Sunday walks",
        "the Sunday roast",
        "Saturday parkrun times",
        "Sunday lunch at Mum's",
        "my last Saturday session with the club",
        "the last Sunday of the month",
        "each Friday",
        "the second Tuesday",
        "that Monday",
    ],
)
def test_a_weekday_that_is_one_of_many_sets_no_window(query):
    assert parse_time_window(query, MONDAY) is None, query
