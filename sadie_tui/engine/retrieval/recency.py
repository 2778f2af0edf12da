"""Recency intent in a question: "the last time", "my latest", "when did I first", "how long since".

Pure, standard library only, read like the time words (``timewords``) and taken out of the
keyword text the same way. ``newest`` questions (last, latest, most recent, how long since,
when did I stop) want the matching notes newest first; ``oldest`` ones (first, when did I
start) want them oldest first, and the persona's recency decay must not push the oldest away.

"Last" next to a time unit, a month, a weekday or a season ("last week", "last March",
"last Tuesday", "in the last two weeks") names a window, not recency, and is left to
``timewords``; so are "at last" and "last night".

"First" and "last" order the notes that are on the question's topic: those holding the most
of its words (``on_topic``, set by the pipeline), not those that merely score well, so a
note that says "first" does not pass for the first note about the greenhouse. The words that
name the notes rather than their topic ("write about", "mentioned") are not topic words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol, TypeVar

from .timewords import MONTHS

Order = Literal["newest", "oldest"]


class _Dated(Protocol):
    @property
    def final(self) -> float: ...
    @property
    def occurred_at(self) -> datetime: ...
    @property
    def in_window(self) -> bool | None: ...
    @property
    def on_topic(self) -> bool | None: ...


_C = TypeVar("_C", bound=_Dated)


@dataclass(frozen=True)
class Recency:
    order: Order
    phrase: str  # the matched text, as in the query


_TIME_NOUNS = (
    r"(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|few|couple|"
    r"several)?\s*(?:of\s+)?"
    r"(?:day|week|weekend|month|year|night|morning|evening|afternoon|spring|summer|autumn|fall|"
    r"winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|"
    r"thurs|fri|sat|sun|" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")s?(?![\w])"
)

# Who did it: a pronoun or a name ("when did Tomás first show me …").
_WHO = r"(?:i|we|you|he|she|they|[^\W\d_][\w'’.-]*)"

_NEWEST = re.compile(
    r"(?<![\w-])(?:"
    r"how\s+long\s+(?:has\s+it\s+been\s+|is\s+it\s+|was\s+it\s+)?since"
    r"|when\s+did\s+" + _WHO + r"\s+(?:last|stop|quit|give\s+up|finish)"
    r"|(?:the\s+|my\s+|our\s+)?most\s+recent(?:ly)?"
    r"|(?:the\s+|my\s+|our\s+)?latest"
    r"|(?:the\s+)?last\s+time"
    r"|(?:i|we|you|he|she|they)\s+last(?!\s+(?:" + _TIME_NOUNS + r"))"
    r"|(?:the|my|our)\s+last(?!\s+(?:" + _TIME_NOUNS + r"|few|couple|several|\d))"
    r")(?![\w-])",
    re.IGNORECASE,
)
_OLDEST = re.compile(
    r"(?<![\w-])(?:"
    r"when\s+did\s+" + _WHO + r"\s+(?:first|start|begin|get\s+into|take\s+up)"
    r"|(?:the\s+|my\s+|our\s+)?(?:very\s+)?first\s+time"
    r"|(?:i|we|you|he|she|they)\s+first"
    r"|(?:the|my|our)\s+(?:very\s+)?(?:first|earliest)(?!\s+(?:of\s+)?(?:"
    + "|".join(sorted(MONTHS, key=len, reverse=True))
    + r"|aid|floor|class|place)(?![\w]))"
    r"|(?:how|when)\s+(?:did\s+)?(?:it|this|that|all\s+this|everything)\s+(?:start|begin)"
    r")(?![\w-])",
    re.IGNORECASE,
)


def parse_recency(query: str) -> Recency | None:
    """The recency intent of ``query``; the leftmost phrase wins. None when there is none."""
    if not query:
        return None
    found = [(m.start(), "newest", m) for m in _NEWEST.finditer(query)]
    found += [(m.start(), "oldest", m) for m in _OLDEST.finditer(query)]
    if not found:
        return None
    _, order, m = min(found, key=lambda f: (f[0], -len(f[2].group(0))))
    return Recency(order=order, phrase=m.group(0))  # type: ignore[arg-type]


# Words of a recency phrase that name no topic, taken out of the keyword text.
_INTENT_WORDS = re.compile(
    r"(?<![\w-])(?:last|latest|most|recent|recently|first|earliest|time|since|start|started|"
    r"begin|began|stop|stopped|quit)(?![\w-])",
    re.IGNORECASE,
)


# Words that name the notes, not their topic: "when did I first write about the greenhouse",
# "the last time I mentioned Rui". Only with "about"/"on" for writing and talking ("the last
# time I wrote to Mum" is about the letter).
_ABOUT_THE_NOTES = re.compile(
    r"(?<![\w-])(?:"
    r"(?:writ(?:e|es|ing|ten)|wrote|talk(?:s|ed|ing)?|journal(?:l?ed|l?ing)?|noted?)\s+(?:about|on)"
    r"|mention(?:s|ed|ing)?"
    r")(?![\w-])",
    re.IGNORECASE,
)


def strip_recency(query: str, recency: Recency | None) -> str:
    """``query`` without the intent's own words ("last", "first", "most recent"…) and the
    words that name the notes ("write about", "mentioned")."""
    if recency is None:
        return query
    at = query.find(recency.phrase)
    if at >= 0:
        phrase = _INTENT_WORDS.sub(" ", recency.phrase)
        query = query[:at] + " " + phrase + " " + query[at + len(recency.phrase) :]
    return " ".join(_ABOUT_THE_NOTES.sub(" ", query).split())


# A chunk whose final score is at least this share of the best one counts as relevant: the
# relevant ones are put in date order, the rest follow in rank order.
RELEVANT_SHARE = 0.6


def by_date(chunks: Sequence[_C], recency: Recency | None) -> list[_C]:
    """``chunks`` (in rank order) with the relevant ones in date order for ``recency`` —
    newest or oldest first — then the others; notes outside the question's time window
    (``in_window`` False) always last. Relevant: on the question's topic (``on_topic``), or
    when no chunk says, scoring at least ``RELEVANT_SHARE`` of the best. Without recency:
    unchanged."""
    items = list(chunks)
    if recency is None or not items:
        return items
    inside = [c for c in items if c.in_window is not False]
    outside = [c for c in items if c.in_window is False]
    best = max((c.final for c in inside), default=0.0)
    if any(c.on_topic for c in inside):
        relevant = [c for c in inside if c.on_topic]
    else:
        relevant = [c for c in inside if best > 0 and c.final >= RELEVANT_SHARE * best]
    relevant.sort(key=lambda c: c.occurred_at, reverse=recency.order == "newest")
    rest = [c for c in inside if c not in relevant]
    return relevant + rest + outside


_NOW = re.compile(
    r"\b(?:now|nowadays|currently|current|these days|at the moment|at present|still|so far|"
    r"lately|right now|today|anymore|any more|latest|most recent(?:ly)?)\b",
    re.IGNORECASE,
)
# "how much have I saved", "do I still", "what is my …": the present, when no time is named.
_PRESENT = re.compile(
    r"^\W*(?:(?:how (?:much|many|often|far|long|well)|what|where|who|which)\b[^?]*?\b)?"
    r"(?:do|does|am|is|are|have|has)\s+(?:i|my|we)\b",
    re.IGNORECASE,
)


def asks_now(question: str) -> bool:
    """The question asks how things stand now ("these days", "how much have I saved"): the
    newest note that answers it is the answer, not an older one about a past month. The
    caller checks first that the question names no time ("in April")."""
    return bool(_NOW.search(question) or _PRESENT.search(question))
