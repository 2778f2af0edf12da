"""What a small model reads: the few passages that answer what was asked.

Retrieval picks the persona's chunks (10 for the analyst, 12 for the friend, 20 for the
skeptic: the spec's lenses, kept in telemetry and in what the offline answer and "found by
sadie" draw on). A 1.5B model reading all of them answered unseen questions right half as
often as from the best four alone, at three times the tokens (issue 33), so the briefing shows
``Fit.passages`` of them, chosen by what the question names:

* its content words, weighted by how few of the retrieved chunks hold them (a name over a
  word every note has), in the chunk's best sentence;
* a chunk about them (a question word in its title, or mentioned again and again);
* the people the question names, in the chunk or its title;
* the asked time: a chunk outside it comes last;
* retrieval's own rank, as a tie-breaker;
* asked for a figure ("how many", "how much", "what was my … split"), a sentence giving a
  number or amount the question does not hold, beside a word of the question (``FIGURE``).

A chunk longer than ``Fit.chars`` is cut around its answer-bearing sentence (the one that
holds most of the question's weighted words, and the figure asked for), with its neighbours
while they fit, and "…" where it was cut. The chosen passages keep retrieval's order (or date
order, newest or oldest first, for "the last / first time", as the briefing's header says).
Citation policing still grades a quote against the whole chunk.

Side blocks are shown only when they bear on the question (``bears_on``); the soul summary is
reduced to who the person is (its first sentence) unless the question is about the person
themself (``about_self``).

Pure: no I/O and no UI imports.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .prompt import Excerpt, strip_front_matter
from .reply.backing import SENTENCE_BREAK
from .retrieval.figures import HOW_FIGURE, asks_figure, figures, money_words
from .retrieval.keyword.tokens import query_tokens, tokenize

__all__ = ["Fit", "about_self", "bears_on", "choose", "cut", "who"]

_FILLER = frozenset(
    tokenize(
        "tell know think said say feel felt remember anything something thing things about "
        "did happen happened ever really just also get got go went notes note"
    )
)
# Weights of a chunk's score beside its best sentence's weighted coverage (0..1).
ABOUT_TITLE = 0.3
ABOUT_MENTION = 0.05
PERSON = 0.4
RANK_PRIOR = 0.3  # the first-ranked chunk's bonus, falling off with rank
OUTSIDE = 1.0  # a chunk outside the asked time
ON_TOPIC = 0.6  # for "the last / first time": the share of the best score a note on topic has
ELLIPSIS = "…"


@dataclass(frozen=True)
class Fit:
    """How much of the retrieved memory a model reads: ``passages`` chunks, each at most
    ``chars`` characters (cut around what answers). 0 passages: every retrieved chunk, whole
    up to the 1600-character cap (the briefing before issue 33)."""

    passages: int = 4
    chars: int = 700


def _terms(text: str) -> set[str]:
    return {t for t in tokenize(text) if t not in _FILLER}


# "how long" asks for a length: not a word of the topic ("how well" asks for no figure).
_HOW = re.compile(rf"{HOW_FIGURE}|\bhow\s+well\b", re.IGNORECASE)
FIGURE = 0.25  # a run of sentences giving a figure the question does not, asked for one


def question_terms(question: str) -> set[str]:
    """The question's content words ("how long" asks for a length: "long" is not its
    topic)."""
    text = _HOW.sub(" ", question)
    return {t for t in query_tokens(text, forms=True) if t not in _FILLER}


def _weights(wanted: set[str], excerpts: Sequence[Excerpt]) -> dict[str, float]:
    held = [_terms(e.text + " " + e.title) for e in excerpts]
    n = len(excerpts)
    return {t: 1.0 + math.log((1 + n) / (1 + sum(t in h for h in held))) for t in wanted}


def _sentences(text: str) -> list[str]:
    return [p for p in (s.strip() for s in SENTENCE_BREAK.split(text)) if p]


def _cover(sentence: str, wanted: set[str], weight: dict[str, float]) -> float:
    total = sum(weight.values()) or 1.0
    return sum(weight[t] for t in wanted & _terms(sentence)) / total


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE) is not None


def _best_window(
    parts: Sequence[str],
    title: str,
    wanted: set[str],
    weight: dict[str, float],
    chars: int,
    figure: set[str] | None = None,
) -> tuple[float, int, int]:
    """(coverage, first, last) of the run of sentences, at most ``chars`` long (one sentence
    at least), whose words together with the title's cover most of the question's weighted
    words; the earliest run wins a tie. ``figure``: the question asks for a figure and holds
    these: a run with a sentence giving another beside a word of the question gains
    ``FIGURE``. A sentence giving an amount of money holds the money words it answers
    ("spend", "cost", "paid": ``money_words``)."""
    titled = _terms(title)
    total = sum(weight.values()) or 1.0
    held = [_terms(p) | money_words(p) for p in parts]
    gives = [
        figure is not None and bool(figures(p) - figure) and bool(wanted & h)
        for p, h in zip(parts, held, strict=True)
    ]
    best = (-1.0, 0, 0)
    for lo in range(len(parts)):
        found = titled | held[lo]
        size = len(parts[lo])
        hi = lo
        while hi + 1 < len(parts) and size + 1 + len(parts[hi + 1]) <= chars:
            hi += 1
            size += 1 + len(parts[hi])
            found |= held[hi]
        cover = sum(weight[t] for t in wanted & found) / total
        cover += FIGURE * any(gives[lo : hi + 1])
        if cover > best[0]:
            best = (cover, lo, hi)
    return best


def score(
    excerpt: Excerpt,
    rank: int,
    wanted: set[str],
    weight: dict[str, float],
    people: Sequence[str] = (),
    chars: int = 700,
    figure: set[str] | None = None,
) -> float:
    """How much an excerpt answers the question (module docstring)."""
    parts = _sentences(excerpt.text) or [excerpt.text]
    best = _best_window(parts, excerpt.title, wanted, weight, chars, figure)[0]
    titled = bool(wanted & _terms(excerpt.title))
    mentions = sum(1 for t in tokenize(excerpt.text) if t in wanted)
    about = ABOUT_TITLE * titled + ABOUT_MENTION * min(max(mentions - 1, 0), 6)
    named = sum(PERSON for p in people if _mentions(f"{excerpt.title}\n{excerpt.text}", p))
    prior = RANK_PRIOR / (1 + rank)
    return best + about + named + prior - (OUTSIDE if excerpt.outside else 0.0)


def cut(
    excerpt: Excerpt,
    wanted: set[str],
    weight: dict[str, float],
    chars: int,
    figure: set[str] | None = None,
) -> Excerpt:
    """``excerpt`` with its text cut to at most ``chars`` characters: the run of sentences
    that answers most (``_best_window``), "…" where it was cut (unchanged when it already
    fits); ``whole`` keeps the chunk."""
    text = excerpt.text.strip()
    if chars <= 0 or len(text) <= chars:
        return excerpt
    parts = _sentences(text)
    if not parts:
        return excerpt
    _, lo, hi = _best_window(parts, excerpt.title, wanted, weight, chars, figure)
    body = " ".join(parts[lo : hi + 1])
    if len(body) > chars:  # one sentence longer than the whole allowance
        body = body[:chars].rsplit(" ", 1)[0]
        return replace(excerpt, text=_marked(body, lo > 0, True), whole=excerpt.whole or text)
    return replace(
        excerpt, text=_marked(body, lo > 0, hi < len(parts) - 1), whole=excerpt.whole or text
    )


def _marked(body: str, before: bool, after: bool) -> str:
    return f"{ELLIPSIS} " * before + body + f" {ELLIPSIS}" * after


def choose(
    excerpts: Sequence[Excerpt],
    question: str,
    fit: Fit,
    people: Sequence[str] = (),
    *,
    dated: str = "",
) -> list[Excerpt]:
    """The ``fit.passages`` excerpts that answer ``question`` best, in their given order,
    each cut to ``fit.chars`` around what answers (module docstring). Chunks of one episode
    count once: its best chunk stands for it. ``dated`` ("newest" | "oldest"): the question asks
    for the last (or first) time: the first excerpts on its topic (scoring at least
    ``ON_TOPIC`` of the best) in their given order are chosen, and shown by date that way, as
    the briefing's header says (notes outside the asked time last)."""
    if fit.passages <= 0 or not excerpts:
        return list(excerpts)
    wanted = question_terms(question)
    weight = _weights(wanted, excerpts)
    figure = figures(question) if asks_figure(question) else None
    scores = [
        score(e, i, wanted, weight, people, fit.chars, figure) for i, e in enumerate(excerpts)
    ]
    ranked = sorted(range(len(excerpts)), key=lambda i: -scores[i])
    if dated:
        top = max(scores)
        on_topic = [i for i in range(len(excerpts)) if scores[i] >= ON_TOPIC * top]
        ranked = on_topic + [i for i in ranked if i not in on_topic]
    picked: list[int] = []
    episodes: set[str] = set()
    for i in ranked:
        key = excerpts[i].episode_id.lower()
        if key in episodes:
            continue
        episodes.add(key)
        picked.append(i)
        if len(picked) >= fit.passages:
            break
    if dated:
        # Retrieval puts the relevant notes in date order and the rest after them in rank
        # order; a small model reads the first excerpt as the answer to "when did I first",
        # so what it is shown is in the order its header names (2026-04-06 came before
        # 2026-03-20's "first iron tablet", measured).
        picked.sort(key=lambda i: excerpts[i].date, reverse=dated == "newest")
        picked.sort(key=lambda i: bool(excerpts[i].outside))
    else:
        picked.sort()
    return [cut(excerpts[i], wanted, weight, fit.chars, figure) for i in picked]


# -- side blocks and the soul summary ------------------------------------------------------

# Words of a question about the person themself: their soul summary is what answers it.
_SELF = re.compile(
    r"\b(?:who am i|about me|about myself|what am i like|what kind of person|my (?:values|"
    r"personality|strengths|weaknesses|patterns|habits)|describe me|how would you describe|"
    r"what do i (?:care|value)|what matters to me|my life)\b",
    re.IGNORECASE,
)
BEARS = 0.5  # the share of the question's words a side line must hold to be shown


def about_self(question: str) -> bool:
    return bool(_SELF.search(question))


def bears_on(text: str, question: str, share: float = BEARS) -> bool:
    """A side line (a belief, an observation) holds at least ``share`` of the question's
    content words."""
    wanted = question_terms(question)
    if not wanted:
        return False
    return len(wanted & _terms(text)) / len(wanted) >= share


def who(soul: str) -> str:
    """Who the person is: the soul summary's first sentence (its opening line when that is
    short)."""
    body = strip_front_matter(soul).strip()
    if not body:
        return ""
    first = _sentences(body.split("\n\n", 1)[0])
    return first[0] if first else body[:200]
