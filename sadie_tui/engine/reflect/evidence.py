"""Policing a proposed belief's evidence, like a reply's citations.

Each piece of evidence names an excerpt handle and a quote. The handle must be one the batch
showed; the quote is looked up in that episode's shown text (whitespace squashed, case folded,
``reply.citations.note_span``) and kept as the note writes it: ``verbatim``. A quote that is
not there word for word stands only when it is close in meaning to one sentence of the note
(``reply.closeness.NEAR``, the bar a paraphrase citation meets), and then that sentence, the
note's own words, is what is kept (``verbatim`` false: the model paraphrased). Anything else
is dropped and counted, and so is a quote unrelated to its belief (no content word in common
and not close in meaning, ``RELATED_QUOTE``: a real sentence of a note about something else
backs nothing). Then the quote must support its belief, judged apart from the call that
proposed it by the rule a reply's citation meets (``backs``: the claim, not shared words): one
that says the opposite is dropped and counted, never kept as support. A belief left with no evidence is dropped and counted: so every quote stored
is in its episode word for word.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from ..errors import SadieError
from ..reply.backing import stems
from ..reply.citations import is_placeholder, normalise, note_span
from ..reply.claims import Note, asked, judge
from ..reply.closeness import NEAR, Encode
from ..reply.grounding import sentences_of
from .beliefs import KINDS
from .prompt import Shown

if TYPE_CHECKING:
    from ..jsonvalue import JSON

MIN_QUOTE_WORDS = 3
MAX_STATEMENT = 300
# A quote sharing no content word with its belief backs it only when it is at least this close
# to it in meaning (a reply's citation meets the like: "unrelated to the reply"). Chosen on a
# handful of pairs from a real 1.5B run, not measured: quotes about something else 0.02-0.16
# ("I do my best work in the mornings" / "Dr. Alves and I agreed that I only need to see her
# once a month": 0.11), real support 0.19-0.28 ("I ship slowly" / "Felt slower than it should
# have been": 0.22). A low floor: it drops only what is plainly about something else.
RELATED_QUOTE = 0.15
UNRELATED = "unrelated to the belief"


@dataclass(frozen=True)
class Quote:
    """A checked quote: the episode's own words."""

    episode_id: str
    quote: str
    verbatim: bool  # the model quoted it word for word


@dataclass(frozen=True)
class Candidate:
    """A proposed belief whose evidence survived policing."""

    statement: str
    kind: str
    confidence: float
    evidence: tuple[Quote, ...]


@dataclass
class Policed:
    """A batch's answer, policed: the beliefs kept, and what was dropped and why."""

    candidates: list[Candidate] = field(default_factory=list)
    proposed: int = 0  # beliefs the model proposed
    dropped: int = 0  # beliefs dropped: no evidence survived
    quotes_dropped: Counter[str] = field(default_factory=Counter)  # reason → count
    all_verbatim: int = 0  # proposed beliefs whose every quote was word for word
    unusable: str | None = None  # why the answer could not be read at all


def check_quote(quote: JSON, text: str, encode: Encode | None) -> Quote | str:
    """``quote`` checked against the episode ``text``: a ``Quote`` (with an empty episode id,
    filled in by the caller) or the reason it is dropped."""
    if not isinstance(quote, str) or is_placeholder(quote):
        return "placeholder"
    if len(normalise(quote).split()) < MIN_QUOTE_WORDS:
        return "too short"
    span = note_span(quote, [text])
    if span is not None:
        return Quote("", span, True)
    if encode is None:
        return "not in the note"
    near = nearest_sentence(quote, text, encode)
    if near is None:
        return "not in the note"
    return Quote("", near, False)


def nearest_sentence(quote: str, text: str, encode: Encode) -> str | None:
    """The sentence of ``text`` closest in meaning to ``quote``, if it is at least ``NEAR``."""
    sentences = sentences_of(text)
    if not sentences:
        return None
    try:
        vectors = np.asarray(encode([quote, *sentences]), dtype=np.float32)
    except SadieError:
        return None
    norms = np.linalg.norm(vectors, axis=1)
    norms[norms == 0] = 1.0
    unit = vectors / norms[:, None]
    scores = unit[1:] @ unit[0]
    best = int(np.argmax(scores))
    return sentences[best] if float(scores[best]) >= NEAR else None


# Stems too common to tie a quote to a belief ("every morning" / "everyone").
_GENERIC = frozenset(
    "every never alway still again today tonig more much some time thing reall just like after "
    "befor first last often other anoth even don't can't didn' won't i've i'll i'd i'm".split()
)


def related(statement: str, quote: str, encode: Encode | None) -> bool:
    """Whether ``quote`` can back ``statement``: a content word in common (cut to five
    letters, as a reply's citation is matched to its sentence; not a word as common as
    "every"), or close in meaning."""
    if (stems(statement) & stems(quote)) - _GENERIC:
        return True
    if encode is None:
        return False
    try:
        vectors = np.asarray(encode([statement, quote]), dtype=np.float32)
    except SadieError:
        return True  # no embedding model: the words alone cannot tell, so it stands
    norms = np.linalg.norm(vectors, axis=1)
    if not norms.all():
        return False
    return float(vectors[0] @ vectors[1] / (norms[0] * norms[1])) >= RELATED_QUOTE


# "too wired to sleep", "couldn't sleep", "don't like my manager": the words after are denied.
_DENIED = re.compile(
    r"\btoo\s+\w+\s+to\s+(\w+)|\b(?:unable|failed|impossible)\s+to\s+(\w+)"
    r"|\b(?:can't|cannot|couldn't|won't|didn't|don't|doesn't|never|not|no)((?:\s+\w+){1,3})",
    re.IGNORECASE,
)
# A statement that is itself negative ("I sleep badly") is not turned round by a quote that
# denies ("could not sleep"): only a plainly positive one is.
_NEGATIVE = re.compile(
    r"\b(?:not|no|never|can't|cannot|couldn't|don't|doesn't|won't|badly|poorly|hardly|barely|"
    r"rarely|struggle\w*|trouble|unable|less|little|too)\b|n't\b",
    re.IGNORECASE,
)
OPPOSITE = "says the opposite"


def _denied(text: str) -> set[str]:
    """The stems a text denies ("sleep" in "too wired to sleep")."""
    words = " ".join(g for m in _DENIED.finditer(text.replace("’", "'")) for g in m.groups() if g)
    return stems(words)


def backs(statement: str, quote: str, shown: Shown) -> str:
    """Why ``quote`` (from ``shown``) does not back ``statement``, or "" when it does:
    checked apart from the call that proposed it, by the rule a reply's citation meets
    (``reply.claims.judge``'s polarity: the claim, not shared words), with the belief as the
    sentence and no question; and a quote that denies what a positive belief asserts ("Home
    at five, too wired to sleep." for "… able to sleep at home …") says the opposite."""
    shared = (stems(statement) & stems(quote)) - _GENERIC
    if not _NEGATIVE.search(statement.replace("’", "'")) and shared & _denied(quote):
        return OPPOSITE
    note = Note(shown.episode_id, shown.date, shown.title, (shown.text,))
    verdict = judge(asked("", datetime.now()), statement, quote, note)
    # Only its polarity rule drops a quote: its content rule (a third of the belief's words
    # in the quoted sentence) would drop support in other words ("Felt slower than it should
    # have been" for "I ship slowly"), which ``related`` has already weighed.
    return OPPOSITE if not verdict.ok and "opposite" in verdict.reason else ""


def _confidence(value: JSON) -> float:
    if not isinstance(value, (int, float, str)):
        return 0.5
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.5
    if not math.isfinite(number):
        return 0.5
    if number > 1.0:  # a percentage
        number /= 100.0
    return round(min(0.95, max(0.05, number)), 2)


def _statement(value: JSON) -> str:
    text = " ".join(str(value or "").split())
    if len(text) > MAX_STATEMENT:
        text = text[:MAX_STATEMENT].rsplit(" ", 1)[0]
    return text


def police_answer(text: str, shown: Mapping[str, Shown], encode: Encode | None) -> Policed:
    """The model's JSON answer for one batch, read and policed."""
    out = Policed()
    try:
        value: JSON = json.loads(text)
    except ValueError:
        out.unusable = "the answer is not JSON"
        return out
    items = value.get("beliefs") if isinstance(value, dict) else value
    if not isinstance(items, list):
        out.unusable = "the answer has no list of beliefs"
        return out
    by_handle = {h.casefold(): s for h, s in shown.items()}
    for item in items:
        out.proposed += 1
        candidate, exact = _policed_item(item, by_handle, encode, out.quotes_dropped)
        if exact:
            out.all_verbatim += 1
        if candidate is None:
            out.dropped += 1
        else:
            out.candidates.append(candidate)
    return out


def _policed_item(
    item: JSON, by_handle: Mapping[str, Shown], encode: Encode | None, reasons: Counter[str]
) -> tuple[Candidate | None, bool]:
    """One proposed belief with its surviving evidence (None when none survives), and
    whether all of its quotes were word for word."""
    if not isinstance(item, dict):
        reasons["malformed"] += 1
        return None, False
    statement = _statement(item.get("statement"))
    evidence = item.get("evidence")
    if not statement or not isinstance(evidence, list) or not evidence:
        reasons["no evidence given" if statement else "no statement"] += 1
        return None, False
    kept: list[Quote] = []
    seen: set[tuple[str, str]] = set()
    exact = True
    for piece in evidence:
        if not isinstance(piece, dict):
            reasons["malformed"] += 1
            exact = False
            continue
        shown = by_handle.get(str(piece.get("e") or piece.get("episode") or "").strip().casefold())
        if shown is None:
            reasons["unknown excerpt"] += 1
            exact = False
            continue
        checked = check_quote(piece.get("quote"), shown.text, encode)
        if isinstance(checked, str):
            reasons[checked] += 1
            exact = False
            continue
        if not related(statement, checked.quote, encode):
            reasons[UNRELATED] += 1
            exact = False
            continue
        against = backs(statement, checked.quote, shown)
        if against:
            reasons[against] += 1
            exact = False
            continue
        exact = exact and checked.verbatim
        key = (shown.episode_id, normalise(checked.quote))
        if key in seen:
            continue
        seen.add(key)
        kept.append(Quote(shown.episode_id, checked.quote, checked.verbatim))
    if not kept:
        return None, False
    kind = str(item.get("kind") or "").strip().lower()
    return (
        Candidate(
            statement,
            kind if kind in KINDS else "fact",
            _confidence(item.get("confidence")),
            tuple(kept),
        ),
        exact,
    )
