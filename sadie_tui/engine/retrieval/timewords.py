"""Time words in a query ("last week", "in March", "yesterday") as a retrieval window.

This module owns reading a time window out of the person's question and taking
the words back out of it for keyword search. It is pure and uses the standard
library only: every answer is computed from the ``now`` it is given, as naive
local datetimes, ``start`` inclusive and ``end`` exclusive.

Forms understood (case-insensitive):

- ``today`` (``this morning``, ``tonight``), ``yesterday`` (``last night``),
  ``the day before yesterday``;
- ``this/last week`` (weeks start on Monday), ``this/last month``,
  ``this/last year``, ``this/last weekend``, ``this past week``;
- ``N days/weeks/months/years ago`` with N as digits or one to twelve, ``a``,
  ``an``, ``a couple of``, ``a few``/``several`` (a looser window, 2 to 4): the whole
  day, that Monday-to-Sunday week, that calendar month or that year;
- ``the past N days`` / ``in the last two weeks`` / ``the past month``: a rolling
  window up to the end of today;
- ``in March``, ``in march 2025``, ``in Sept``, ``during May``, ``last March``:
  a month without a year is the most recent such month not in the future;
- ``in 2025``;
- ``on 2026-03-14`` (an ISO date needs no ``on``), ``on March 14``,
  ``March 14th, 2025``, ``on 14 March``, ``on the 14th of March``,
  ``on the 14th``: a date without a year is the most recent one not in the future;
- ``early March``, ``mid-February``, ``late May 2025``, ``at the end of February``, ``the
  beginning/start/middle of June``, ``the first/second half of March``, ``the first/last week
  of March``, ``early 2025``, ``mid-2025``, ``late last month``, ``the start of this year``:
  a part of a month or year. Early (beginning, start) is days 1-10 of a month or January to
  April of a year, mid (middle) days 11-20 or May to August, late (end) day 21 on or September
  to December; a month without a year is the most recent such part that has begun;
- ``last Tuesday``, ``on Friday``, ``Friday``: the most recent such day before today;
  ``this Sunday``: that day of this Monday-to-Sunday week (as ``this week``);
- ``this spring``, ``over the summer``, ``last winter`` (meteorological,
  northern hemisphere seasons);
- ``since X`` / ``after X`` (open end) and ``before X`` / ``until X`` / ``as of X`` /
  ``by X`` (open start, ``as of`` and ``by`` counting X itself), where X is any of the
  above or a bare month, year or date;
- ``between X and Y``, ``from X to Y`` (``until``, ``till``, ``through``): from the start
  of X to the end of Y; an X without a year takes Y's when it would otherwise come after Y
  ("between August 11 and August 15 2023");
- ``the day/week/weekend/month/year before X`` and ``… after X`` next to such an X
  ("the weekend before 4 October, 2023").

Month and weekday words are only read as dates with a preposition in front
("in", "on", "since", "during", …) or a day/year number after them, so "I may
have", "we march", "sat down", "the sun" are not dates. Abbreviated weekdays
("sat", "wed") need "on"/"last". "The week before" with no date after it is left to
follow-up handling. A weekday is one day only when it points at one: a bare "Saturday" not
after a determiner, count or ordinal ("a", "one", "every", "my", "first" …) and followed by
nothing but the end, a time of day or a function word ("what did I do Sunday morning?"), so
"my first Saturday session", "one Sunday morning" and "the Sunday roast" set no window; nor do
"on Saturdays", "on Saturday mornings" (habits) or "my last Saturday session". A part of an
ambiguous month ("late march") needs a preposition, a hyphen, a year or a capital.

When several phrases appear, the leftmost wins; among phrases starting at the
same place, the longest (most specific) wins.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class TimeWindow:
    start: datetime | None  # inclusive, naive local datetime
    end: datetime | None  # exclusive
    phrase: str  # the matched text, as in the query


# --------------------------------------------------------------------------- vocabulary

_MONTH_NAMES = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may",),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sept", "sep"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
)
# Month words (full and abbreviated) → month number.
MONTHS = {name: number for number, names in enumerate(_MONTH_NAMES, 1) for name in names}

#: Month words that are also common English words: never dates on their own.
_AMBIGUOUS_MONTHS = frozenset({"may", "march", "mar"})

_WEEKDAY_NAMES = (
    ("monday", "mon"),
    ("tuesday", "tues", "tue"),
    ("wednesday", "wed"),
    ("thursday", "thurs", "thur", "thu"),
    ("friday", "fri"),
    ("saturday", "sat"),
    ("sunday", "sun"),
)
_WEEKDAYS = {name: number for number, names in enumerate(_WEEKDAY_NAMES) for name in names}
_FULL_WEEKDAYS = frozenset(names[0] for names in _WEEKDAY_NAMES)

_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}

# Seasons as (first month, number of months); winter starts in December.
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def _alternation(words: Iterable[str]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


_MONTH = rf"(?P<month>{_alternation(MONTHS)})\.?(?![\w])"
_WEEKDAY = rf"(?P<weekday>{_alternation(_WEEKDAYS)})\.?(?![\w])"
_DAY = r"(?P<day>[0-3]?\d)(?P<ordinal>st|nd|rd|th)?(?![\w:])"
_YEAR = r"(?P<year>(?:19|20|21)\d\d)(?![\w:-])"
_COUNT = (
    r"(?P<count>\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few|several|an?)"
)
_UNIT = r"(?P<unit>day|week|month|year)s?"
# Nouns after "on the 2nd" that make it an ordinal, not a day of the month.
_NOT_A_DATE = r"time|times|try|attempt|floor|page|chapter|step|round|place|day|week|month|year"


# --------------------------------------------------------------------------- calendar helpers


def _midnight(now: datetime) -> datetime:
    return datetime(now.year, now.month, now.day)


def _month_index(year: int, month: int, shift: int = 0) -> tuple[int, int]:
    index = year * 12 + (month - 1) + shift
    return index // 12, index % 12 + 1


def _month_window(year: int, month: int) -> tuple[datetime, datetime]:
    ny, nm = _month_index(year, month, 1)
    return datetime(year, month, 1), datetime(ny, nm, 1)


def _year_window(year: int) -> tuple[datetime, datetime]:
    return datetime(year, 1, 1), datetime(year + 1, 1, 1)


def _day_window(day: datetime) -> tuple[datetime, datetime]:
    return day, day + timedelta(days=1)


def _week_window(day: datetime) -> tuple[datetime, datetime]:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=7)


def _shift_months(day: datetime, months: int) -> datetime:
    year, month = _month_index(day.year, day.month, months)
    last = calendar.monthrange(year, month)[1]
    return datetime(year, month, min(day.day, last))


def _recent_month(month: int, today: datetime) -> int:
    """The year of the most recent ``month`` not in the future."""
    return today.year if month <= today.month else today.year - 1


def _recent_date(month: int, day: int, today: datetime) -> datetime | None:
    """The most recent ``month``/``day`` on or before ``today`` (None if never valid)."""
    for year in range(today.year, today.year - 9, -1):
        try:
            candidate = datetime(year, month, day)
        except ValueError:
            if day > 29 or month != 2:
                return None
            continue
        if candidate <= today:
            return candidate
    return None


def _count(text: str) -> tuple[int, int]:
    """A count word as an inclusive range (``a few`` is vague: 2 to 4)."""
    word = " ".join(text.lower().split())
    if word.isdigit():
        return int(word), int(word)
    if "couple" in word:
        return 2, 2
    if word in ("few", "a few", "several"):
        return 2, 4
    return _NUMBER_WORDS[word], _NUMBER_WORDS[word]


# --------------------------------------------------------------------------- the forms

_Window = tuple[datetime | None, datetime | None]
_Handler = Callable[[re.Match[str], datetime, bool], "_Window | None"]
_FORMS: list[tuple[re.Pattern[str], _Handler]] = []


def _form(pattern: str) -> Callable[[_Handler], _Handler]:
    def register(handler: _Handler) -> _Handler:
        _FORMS.append((re.compile(rf"(?<![\w-])(?:{pattern})", re.IGNORECASE), handler))
        return handler

    return register


@_form(r"(?:the\s+)?day\s+before\s+yesterday")
def _day_before_yesterday(m: re.Match[str], today: datetime, anchored: bool) -> _Window:
    return _day_window(today - timedelta(days=2))


@_form(
    r"(?:(?:earlier\s+)?today|tonight)(?:'?s)?(?![\w])"
    r"|(?:earlier\s+)?this\s+(?:morning|afternoon|evening)(?![\w])"
)
def _today(m: re.Match[str], today: datetime, anchored: bool) -> _Window:
    return _day_window(today)


@_form(r"(?:yesterday|last\s+night)(?:'?s)?(?![\w])")
def _yesterday(m: re.Match[str], today: datetime, anchored: bool) -> _Window:
    return _day_window(today - timedelta(days=1))


@_form(r"(?P<which>this\s+past|this|last|previous)\s+(?P<unit>week|month|year)(?![\w])")
def _calendar_unit(m: re.Match[str], today: datetime, anchored: bool) -> _Window:
    back = 0 if m["which"].lower() == "this" else 1
    unit = m["unit"].lower()
    if unit == "week":
        start, end = _week_window(today - timedelta(days=7 * back))
        return start, end
    if unit == "month":
        return _month_window(*_month_index(today.year, today.month, -back))
    return _year_window(today.year - back)


@_form(r"(?P<which>this\s+past|this|last|past|over\s+the)\s+weekend(?![\w])")
def _weekend(m: re.Match[str], today: datetime, anchored: bool) -> _Window:
    saturday = today - timedelta(days=today.weekday()) + timedelta(days=5)
    which = " ".join(m["which"].lower().split())
    if which == "this":
        pass  # the weekend of this week
    elif which == "last":
        saturday -= timedelta(days=7)  # the weekend of last week
    elif saturday > today:  # "over the weekend", "this past weekend": the latest one begun
        saturday -= timedelta(days=7)
    return saturday, saturday + timedelta(days=2)


@_form(rf"{_COUNT}\s+{_UNIT}\s+ago(?![\w])")
def _ago(m: re.Match[str], today: datetime, anchored: bool) -> _Window:
    low, high = _count(m["count"])
    unit = m["unit"].lower()
    if unit == "day":
        return today - timedelta(days=high), today - timedelta(days=low - 1)
    if unit == "week":
        start = _week_window(today - timedelta(days=7 * high))[0]
        end = _week_window(today - timedelta(days=7 * low))[1]
        return start, end
    if unit == "month":
        start = _month_window(*_month_index(today.year, today.month, -high))[0]
        end = _month_window(*_month_index(today.year, today.month, -low))[1]
        return start, end
    return _year_window(today.year - high)[0], _year_window(today.year - low)[1]


@_form(
    rf"(?:(?:in|over|during|within)\s+)?(?:the\s+)?(?:last|past)\s+{_COUNT}\s+{_UNIT}(?![\w])"
    r"|(?:(?:in|over|during|within)\s+the\s+|the\s+)(?:last|past)\s+(?P<one>day|week|month|year)"
    r"(?![\w])"
    r"|past\s+(?P<bare>day|week|month|year)(?![\w])"
)
def _rolling(m: re.Match[str], today: datetime, anchored: bool) -> _Window | None:
    if m["count"]:
        count = _count(m["count"])[1]
        unit = m["unit"].lower()
    else:
        count = 1
        unit = (m["one"] or m["bare"]).lower()
    end = today + timedelta(days=1)
    if unit == "day":
        return today - timedelta(days=count), end
    if unit == "week":
        return today - timedelta(days=7 * count), end
    if unit == "month":
        return _shift_months(today, -count), end
    return _shift_months(today, -12 * count), end


@_form(
    r"(?:(?P<pre>in|during|throughout|on|last)\s+)?(?:(?P<the>the)\s+)?"
    rf"(?:(?P<weekday_pre>{_alternation(_WEEKDAYS)})\.?,?\s+)?"
    rf"{_MONTH}\s+(?:the\s+)?{_DAY}(?:,?\s+{_YEAR})?"
)
def _month_day(m: re.Match[str], today: datetime, anchored: bool) -> _Window | None:
    word = m["month"].lower()
    month = MONTHS[word]
    pre = (m["pre"] or "").lower()
    if pre in ("in", "during", "throughout", "last") and not m["ordinal"] and not m["year"]:
        return None  # "in March 14 people came": let the month form read "in March"
    if (
        not anchored
        and word in _AMBIGUOUS_MONTHS
        and not (pre or m["year"] or m["weekday_pre"] or m["the"] or m["ordinal"])
    ):
        return None
    return _date(month, int(m["day"]), m["year"], today)


@_form(
    r"(?:on\s+)?(?:(?P<the>the)\s+)?"
    rf"{_DAY}\s+(?:(?P<of>of)\s+)?{_MONTH}(?:,?\s+{_YEAR})?"
)
def _day_month(m: re.Match[str], today: datetime, anchored: bool) -> _Window | None:
    word = m["month"].lower()
    explicit = m.group(0).lower().startswith("on") or m["the"] or m["of"] or m["ordinal"]
    if not anchored and word in _AMBIGUOUS_MONTHS and not (explicit or m["year"]):
        return None  # "I ate 3 may…"
    return _date(MONTHS[word], int(m["day"]), m["year"], today)


def _date(month: int, day: int, year: str | None, today: datetime) -> _Window | None:
    if year:
        try:
            return _day_window(datetime(int(year), month, day))
        except ValueError:
            return None
    found = _recent_date(month, day, today)
    return None if found is None else _day_window(found)


@_form(r"(?:on\s+)?(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?![\w-])")
def _iso_date(m: re.Match[str], today: datetime, anchored: bool) -> _Window | None:
    try:
        return _day_window(datetime(int(m["y"]), int(m["m"]), int(m["d"])))
    except ValueError:
        return None


@_form(
    r"(?P<on>on\s+)?the\s+(?P<day>[0-3]?\d)(?:st|nd|rd|th)(?![\w])"
    rf"(?!\s+(?:of\s+)?(?:{_alternation(MONTHS)}|{_NOT_A_DATE})(?![\w]))"
)
def _day_of_month(m: re.Match[str], today: datetime, anchored: bool) -> _Window | None:
    if not (m["on"] or anchored):
        return None
    day = int(m["day"])
    if not 1 <= day <= 31:
        return None
    for back in range(12):
        year, month = _month_index(today.year, today.month, -back)
        if day <= calendar.monthrange(year, month)[1]:
            candidate = datetime(year, month, day)
            if candidate <= today:
                return _day_window(candidate)
    return None


@_form(
    r"(?:(?P<pre>in|during|throughout|last)\s+)?(?:the\s+month\s+of\s+)?"
    rf"{_MONTH}(?:,?\s+(?:of\s+)?{_YEAR})?"
)
def _month(m: re.Match[str], today: datetime, anchored: bool) -> _Window | None:
    month = MONTHS[m["month"].lower()]
    pre = (m["pre"] or "").lower()
    if m["year"]:
        if pre == "last":
            return None
        return _month_window(int(m["year"]), month)
    if pre == "last":  # the most recent one before this month
        year = today.year if month < today.month else today.year - 1
        return _month_window(year, month)
    if not pre and not anchored:
        return None  # "may", "march" alone are words, not dates
    return _month_window(_recent_month(month, today), month)


# "early March", "mid-February", "at the end of May", "the first half of 2025", "late last
# month" ("early in March" stays "in March": "I woke early in March" names no part of it).
# Thirds: early (the beginning, the start) is days 1-10 of a month or January to April of a
# year, mid (the middle) days 11-20 or May to August, late (the end) day 21 to the last or
# September to December; a half is days 1-15 / 16 on, or January-June / July on; the first
# and last week of a month are its first and last seven days.
_PART = (
    r"(?:(?P<pre>in|at|during|around|towards?|throughout|over)\s+)?"
    r"(?:(?P<adj>early|mid|late)(?P<hyphen>\s*-\s*|\s+)"
    r"|(?:(?P<the>the)\s+)?(?:very\s+)?(?P<noun>beginning|start|middle|end"
    r"|(?:first|second)\s+half|(?:first|last)\s+week)\s+of\s+)"
)
_PART_SHARE = {
    "early": "early",
    "beginning": "early",
    "start": "early",
    "mid": "mid",
    "middle": "mid",
    "late": "late",
    "end": "late",
    "first half": "first half",
    "second half": "second half",
    "first week": "first week",
    "last week": "last week",
}


def _part_of_month(part: str, year: int, month: int) -> _Window:
    start, end = _month_window(year, month)
    last = calendar.monthrange(year, month)[1]
    first_day, after_last = {
        "early": (1, 11),
        "mid": (11, 21),
        "late": (21, last + 1),
        "first half": (1, 16),
        "second half": (16, last + 1),
        "first week": (1, 8),
        "last week": (last - 6, last + 1),
    }[part]
    return start + timedelta(days=first_day - 1), start + timedelta(days=after_last - 1)


def _part_of_year(part: str, year: int) -> _Window | None:
    months = {
        "early": (1, 5),
        "mid": (5, 9),
        "late": (9, 13),
        "first half": (1, 7),
        "second half": (7, 13),
    }.get(part)
    if months is None:
        return None  # "the first week of 2025" is left alone
    return datetime(year, months[0], 1), datetime(*_month_index(year, months[1]), 1)


def _part_name(m: re.Match[str]) -> str:
    return _PART_SHARE[" ".join((m["adj"] or m["noun"]).lower().split())]


@_form(
    rf"{_PART}(?:the\s+month\s+of\s+)?{_MONTH}(?:,?\s+(?:of\s+)?{_YEAR})?"
    r"(?!\s+[0-3]?\d(?:st|nd|rd|th)?(?![\w:]))"  # "early March 14" is the date
)
def _month_part(m: re.Match[str], today: datetime, anchored: bool) -> _Window | None:
    word = m["month"].lower()
    if word in _AMBIGUOUS_MONTHS and not (
        anchored
        or m["pre"]
        or m["noun"]
        or m["year"]
        or "-" in (m["hyphen"] or "")
        or m["month"][0].isupper()
    ):
        return None  # "we left late, march…", "early may be better"
    month, part = MONTHS[word], _part_name(m)
    if m["year"]:
        return _part_of_month(part, int(m["year"]), month)
    window = _part_of_month(part, _recent_month(month, today), month)
    if window[0] is not None and window[0] > today:  # "late November" on 5 November
        window = _part_of_month(part, _recent_month(month, today) - 1, month)
    return window


@_form(rf"{_PART}(?:the\s+year\s+)?{_YEAR}")
def _year_part(m: re.Match[str], today: datetime, anchored: bool) -> _Window | None:
    return _part_of_year(_part_name(m), int(m["year"]))


@_form(rf"{_PART}(?P<which>this|last)\s+(?P<unit>month|year)(?![\w])")
def _relative_part(m: re.Match[str], today: datetime, anchored: bool) -> _Window | None:
    back = 0 if m["which"].lower() == "this" else 1
    if m["unit"].lower() == "year":
        return _part_of_year(_part_name(m), today.year - back)
    return _part_of_month(_part_name(m), *_month_index(today.year, today.month, -back))


@_form(rf"(?:(?P<pre>in|during|throughout)\s+)?(?:the\s+year\s+)?{_YEAR}")
def _year(m: re.Match[str], today: datetime, anchored: bool) -> _Window | None:
    if not (m["pre"] or anchored):
        return None
    return _year_window(int(m["year"]))


# Words before a bare weekday that make it one of many ("my first Saturday session", "one
# Sunday morning", "a Saturday", "every Sunday"), not a date.
_NOT_ONE_DAY = frozenset(
    "a an one the every each any some that which what whichever my our your his her their its "
    "first second third fourth fifth final same other another usual typical".split()
)
# Words after a bare weekday that keep it a date ("what did I do Saturday with Ana?", "Sunday
# morning", "Saturday, I…"); anything else (a noun: "Saturday session", "Sunday roast") reads
# it as a modifier, and the weekday is left alone.
_AFTER_A_DATE = frozenset(
    "morning afternoon evening night lunchtime with at in on and or but when while after before "
    "for to from i we you he she they it was were did had just then so".split()
)
_WORD_AT_END = re.compile(r"([\w']+)\W*$")
_NEXT_WORD = re.compile(r"\s*(?:(?P<stop>[?!.,;:)\]]|$)|['’]s(?![\w])|(?P<word>[\w']+))")
# "on Saturday mornings", "last Sunday nights": habits, not a day.
_HABIT = re.compile(r"\s+(?:mornings|afternoons|evenings|nights)(?![\w])", re.IGNORECASE)


def _word_before(query: str, at: int) -> str:
    found = _WORD_AT_END.search(query, 0, at)
    return found[1].lower() if found else ""


def _ends_as_a_date(m: re.Match[str]) -> bool:
    """Whether nothing follows the weekday but the end, a time of day or a function word."""
    after = _NEXT_WORD.match(m.string, m.end())
    if after is None:
        return False
    return after["word"] is None or after["word"].lower() in _AFTER_A_DATE


@_form(rf"(?:(?P<pre>on|last|this\s+past|past|next|this|every)\s+)?{_WEEKDAY}")
def _weekday(m: re.Match[str], today: datetime, anchored: bool) -> _Window | None:
    pre = " ".join((m["pre"] or "").lower().split())
    if pre in ("next", "every") or _HABIT.match(m.string, m.end()):
        return None
    word = m["weekday"].lower()
    if not pre and not anchored:
        if word not in _FULL_WEEKDAYS:
            return None  # "sat", "sun", "wed" alone are words
        if _word_before(m.string, m.start()) in _NOT_ONE_DAY or not _ends_as_a_date(m):
            return None  # "my first Saturday session", "one Sunday morning", "Sunday roast"
    if pre not in ("", "on") and _word_before(m.string, m.start()) in _NOT_ONE_DAY:
        if not _ends_as_a_date(m):
            return None  # "my last Saturday session", "the last Sunday of the month"
    if pre == "this":  # that day of this Monday-to-Sunday week, like "this week"
        monday = today - timedelta(days=today.weekday())
        return _day_window(monday + timedelta(days=_WEEKDAYS[word]))
    back = (today.weekday() - _WEEKDAYS[word] - 1) % 7 + 1
    return _day_window(today - timedelta(days=back))


@_form(
    r"(?P<pre>this\s+past|this|last|past|(?:in|over|during|throughout)(?:\s+the)?)\s+"
    r"(?P<season>spring|summer|autumn|fall|winter)(?![\w])"
)
def _season(m: re.Match[str], today: datetime, anchored: bool) -> _Window:
    first = _SEASONS[m["season"].lower()]
    pre = " ".join(m["pre"].lower().split())
    # The most recent season that has begun (maybe still running).
    year = today.year if first <= today.month else today.year - 1
    start = datetime(year, first, 1)
    end = datetime(*_month_index(year, first, 3), 1)
    if pre in ("last", "this past", "past") and end > today:
        # "last summer": the most recent one that is over.
        start, end = datetime(year - 1, first, 1), datetime(end.year - 1, end.month, 1)
    return start, end


_OPEN_ENDED = re.compile(
    r"(?<![\w-])(?P<word>since|after|before|until|till|as\s+of|by)\s+", re.IGNORECASE
)
# "the week before …": a unit next to an open-ended word; alone it is a follow-up ("what about
# the week before?"), with a date after it a window of its own.
_UNIT_BEFORE = re.compile(
    r"(?:(?:over|during|in|on|for)\s+)?(?:(?:the|a|one)\s+)?(?P<unit>day|week|weekend|month|year)s?\s+$",
    re.IGNORECASE,
)
_RANGE = re.compile(r"(?<![\w-])(?P<word>between|from)\s+", re.IGNORECASE)
_RANGE_JOIN = {
    "between": re.compile(r"\s*,?\s+and\s+", re.IGNORECASE),
    "from": re.compile(r"\s*,?\s+(?:to|until|till|through|thru)\s+|\s*[-–]\s*", re.IGNORECASE),
}


def _unit_next_to(unit: str, way: str, start: datetime, end: datetime) -> _Window:
    """ "The week before X" (``way`` before: ending where X starts) or after (from X's end)."""
    if unit == "weekend":
        if way == "before":
            saturday = start - timedelta(days=(start.weekday() - 5) % 7 or 7)
        else:
            saturday = end + timedelta(days=(5 - end.weekday()) % 7)
        return saturday, saturday + timedelta(days=2)
    if way == "before":
        if unit == "day":
            return start - timedelta(days=1), start
        if unit == "week":
            return start - timedelta(days=7), start
        return _shift_months(start, -1 if unit == "month" else -12), start
    if unit == "day":
        return end, end + timedelta(days=1)
    if unit == "week":
        return end, end + timedelta(days=7)
    return end, _shift_months(end, 1 if unit == "month" else 12)


def _same_day_in(day: datetime, year: int) -> datetime | None:
    try:
        return day.replace(year=year)
    except ValueError:  # 29 February
        return None


# --------------------------------------------------------------------------- parsing


def _call(handler: _Handler, m: re.Match[str], today: datetime, anchored: bool) -> _Window | None:
    try:
        return handler(m, today, anchored)
    except (ValueError, OverflowError):  # a date outside datetime's range
        return None


def _candidates(query: str, now: datetime) -> list[tuple[int, int, _Window]]:
    today = _midnight(now)
    found: list[tuple[int, int, _Window]] = []
    for pattern, handler in _FORMS:
        for m in pattern.finditer(query):
            called = _call(handler, m, today, False)
            if called is not None:
                found.append((m.start(), m.end(), called))
    for m in _OPEN_ENDED.finditer(query):
        inner = _anchored(query, m.end(), today)
        if inner is None:
            continue
        end, (start_at, end_at) = inner
        word = " ".join(m["word"].lower().split())
        unit = _UNIT_BEFORE.search(query, 0, m.start())
        if word in ("before", "after") and unit is not None:
            if start_at is None or end_at is None:
                continue
            way = _unit_next_to(unit["unit"].lower(), word, start_at, end_at)
            found.append((unit.start(), end, way))
            continue
        if word in ("since", "after"):
            window: _Window = (start_at if word == "since" else end_at, None)
            if window[0] is None:
                continue
        else:
            window = (None, start_at if word == "before" else end_at)
            if window[1] is None:
                continue
        found.append((m.start(), end, window))
    for m in _RANGE.finditer(query):
        found.extend(_range(query, m, today))
    return found


def _range(query: str, m: re.Match[str], today: datetime) -> list[tuple[int, int, _Window]]:
    """ "between X and Y" / "from X to Y" as one window from X's start to Y's end."""
    first = _anchored(query, m.end(), today)
    if first is None:
        return []
    join = _RANGE_JOIN[m["word"].lower()].match(query, first[0])
    if join is None:
        return []
    second = _anchored(query, join.end(), today)
    if second is None:
        return []
    (start, _), (later, end) = first[1], second[1]
    if start is None or end is None:
        return []
    if later is not None and start > later:
        # "between August 11 and August 15 2023": the first date takes the second's year.
        moved = _same_day_in(start, later.year)
        if moved is None or moved > later:
            return []
        start = moved
    return [(m.start(), second[0], (start, end))]


def _anchored(query: str, pos: int, today: datetime) -> tuple[int, _Window] | None:
    """The longest form starting exactly at ``pos`` (bare months/years/dates allowed)."""
    best: tuple[int, _Window] | None = None
    for pattern, handler in _FORMS:
        m = pattern.match(query, pos)
        if m is None:
            continue
        window = _call(handler, m, today, True)
        if window is not None and (best is None or m.end() > best[0]):
            best = (m.end(), window)
    return best


def parse_time_window(query: str, now: datetime) -> TimeWindow | None:
    """The time window named in ``query``, relative to ``now``; None when there is none."""
    if not query:
        return None
    found = _candidates(query, now)
    if not found:
        return None
    start, end, (window_start, window_end) = min(found, key=lambda c: (c[0], -c[1]))
    return TimeWindow(start=window_start, end=window_end, phrase=query[start:end])


_SPACE_BEFORE_PUNCT = re.compile(r"\s+([?!.,;:)\]])")
_SPACE_AFTER_OPEN = re.compile(r"([(\[])\s+")


def strip_time_words(query: str, window: TimeWindow | None) -> str:
    """``query`` without the window's phrase, whitespace tidied (for keyword search)."""
    text = query
    if window is not None and window.phrase:
        at = text.find(window.phrase)
        if at < 0:
            at = text.lower().find(window.phrase.lower())
        if at >= 0:
            text = text[:at] + " " + text[at + len(window.phrase) :]
    text = re.sub(r"\(\s*\)|\[\s*\]", " ", text)  # brackets left empty by the cut
    text = " ".join(text.split())
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _SPACE_AFTER_OPEN.sub(r"\1", text)
    text = re.sub(r"^[\s,;:]+|[\s,;:]+$", "", text)
    text = re.sub(r"([,;:])(?=[?!.])", "", text)
    if not any(ch.isalnum() for ch in text):
        return ""
    return text
