"""Grounding that does not depend on the model obeying the format.

* **The citation pass** (:func:`citation_pass`): when a reply has no usable citations tail,
  one more, non-streaming request to the same model, with Ollama's structured outputs: the
  ``format`` is a JSON schema whose ``episode`` is an ``enum`` of exactly the episode ids the
  briefing showed, so the model cannot name another. The request repeats the briefing's
  messages byte for byte and adds the reply and the question at the end, so the model's
  prompt cache reuses the whole prefix. Its answer is policed like a tail.
* **Found by sadie** (:func:`match_sentences`): when the pass fails too, the reply's sentences
  are matched to the shown excerpts mechanically. The matches carry their own label and are
  never presented as the model's citations.

Pure apart from the reasoner call; no UI imports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .citations import PolicedCitations, normalise, police
from .errors import ModelError

if TYPE_CHECKING:
    from .prompt import Briefing, Excerpt
    from .reasoners.base import Reasoner

__all__ = [
    "CITE_REQUEST",
    "PassOutcome",
    "citation_pass",
    "citation_schema",
    "schema_ids",
    "sentences_of",
    "match_sentences",
    "pass_messages",
]

SUPPORT = ["verbatim", "paraphrase", "inference"]
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
MAX_PASS_CITATIONS = 6

CITE_REQUEST = (
    "Now say which excerpts above your reply rests on. For each part of your reply that comes "
    "from an excerpt, pick that excerpt's episode id and the sentence of it you relied on, and "
    "whether your reply says it verbatim, as a paraphrase, or as an inference. Answer only "
    'with JSON: {"citations": [...]}.'
)
MAX_SENTENCES = 16
MAX_QUOTE = 300


def sentences_of(text: str) -> list[str]:
    """The sentences of an excerpt that can be quoted (at least 12 characters, at most 300:
    a longer one is cut at a word)."""
    found: list[str] = []
    for sentence in _SENTENCE.split(text):
        sentence = sentence.strip()
        if len(sentence) < 12:
            continue
        if len(sentence) > MAX_QUOTE:
            sentence = sentence[:MAX_QUOTE].rsplit(" ", 1)[0]
        if sentence not in found:
            found.append(sentence)
    if not found and text.strip():
        found.append(text.strip()[:MAX_QUOTE])
    return found


def citation_schema(shown: Mapping[str, Sequence[str]], reply: str = "") -> dict[str, Any]:
    """The structured-output schema. Each citation is one of the shown episodes (its id a
    ``const``, so the ids allowed are exactly the shown ones) with a quote that is one of that
    excerpt's own sentences (an ``enum``), so the model can point but not misquote.

    Given the ``reply``, the sentences sharing most words with it come first, and so do their
    episodes: a small model under a grammar tends to take the first choices it is offered.
    What it may choose is the same either way."""
    stems = _stems(reply) if reply else set()

    def overlap(sentence: str) -> int:
        return len(stems & _stems(sentence))

    ranked: list[tuple[int, int, str, list[str]]] = []
    for position, (episode_id, texts) in enumerate(shown.items()):
        quotes: list[str] = []
        for text in texts:
            quotes.extend(q for q in sentences_of(text) if q not in quotes and _enum_safe(q))
        if stems:
            quotes.sort(key=overlap, reverse=True)  # stable: ties keep the excerpt's order
        best = overlap(quotes[0]) if quotes and stems else 0
        ranked.append((-best, position, episode_id, quotes))
    if stems:
        ranked.sort()
    branches = []
    for _, _, episode_id, quotes in ranked:
        # A sentence with a straight quote or a backslash breaks some servers' schema-to-grammar
        # conversion (llama.cpp's among them): such an excerpt's quote is free text instead.
        quote: dict[str, Any] = {"type": "string", "minLength": 1}
        if quotes:
            quote["enum"] = quotes[:MAX_SENTENCES]
        branches.append(
            {
                "type": "object",
                "properties": {
                    "episode": {"type": "string", "enum": [episode_id]},
                    "quote": quote,
                    "support": {"type": "string", "enum": SUPPORT},
                },
                "required": ["episode", "quote", "support"],
            }
        )
    return {
        "type": "object",
        "properties": {
            "citations": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_PASS_CITATIONS,
                "items": {"anyOf": branches},
            }
        },
        "required": ["citations"],
    }


def _enum_safe(text: str) -> bool:
    return '"' not in text and "\\" not in text and text.isprintable()


def schema_ids(schema: dict[str, Any]) -> list[str]:
    """The episode ids a citation schema allows."""
    items = schema["properties"]["citations"]["items"]
    return [e for branch in items["anyOf"] for e in branch["properties"]["episode"]["enum"]]


def pass_messages(briefing: Briefing, reply: str) -> list[dict[str, str]]:
    """The briefing's own messages, unchanged, then the reply and the request."""
    return [
        *briefing.messages,
        {"role": "assistant", "content": reply},
        {"role": "user", "content": CITE_REQUEST},
    ]


@dataclass(frozen=True)
class PassOutcome:
    policed: PolicedCitations | None  # None when the pass could not run or failed
    reason: str  # "" on success; otherwise why there are no pass citations
    ms: float = 0.0


async def citation_pass(
    reasoner: Reasoner, briefing: Briefing, reply: str, *, timeout: float
) -> PassOutcome:
    """Ask the model for its citations with the shown ids as an enum; police the answer."""
    import time

    if not briefing.shown:
        return PassOutcome(None, "no excerpt was shown")
    structured = getattr(reasoner, "structured", None)
    if structured is None:
        return PassOutcome(None, "this reasoner has no structured outputs")
    started = time.perf_counter()
    try:
        text = await structured(
            briefing, pass_messages(briefing, reply), citation_schema(briefing.shown, reply),
            timeout=timeout,
        )
    except ModelError as exc:
        return PassOutcome(None, exc.one_line(), (time.perf_counter() - started) * 1000)
    ms = (time.perf_counter() - started) * 1000
    try:
        value = json.loads(text)
    except ValueError:
        return PassOutcome(None, "the citation pass answered something that is not JSON", ms)
    items = value.get("citations") if isinstance(value, dict) else value
    if not isinstance(items, list):
        return PassOutcome(None, "the citation pass answered JSON without a citations list", ms)
    policed = related(police(json.dumps(items, ensure_ascii=False), briefing.shown), reply)
    if not policed.citations:
        return PassOutcome(policed, "the citation pass found no supporting excerpt", ms)
    return PassOutcome(policed, "", ms)


def _stems(text: str) -> set[str]:
    """Content words cut to five letters: a crude stem ("marathoner" meets "marathon")."""
    return {w[:5] for w in _content_words(text) if len(w) >= 3 or w.isdigit()}


def related(policed: PolicedCitations, reply: str) -> PolicedCitations:
    """Only pass citations whose quote shares a content word with the reply: the pass must
    name at least one excerpt, and one that has nothing in common with the reply cannot be
    what it rests on (so an answer about Everest never gets a run by the river as support)."""
    words = _stems(reply)
    kept, dropped = [], list(policed.dropped)
    for c in policed.citations:
        if words & _stems(c.quote):
            kept.append(c)
        else:
            dropped.append({"episode": c.episode_id, "quote": c.quote, "reason": "unrelated"})
    return PolicedCitations(tuple(kept), tuple(dropped), policed.parse_error)


# -- found by sadie ------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_STOP = frozenset(
    "a an and are as at be been but by can could did do does for from had has have he her his "
    "how i if in into is it its me my of on or our she so that the their them then there they "
    "this to was we were what when where which who why will with would you your about after "
    "again all am any before just very really also not no yes".split()
)
MIN_SHARED = 3
MIN_OVERLAP = 0.5


def _content_words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text) if w.casefold() not in _STOP}


@dataclass(frozen=True)
class Match:
    episode_id: str
    quote: str  # the excerpt's own sentence
    verbatim: bool  # the reply's sentence is in the excerpt word for word


def match_sentences(
    reply: str, excerpts: Sequence[Excerpt], limit: int = 4
) -> list[Match]:
    """For each sentence of the reply, the excerpt sentence sharing most of its words.

    A match needs at least ``MIN_SHARED`` content words and half of the reply sentence's. The
    quote is always the excerpt's own sentence, so it is really there; ``verbatim`` is True
    only when the reply's sentence itself is found in the excerpt.
    """
    candidates: list[tuple[str, str, set[str], str]] = []
    for e in excerpts:
        whole = normalise(e.text)
        for sentence in sentences_of(e.text):
            candidates.append((e.episode_id, sentence, _content_words(sentence), whole))
    found: list[Match] = []
    seen: set[tuple[str, str]] = set()
    for sentence in _SENTENCE.split(reply):
        sentence = sentence.strip()
        words = _content_words(sentence)
        if len(words) < MIN_SHARED:
            continue
        best: tuple[float, str, str, str] | None = None
        for episode, quote, theirs, whole in candidates:
            shared = len(words & theirs)
            if shared < MIN_SHARED or shared / len(words) < MIN_OVERLAP:
                continue
            score = shared / len(words) + shared / (len(theirs) or 1) * 0.1
            if best is None or score > best[0]:
                best = (score, episode, quote, whole)
        if best is None:
            continue
        _, episode, quote, whole = best
        if (episode, quote) in seen:
            continue
        seen.add((episode, quote))
        core = normalise(sentence.strip(" \"'“”*_-"))
        found.append(Match(episode, quote, bool(core) and core in whole))
        if len(found) >= limit:
            break
    return found


# -- one reply, grounded -------------------------------------------------------------------


@dataclass
class Grounded:
    """A finished reply's grounding: its citations, where they came from, and its text."""

    text: str  # the reply, less a citation list it wrote without a marker
    policed: PolicedCitations
    tail: str  # ok | empty | unusable | missing (see events.CitationsEvent)
    repaired: bool = False
    pass_reason: str = ""  # why the citation pass gave nothing ("" when it did or did not run)
    pass_ms: float = 0.0
    found: list[Match] | None = None
    list_removed: bool = False


def tail_state(tail: str, diverted: bool, policed: PolicedCitations) -> str:
    """What the model's own tail amounted to (see ``events.CitationsEvent``)."""
    from .citations import parse_tail

    if not diverted and not tail.strip():
        return "missing"
    if policed.citations:
        return "ok"
    items, error = parse_tail(tail)
    if not items and error is None:
        return "empty"
    return "unusable"


def own_citations(text: str, tail: str, diverted: bool, shown: Any) -> Grounded:
    """The reply's own citations: its tail, or a JSON list it ended with and no marker."""
    list_removed = False
    if not diverted:
        from .citations import split_trailing_list

        split = split_trailing_list(text)
        if split is not None:
            text, tail, diverted, list_removed = split[0], split[1], True, True
    policed = police(tail, shown)
    return Grounded(text, policed, tail_state(tail, diverted, policed), list_removed=list_removed)


def needs_pass(reasoner: Reasoner, grounded: Grounded) -> bool:
    """The citation pass runs when the model's own tail gave nothing and a model is there."""
    return grounded.tail != "ok" and not getattr(reasoner, "offline", True) and bool(
        grounded.text.strip()
    )


async def repair(
    reasoner: Reasoner, briefing: Briefing, grounded: Grounded, *, timeout: float
) -> None:
    """Run the citation pass; its citations stand in for the tail's (what the tail dropped
    is kept in ``dropped``), or ``pass_reason`` says why there are none."""
    outcome = await citation_pass(reasoner, briefing, grounded.text, timeout=timeout)
    grounded.pass_ms = outcome.ms
    if outcome.policed is not None and outcome.policed.citations:
        grounded.policed = PolicedCitations(
            outcome.policed.citations,
            grounded.policed.dropped + outcome.policed.dropped,
            grounded.policed.parse_error,
        )
        grounded.repaired = True
    else:
        grounded.pass_reason = outcome.reason
        if outcome.policed is not None and outcome.policed.dropped:
            grounded.policed = PolicedCitations(
                grounded.policed.citations,
                grounded.policed.dropped + outcome.policed.dropped,
                grounded.policed.parse_error,
            )


def settle(briefing: Briefing, grounded: Grounded) -> None:
    """With no citation left, sadie's own sentence matches (labelled as such)."""
    if not grounded.policed.citations:
        grounded.found = match_sentences(grounded.text, briefing.excerpts)
