"""Plans and one-day events are not beliefs: a model-free rule, applied to every proposed
belief before it is kept.

A belief is something that holds over weeks or months (a habit, a preference, a person in
one's life). A 1.5B model, asked what notes show, restated plans ("I am confident that I will
be able to try a full marathon next spring") and single events ("I finished the migration on
June 14th"). Two small lists decide, no model:

* **plan**: a future or intention marker: "will", "'ll", "shall", "going to", "gonna",
  "plan(ning) to", "intend to", "about to", "tomorrow", "tonight", "next week / month /
  year / spring / Monday ...", "this coming ...".
* **one-day event**: a single day named: "today", "yesterday", "last night", "this morning /
  afternoon / evening", "last Monday ...", "on Monday" (one weekday, not "on Mondays"), a
  calendar date ("June 14th", "14 June", "2026-06-14", "14/06").

"Every Monday", "on Mondays", "in the mornings", "once a month" name no single day and pass.
A goal in the present ("I want to run a marathon") passes: what a person wants is a belief.
"""

from __future__ import annotations

import re

_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
)
_SEASON_OR_SPAN = rf"(?:week|weekend|month|year|spring|summer|autumn|fall|winter|{_WEEKDAY})"

PLAN = re.compile(
    r"\b(?:will|shall|gonna|going to|plan(?:ning|s)? to|intend(?:s|ing)? to|about to|"
    r"tomorrow|tonight)\b"
    r"|\w'll\b|\w’ll\b"
    rf"|\bnext {_SEASON_OR_SPAN}\b|\bthis coming {_SEASON_OR_SPAN}\b",
    re.IGNORECASE,
)
ONE_DAY = re.compile(
    r"\b(?:today|yesterday|last night|this (?:morning|afternoon|evening))\b"
    rf"|\blast {_WEEKDAY}\b"
    rf"|\bon {_WEEKDAY}\b(?!s)"
    rf"|\b{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTH}\b"
    r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b",
    re.IGNORECASE,
)
# "may" is a month and a modal verb: "I may" is not a date, "May 3" is (the digits decide).


def not_a_belief(statement: str) -> str | None:
    """Why ``statement`` is not a belief ("plan" or "one-day event"), or None when it may
    be one."""
    if PLAN.search(statement):
        return "plan"
    if ONE_DAY.search(statement):
        return "one-day event"
    return None
