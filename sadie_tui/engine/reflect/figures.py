"""Figures from the records, and the self-reports they contradict: no model.

Why: a memory holds both what a person says about themselves ("I sleep about seven hours a
night") and what their tracker, watch, bank and phone recorded. Checking one against the
other is arithmetic, so it is done without a model, every ``sadie reflect``, and the offline
reasoner does it too.

1. Observations stored before their figures were kept get them now (``ingest.measures``, the
   same patterns); a line stating none, or stating it ambiguously, is left out and counted.
2. Record-backed beliefs (origin ``records``): each measure over its windows up to its last
   recorded day (``FIGURES``), and how often an appointment recurs; each linked (``rests_on``)
   to the rows it is computed from.
3. Self-reports: each belief (stated or derived) that matches a claim pattern (``CLAIMS``), and
   one the notes state in the first person when no belief does, is compared with the figure
   over the window ending on each day it was said (said before its records began, the first
   window after it, within ``LEAD_DAYS``). Where the records contradict it beyond the
   claim's threshold, it becomes ``contested``, linked (``contradicts``) to those rows, and
   says the numbers in words.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from statistics import median
from typing import TYPE_CHECKING

from ..ingest.measures import UNITS, measure_of
from ..ingest.raw import NAMESPACE
from ..reply.grounding import sentences_of
from ..store import beliefs as belief_store
from ..store import figures as store
from ..store.ids import now
from ..store.vectors import vector_literal
from .sameness import fingerprint

if TYPE_CHECKING:
    import numpy as np

    from ..store.db import Database

Encode = Callable[[Sequence[str]], "np.ndarray"]

#: Days a window needs figures on before it says anything.
MIN_DAYS = 7
# A self-report said before its records began is checked against the first window after it
# when that window begins within this many days of the day it was said.
LEAD_DAYS = 30
_WORD_NUMBERS = {
    w: n
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
}
_NUMBER = r"(\d+(?:\.\d+)?|" + "|".join(_WORD_NUMBERS) + r")"


def _number(word: str) -> float:
    return float(_WORD_NUMBERS.get(word.casefold(), word))


@dataclass(frozen=True)
class Claim:
    """A kind of self-report the records can check: the measure, the pattern a statement
    matches, the value it claims (in the measure's unit), the window it is checked over
    (days ending on the day it was said), and the gap beyond which the records contradict
    it (``above``: only a figure above the claim contradicts it)."""

    measure: str
    pattern: re.Pattern[str]
    claimed: Callable[[re.Match[str]], float]
    said: Callable[[re.Match[str]], str]
    days: int
    threshold: float
    above: bool = False


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "sleep",
        re.compile(
            rf"\bsleep\b[^.?!]*?\b(?:about|around|roughly|some|maybe|usually)?\s*{_NUMBER}"
            r"\s+hours?\b",
            re.IGNORECASE,
        ),
        lambda m: _number(m[1]) * 60,
        lambda m: f"about {m[1]} hours",
        days=90,
        threshold=45,
    ),
    Claim(
        "runs",
        re.compile(
            rf"\brun\b[^.?!]*?\b{_NUMBER}\s+(?:times|runs|days)\s+(?:a|per|each)\s+week\b",
            re.IGNORECASE,
        ),
        lambda m: _number(m[1]),
        lambda m: f"{m[1]} times a week",
        days=30,
        threshold=1.0,
    ),
    Claim(
        "takeaway",
        re.compile(
            r"\b(?:don't|do not|never|rarely|hardly|barely|not)\b[^.?!]*?"
            r"\b(?:much|spend|order|get)\b[^.?!]*?\b(?:takeaways?|take-aways?|takeout|delivery)\b",
            re.IGNORECASE,
        ),
        lambda m: 50.0,  # "not much": at most €50 a month
        lambda m: "you don't spend much on takeaway",
        days=90,
        threshold=50.0,
        above=True,
    ),
    Claim(
        "phone_night",
        re.compile(
            r"\b(?:barely|hardly|rarely|never|don't|do not)\b[^.?!]*?\bphone\b[^.?!]*?\bnight\b",
            re.IGNORECASE,
        ),
        lambda m: 10.0,  # "barely": ten minutes a night at most
        lambda m: "you barely look at your phone at night",
        days=30,
        threshold=20.0,
        above=True,
    ),
)

#: The record-backed beliefs: (measure, window in days, belief kind).
FIGURES: tuple[tuple[str, int, str], ...] = (
    ("sleep", 30, "health"),
    ("sleep", 90, "health"),
    ("phone_night", 30, "habit"),
    ("runs", 30, "habit"),
    ("takeaway", 90, "habit"),
)
#: An appointment (a record title) seen this often, at gaps this regular, is a recurrence.
MIN_RECURRENCES = 4
# A sentence that reports a claim rather than making it ("I've stopped telling people I sleep
# seven hours", "I told myself I slept seven hours") is not a self-report.
_REPORTED = re.compile(
    r"\b(?:tell|telling|told|say|saying|said|says|stopped|used to|thought|pretend|claim)\b",
    re.IGNORECASE,
)


@dataclass
class RecordsReport:
    """What the records step did (``sadie reflect --json``: ``records``)."""

    read: int = 0  # observations with a figure
    left_out: int = 0  # observations stating no figure, or an ambiguous one
    figures: int = 0  # record-backed beliefs written
    self_reports: int = 0  # beliefs matching a claim pattern (found in the notes too)
    contested: int = 0  # of them, contradicted by the records
    contested_ids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        return {
            "read": self.read,
            "left_out": self.left_out,
            "figures": self.figures,
            "self_reports": self.self_reports,
            "contested": self.contested,
        }


def check_records(db: Database, encode: Encode | None) -> RecordsReport:
    """Run the three steps (module docstring) in one transaction."""
    report = RecordsReport()
    at = now()
    with db.transaction():
        _backfill(db)
        report.read, report.left_out = store.counts(db)
        report.figures = _write_figures(db, encode, at) + _write_recurrences(db, encode, at)
        _find_in_notes(db, encode, at)
        for belief_id, statement, status in _self_reports(db):
            report.self_reports += 1
            if _contest(db, belief_id, statement, status, at):
                report.contested += 1
                report.contested_ids.append(belief_id)
    return report


# --------------------------------------------------------------------------- 1. fields


def _backfill(db: Database) -> None:
    for obs_id, source, text, observed_at in store.unmeasured(db):
        m = measure_of(source, text, observed_at)
        if m is not None:
            store.set_measure(db, obs_id, m.measure, m.value, m.unit, m.start, m.end)


# --------------------------------------------------------------------------- 2. figures


def per_unit(measure: str, mean: float) -> float:
    """A window's mean a day in the unit a figure is said in: a month's spend (30 days) for a
    total, else the measure's own (a night's minutes, runs a week)."""
    return mean * 30 if UNITS[measure] == "EUR" else mean


def said(measure: str, value: float) -> str:
    """A figure in words: "5 h 48 m", "58 min", "3.5 runs", "€157"."""
    if measure == "sleep" or (measure == "phone_night" and value >= 60):
        minutes = round(value)
        return f"{minutes // 60} h {minutes % 60:02d} m"
    if measure == "phone_night":
        return f"{round(value)} min"
    if measure == "runs":
        return f"{value:.1f}".rstrip("0").rstrip(".") + " runs"
    return f"€{value:,.0f}"


_FIGURE_WORDS = {
    "sleep": "the tracker averaged {v} asleep a night",
    "phone_night": "phone use after 23:00 averaged {v} a night",
    "runs": "the watch averaged {v} a week",
    "takeaway": "food delivery cost {v} a month",
}
_SPAN_WORDS = {"sleep": "nights", "phone_night": "nights", "runs": "days", "takeaway": "days"}


def figure_words(
    measure: str, value: float, days: int, end: date, covered: int, start: date | None = None
) -> str:
    """ "the tracker averaged 5 h 48 m asleep a night over the 90 nights to 4 Jan 2026 (9
    with a figure)"; with ``start``, the window after the day it was said: "… over the 90
    nights from 27 Dec 2025, the first it recorded after you said it (…)"."""
    what = _FIGURE_WORDS[measure].format(v=said(measure, value))
    span = _SPAN_WORDS[measure]
    if start is not None:
        return (
            f"{what} over the {days} {span} from {_day(start)}, the first it recorded after"
            f" you said it ({covered} with a figure)"
        )
    return f"{what} over the {days} {span} to {_day(end)} ({covered} with a figure)"


def _day(d: date) -> str:
    return f"{d.day} {d:%b %Y}"


def _record_id(key: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"records:{key}"))


def _embedding(encode: Encode | None, text: str) -> str | None:
    if encode is None:
        return None
    return vector_literal(encode([text])[0])


def _write_figures(db: Database, encode: Encode | None, at: datetime) -> int:
    written = 0
    for measure, days, kind in FIGURES:
        end = store.last_day(db, measure)
        if end is None:
            continue
        w = store.window(db, measure, end - timedelta(days=days - 1), end)
        if w.mean is None or w.days < MIN_DAYS:
            continue
        words = figure_words(measure, per_unit(measure, w.mean), days, end, w.days)
        statement = words[0].upper() + words[1:] + "."
        _put(
            db,
            f"{measure}:{days}",
            statement,
            kind,
            encode,
            at,
            [(r, "observation") for r in w.rows],
        )
        written += 1
    return written


def _put(
    db: Database,
    key: str,
    statement: str,
    kind: str,
    encode: Encode | None,
    at: datetime,
    rows: Sequence[tuple[str, str]],
) -> None:
    belief_id = _record_id(key)
    before = store.upsert_record_belief(
        db,
        id=belief_id,
        key=key,
        statement=statement,
        kind=kind,
        embedding=_embedding(encode, statement),
        at=at,
    )
    if before is not None:
        belief_store.log_change(
            db, belief_id, "edited", reason="new records", before=before, after=statement
        )
    store.replace_rests_on(db, belief_id, rows, at)


_TITLE_CORE = re.compile(r"\s*\(.*?\)\s*$")


def _write_recurrences(db: Database, encode: Encode | None, at: datetime) -> int:
    """ "“Therapy — Carla” recurs about every 14 days": records of one title (its bracketed
    remark cut: "(extra session)") seen ``MIN_RECURRENCES`` times or more; the typical gap is
    the median of the gaps between them."""
    by_title: dict[str, list[tuple[str, date]]] = {}
    for episode_id, title, occurred_at in store.record_episodes(db):
        core = _TITLE_CORE.sub("", title).strip()
        if core:
            by_title.setdefault(core, []).append((episode_id, occurred_at.date()))
    written = 0
    for title, seen in sorted(by_title.items()):
        days = sorted({d for _, d in seen})
        if len(days) < MIN_RECURRENCES:
            continue
        gaps = [(b - a).days for a, b in zip(days, days[1:], strict=False)]
        typical = round(median(gaps))
        statement = (
            f"“{title}” recurs about every {typical} days ({len(days)} times,"
            f" {_day(days[0])} – {_day(days[-1])})."
        )
        rows = [(episode_id, "episode") for episode_id, _ in seen]
        _put(db, f"recurs:{title.casefold()}", statement, "habit", encode, at, rows)
        written += 1
    return written


# --------------------------------------------------------------------------- 3. self-reports


def claim_of(statement: str) -> tuple[Claim, re.Match[str]] | None:
    """The claim pattern a statement matches (the first in ``CLAIMS``), if any."""
    for claim in CLAIMS:
        m = claim.pattern.search(statement)
        if m is not None:
            return claim, m
    return None


def _self_reports(db: Database) -> list[tuple[str, str, str]]:
    return [
        (b.id, b.statement, b.status)
        for b in belief_store.list_beliefs(db)
        if b.origin != "records" and b.status in ("active", "contested") and claim_of(b.statement)
    ]


def _find_in_notes(db: Database, encode: Encode | None, at: datetime) -> None:
    """A self-report the notes state ("I sleep about seven hours a night.") and no belief
    holds yet becomes a derived belief, its sentences the notes' own words (the checks that
    follow judge it like any other)."""
    held = {
        matched[0].measure
        for b in belief_store.list_beliefs(db)
        if (matched := claim_of(b.statement)) is not None
    }
    found: dict[str, list[tuple[str, str]]] = {}
    for episode_id, text, _ in store.notes_text(db):
        for sentence in sentences_of(text):
            stripped = sentence.strip(" \"'“”")
            if not re.match(r"^I\b", stripped) or _REPORTED.search(stripped):
                continue
            match = claim_of(stripped)
            if match is None or match[0].measure in held:
                continue
            found.setdefault(match[0].measure, []).append((episode_id, sentence.strip()))
    for measure, quotes in found.items():
        statement = quotes[0][1].strip(" \"'“”")
        belief_id = str(uuid.uuid4())
        belief_store.insert_derived(
            db,
            id=belief_id,
            statement=statement,
            kind="health" if measure == "sleep" else "habit",
            confidence=0.5,
            evidence=[],
            fingerprint=fingerprint(statement),
            embedding=_embedding(encode, statement),
            at=at,
        )
        belief_store.log_change(
            db, belief_id, "created", reason="a self-report in the notes, found without a model"
        )
        for episode_id, quote in quotes:
            belief_store.add_evidence(
                db,
                belief_id,
                episode_id,
                quote,
                verbatim=True,
                stance="supports",
                run_id=None,
                at=at,
            )


@dataclass(frozen=True)
class Contradiction:
    """The records against a self-report: the words, and the rows they rest on."""

    words: str
    rows: tuple[str, ...]
    gap: float


def contradiction(db: Database, statement: str, days_said: Sequence[date]) -> Contradiction | None:
    """The strongest contradiction of ``statement`` by the records over the windows ending on
    the days it was said (the last recorded day when none is known), or None."""
    matched = claim_of(statement)
    if matched is None:
        return None
    claim, m = matched
    ends = list(days_said)
    if not ends:
        last = store.last_day(db, claim.measure)
        ends = [last] if last is not None else []
    best: Contradiction | None = None
    claimed = claim.claimed(m)
    for end in ends:
        w = store.window(db, claim.measure, end - timedelta(days=claim.days - 1), end)
        start: date | None = None
        if w.mean is None or w.days < MIN_DAYS:
            # Said before the records began ("seven hours or so" eleven days before the ring
            # came): a habit is checked against the first window after it, when that begins
            # within LEAD_DAYS of the day it was said.
            first = store.first_day(db, claim.measure, end)
            if first is None or (first - end).days > LEAD_DAYS:
                continue
            start = first
            w = store.window(db, claim.measure, start, start + timedelta(days=claim.days - 1))
            if w.mean is None or w.days < MIN_DAYS:
                continue
        value = per_unit(claim.measure, w.mean)
        gap = value - claimed if claim.above else abs(value - claimed)
        if gap < claim.threshold or (best is not None and gap <= best.gap):
            continue
        figure = figure_words(claim.measure, value, claim.days, end, w.days, start)
        lead = claim.said(m)
        best = Contradiction(f"you say {lead}; {figure}", w.rows, gap)
    return best


def _contest(db: Database, belief_id: str, statement: str, status: str, at: datetime) -> bool:
    found = contradiction(db, statement, store.claim_dates(db, belief_id))
    if found is None:
        return False
    if status != "contested":
        belief_store.update_belief(db, belief_id, at=at, status="contested")
    reason = f"by the records: {found.words}"
    if reason not in store.record_reasons(db, belief_id):
        belief_store.log_change(db, belief_id, "contested", reason=reason)
    already = store.linked(db, belief_id, "contradicts")
    for row in found.rows:
        if row not in already:
            belief_store.add_link(
                db,
                belief_id,
                "contradicts",
                row,
                "observation",
                quote=found.words,
                run_id=None,
                at=at,
            )
    return True
