"""The numbers a record states, read into fields: what a tracker, a watch, a bank or a phone
says in a sentence ("Slept 4h58m.", "January average 5h50m", "4 runs/week average",
"food delivery €96.40", "phone use after 23:00 averaged 58 min/night"), and the amount,
distance and duration of a purchase or a run.

Why here: the figures ``sadie reflect`` computes (``reflect.figures``) read columns, not
prose; a connector that keeps only text makes every later check parse it again, each in its
own way. A pattern is read only where it is unambiguous: a line that states two figures of
the same measure for different periods ("7-day average" and a month's) or matches no pattern
is left out (``measure_of`` returns None) and the figures step counts it as such.

Each observation yields at most one ``Measure``: its headline figure over the nights or days
it covers (``start`` .. ``end``, inclusive dates). A single night is the day the tracker wrote
it (the morning after); a month's average covers the month up to the day it was written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

#: The measures read, with their units (the figures' table in README says the same).
UNITS = {
    "sleep": "min/night",  # minutes asleep a night
    "phone_night": "min/night",  # minutes of phone use after 23:00 a night
    "runs": "runs/week",  # runs a week
    "takeaway": "EUR",  # spent on food delivery over the period (a total)
}

_MONTHS = {
    m: i
    for i, m in enumerate(
        "january february march april may june july august september october november december".split(),
        start=1,
    )
}
_MONTH = r"(?P<month>" + "|".join(_MONTHS) + r")"
_HM = r"(?P<h>\d{1,2})h(?P<m>\d{1,2})m"
_NIGHT = re.compile(rf"^(?:slept {_HM}|first full night recorded: {_HM.replace('P<', 'P<n')})")
_DAYS_AVG = re.compile(rf"\b(?P<days>\d{{1,3}})-day average {_HM}")
_MONTH_AVG = re.compile(rf"\b{_MONTH} average(?: to date)? {_HM}")
_PHONE = re.compile(
    r"phone use after 23:00 averaged (?:(?P<h>\d{1,2})h)?(?P<m>\d{1,3}) ?m(?:in)?/night"
)
_RUNS = re.compile(r"(?P<n>\d+(?:\.\d+)?) runs/week average")
_DELIVERY = re.compile(r"food delivery[^€.]*€(?P<eur>\d[\d,]*(?:\.\d+)?)")
_LEAD_MONTH = re.compile(rf"^{_MONTH}\b")
_LAST_WEEKS = re.compile(r"^last (?P<weeks>\d{1,2}) weeks\b")


@dataclass(frozen=True)
class Measure:
    """One figure a record states: the measure, its value in ``UNITS[measure]``, and the
    days it covers (inclusive)."""

    measure: str
    value: float
    start: date
    end: date

    @property
    def unit(self) -> str:
        return UNITS[self.measure]


def measure_of(source: str, text: str, observed_at: datetime) -> Measure | None:
    """The headline figure of one observation line, or None when it states none of the known
    patterns or states them ambiguously."""
    folded = " ".join(text.casefold().split())
    kind = source.casefold()
    day = observed_at.date()
    if "sleep" in kind:
        return _sleep(folded, day)
    if "screen" in kind or "phone" in kind:
        m = _PHONE.search(folded)
        return _over_period("phone_night", _hours_minutes(m), folded, day) if m else None
    if "run" in kind or "watch" in kind:
        m = _RUNS.search(folded)
        return _over_period("runs", float(m["n"]), folded, day) if m else None
    if "bank" in kind or "card" in kind:
        found = _DELIVERY.findall(folded)
        if len(found) != 1:
            return None
        return _over_period("takeaway", float(found[0].replace(",", "")), folded, day)
    return None


def _hours_minutes(m: re.Match[str]) -> float:
    return int(m["h"] or 0) * 60 + int(m["m"])


def _sleep(folded: str, day: date) -> Measure | None:
    night = _NIGHT.search(folded)
    if night is not None:  # the night's own figure leads; an average after it is context
        hours = night["h"] or night["nh"]
        minutes = night["m"] or night["nm"]
        return Measure("sleep", int(hours) * 60 + int(minutes), day, day)
    averages = [*_DAYS_AVG.finditer(folded), *_MONTH_AVG.finditer(folded)]
    if len(averages) != 1:
        return None  # none, or two averages over different periods: ambiguous
    m = averages[0]
    value = _hours_minutes(m)
    if "days" in m.groupdict() and m.groupdict().get("days"):
        days = int(m["days"])
        return Measure("sleep", value, day - timedelta(days=days - 1), day)
    start = _month_start(m["month"], day)
    return Measure("sleep", value, start, day) if start else None


def _over_period(measure: str, value: float, folded: str, day: date) -> Measure | None:
    """A figure for the period the line opens with ("January: …", "Last 4 weeks: …"); None
    when it names none."""
    lead = _LEAD_MONTH.search(folded)
    if lead is not None:
        start = _month_start(lead["month"], day)
        return Measure(measure, value, start, day) if start else None
    weeks = _LAST_WEEKS.search(folded)
    if weeks is not None:
        return Measure(measure, value, day - timedelta(days=7 * int(weeks["weeks"]) - 1), day)
    return None


def _month_start(month: str, day: date) -> date | None:
    """The first day of ``month`` written on ``day``: this year's, or last year's when the
    month is later than ``day``'s (a December summary written in January)."""
    number = _MONTHS[month]
    year = day.year if number <= day.month else day.year - 1
    start = date(year, number, 1)
    return start if (day - start).days < 62 else None


# --------------------------------------------------------------------------- records' numbers

_AMOUNT = re.compile(r"€\s?(\d[\d,]*(?:\.\d{1,2})?)")
_DISTANCE = re.compile(r"\b(\d{1,3}(?:\.\d{1,2})?) ?km\b")
_DURATION = re.compile(r"\b(?:(\d{1,2}):)?(\d{1,2}):(\d{2})\b(?! ?(?:am|pm))")


def record_numbers(text: str) -> dict[str, float]:
    """The amount (EUR), distance (km) and duration (seconds) a record states, each only
    when it states exactly one (a record with two amounts is not guessed at)."""
    found: dict[str, float] = {}
    amounts = {a.replace(",", "") for a in _AMOUNT.findall(text)}
    if len(amounts) == 1:
        found["amount_eur"] = float(amounts.pop())
    distances = set(_DISTANCE.findall(text))
    if len(distances) == 1:
        found["distance_km"] = float(distances.pop())
        durations = [d for d in _DURATION.findall(text) if d[0]]  # h:mm:ss beside a distance
        if len(durations) == 1:
            h, m, s = durations[0]
            found["duration_s"] = int(h) * 3600 + int(m) * 60 + int(s)
    return found
