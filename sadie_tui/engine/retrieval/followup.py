"""Follow-ups in chat: which messages lean on the previous turn, and "the week before".

A follow-up is retrieved together with the previous user turn (``pipeline.prepare_query``);
"what about the week before?" moves the previous turn's time window back a week.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta

from .timewords import TimeWindow

_OPENERS = re.compile(
    r"^(?:and|but|so|also|or|plus|then|what about|how about|what else|what then|how so|"
    r"tell me more|more on|same for|why not|how come|"
    r"he|she|they|it|its|that|this|those|these|him|her|them|his|hers|their|there)\b",
    re.IGNORECASE,
)
_REFERENCES = re.compile(
    r"\b(?:he|she|they|it|him|her|them|his|hers|their|that|this|those|these|there|then)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[\w'’]+")


def is_follow_up(message: str) -> bool:
    """Whether a chat message leans on the previous turn, so it is retrieved together with it.

    The rule: three words or fewer ("why?", "and her?", "tell me more"); or it opens with a
    connective or pronoun ("and", "but", "so", "what about", "how about", "she", "that", …);
    or it is six words or fewer and refers back with a pronoun or "that/there/then"
    ("what did she say?").
    """
    text = message.strip()
    words = _WORD.findall(text)
    if not words:
        return False
    if len(words) <= 3:
        return True
    if _OPENERS.match(text):
        return True
    return len(words) <= 6 and bool(_REFERENCES.search(text))


_SHIFT = re.compile(r"\b(?:the\s+)?(day|week|weekend|month|year)\s+(before|after)\b", re.I)


def shifted_window(window: TimeWindow | None, message: str) -> TimeWindow | None:
    """ "What about the week before?": the previous turn's window moved by that unit."""
    m = _SHIFT.search(message)
    if window is None or m is None or window.start is None or window.end is None:
        return None
    unit, way = m[1].lower(), m[2].lower()
    sign = -1 if way == "before" else 1
    if unit in ("day", "week", "weekend"):
        step = timedelta(days=1 if unit == "day" else 7)
        return TimeWindow(window.start + sign * step, window.end + sign * step, m[0])
    months = 12 if unit == "year" else 1
    return TimeWindow(
        _add_months(window.start, sign * months), _add_months(window.end, sign * months), m[0]
    )


def _add_months(when: datetime, months: int) -> datetime:

    index = when.year * 12 + when.month - 1 + months
    year, month = divmod(index, 12)
    day = min(when.day, calendar.monthrange(year, month + 1)[1])
    return when.replace(year=year, month=month + 1, day=day)
