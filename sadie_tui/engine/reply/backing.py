"""What each citation backs, and what the reply can show for itself.

* **Backing** (:func:`back`): every policed citation is attached to the reply sentence it
  supports — the one sharing most content words with its quote, or holding a detail the
  quote holds. A citation that shares no content word with any sentence of the reply and
  holds none of its details is dropped ("unrelated to the reply"): a verbatim quote about
  the rain in Kyoto is not support for "you see Carla once a week". For each citation, the
  details of its sentence that the cited excerpt does not hold are listed (``unbacked``), so
  a verbatim quote is never shown as support for a wrong name or number beside it.
* **Evidence** (:func:`evidence`): what sadie finds mechanically in the shown excerpts — a
  number, date, time, amount or name of the reply that an excerpt holds (and the person's
  question does not: repeating the question proves nothing), or a sentence of the reply
  matched to an excerpt's. It counts like a citation when a turn decides to abstain, and it
  is how a revision is judged against its draft.
* **Declining** (:func:`declines`): a reply that apologises, declines or asks for more
  context. It never replaces a draft that had support.

Pure: no I/O and no UI imports.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .citations import Citation, PolicedCitations
from .unsupported import SourceIndex, Span, find_details

__all__ = [
    "Backed",
    "Evidence",
    "back",
    "declines",
    "evidence",
    "sentence_spans",
    "stems",
]

# Where one sentence of a reply or an excerpt ends and the next begins.
SENTENCE_BREAK = re.compile(r"(?<=[.!?…])\s+|\n+")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_STOP = frozenset(
    "a an and are as at be been but by can could did do does for from had has have he her his "
    "how i if in into is it its me my of on or our she so that the their them then there they "
    "this to was we were what when where which who why will with would you your about after "
    "again all am any before just very really also not no yes i'm you're it's don't".split()
)


def content_words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text) if w.casefold() not in _STOP}


def stems(text: str) -> set[str]:
    """Content words cut to five letters: a crude stem ("marathoner" meets "marathon")."""
    return {w[:5] for w in content_words(text) if len(w) >= 3 or w.isdigit()}


# Words quoted across sentence ends ("All ok. Both sleeping.") stay one sentence while their
# closing mark comes within this many characters on the same line.
QUOTED_REACH = 240


def _inside_quote(text: str, start: int, at: int) -> bool:
    """Whether ``at`` falls inside words quoted in ``text[start:at]`` that close later on
    the same line (within ``QUOTED_REACH``)."""
    piece = text[start:at]
    straight = piece.count('"') % 2 == 1
    curly = piece.count("“") > piece.count("”")
    if not (straight or curly):
        return False
    ahead = text[at : at + QUOTED_REACH].split("\n", 1)[0]
    return ('"' in ahead) if straight else ("”" in ahead)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text`` (no surrounding whitespace); words
    quoted across sentence ends are one sentence with the words around them ('He posted "All
    ok. Both sleeping." at 23:58.')."""
    spans: list[tuple[int, int]] = []
    at = 0
    for m in [*SENTENCE_BREAK.finditer(text), None]:
        if m is not None and "\n" not in m.group(0) and _inside_quote(text, at, m.start()):
            continue
        end = m.start() if m is not None else len(text)
        piece = text[at:end]
        lead = len(piece) - len(piece.lstrip())
        if piece.strip():
            spans.append((at + lead, at + len(piece.rstrip())))
        if m is not None:
            at = m.end()
    return spans


# -- backing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Backed:
    """Citations attached to the sentences they back (``sentences[i]`` is the ``(start,
    end)`` in the reply of ``policed.citations[i]``'s sentence) and the details of that
    sentence its excerpt does not hold (``unbacked[i]``)."""

    policed: PolicedCitations
    sentences: tuple[tuple[int, int], ...]
    unbacked: tuple[tuple[str, ...], ...]


def _header_texts(episode_id: str, headers: Mapping[str, Sequence[str]]) -> list[str]:
    return list(headers.get(episode_id.lower(), ()))


def back(
    policed: PolicedCitations,
    reply: str,
    shown: Mapping[str, Sequence[str]],
    *,
    headers: Mapping[str, Sequence[str]] | None = None,
    message: str = "",
) -> Backed:
    """Attach each citation to the reply sentence it backs; drop the ones that back none.

    ``shown``: the excerpt texts by episode id (the briefing's); ``headers``: their
    provenance lines (dates and titles count as the excerpt's); ``message``: the person's own
    message, which a sentence's details may also come from."""
    headers = headers or {}
    spans = sentence_spans(reply)
    details = find_details(reply)
    by_sentence: list[list[Span]] = [
        [d for d in details if start <= d.start and d.end <= end] for start, end in spans
    ]
    sentence_stems = [stems(reply[start:end]) for start, end in spans]
    kept: list[Citation] = []
    at: list[tuple[int, int]] = []
    missing: list[tuple[str, ...]] = []
    dropped = list(policed.dropped)
    folded_reply = reply.casefold()
    for c in policed.citations:
        quote_index = SourceIndex([c.quote])
        quote_stems = stems(c.quote)
        best, best_score = -1, 0
        # A reply that quotes it (an offline answer does): the sentence where the quote begins.
        quoted = " ".join(c.quote.split()).casefold()
        where = folded_reply.find(quoted) if quoted else -1
        if where >= 0:
            best = next((i for i, (a, b) in enumerate(spans) if a <= where < b), -1)
            best_score = 1 if best >= 0 else 0
        for i, own in enumerate(sentence_stems):
            if best_score and where >= 0:
                break
            score = len(own & quote_stems) + 2 * sum(
                1 for d in by_sentence[i] if quote_index.supports(d)
            )
            if score > best_score:
                best, best_score = i, score
        if best < 0:
            dropped.append(
                {"episode": c.episode_id, "quote": c.quote, "reason": "unrelated to the reply"}
            )
            continue
        sources = [*shown.get(c.episode_id.lower(), ()), *_header_texts(c.episode_id, headers)]
        excerpt = SourceIndex([*sources, message])
        kept.append(c)
        at.append(spans[best])
        missing.append(tuple(d.text for d in by_sentence[best] if not excerpt.supports(d)))
    return Backed(
        PolicedCitations(tuple(kept), tuple(dropped), policed.parse_error),
        tuple(at),
        tuple(missing),
    )


def narrow_sources(
    backed: Backed,
    shown: Mapping[str, Sequence[str]],
    headers: Mapping[str, Sequence[str]],
    message: str,
) -> list[tuple[int, int, list[str]]]:
    """For each backed sentence, the texts its details may come from: its citations'
    excerpts (with their provenance lines) and the person's message."""
    grouped: dict[tuple[int, int], list[str]] = {}
    for c, span in zip(backed.policed.citations, backed.sentences, strict=True):
        texts = grouped.setdefault(span, [message])
        texts.extend(shown.get(c.episode_id.lower(), ()))
        texts.extend(_header_texts(c.episode_id, headers))
    return [(start, end, texts) for (start, end), texts in grouped.items()]


def moved(
    narrow: Sequence[tuple[int, int, list[str]]], before: str, after: str
) -> list[tuple[int, int, list[str]]]:
    """The backed sentences' ranges in ``after`` (a policy may rewrite the reply): a sentence
    no longer found word for word has no narrow sources."""
    if before == after:
        return list(narrow)
    found = []
    for start, end, texts in narrow:
        at = after.find(before[start:end])
        if at >= 0:
            found.append((at, at + end - start, texts))
    return found


# -- evidence -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """What the reply shows for itself in the shown excerpts."""

    details: tuple[str, ...]  # details of the reply an excerpt holds (not from the question)
    unsupported: int  # details no source holds
    sentences: int  # reply sentences matched to an excerpt sentence

    @property
    def support(self) -> int:
        return len(self.details) + self.sentences

    def better_than(self, other: Evidence) -> bool:
        """Fewer unsupported details, and no less support."""
        return self.unsupported < other.unsupported and self.support >= other.support


def evidence(
    reply: str, excerpts: Sequence[str], question: str, *, unsupported_count: int, sentences: int
) -> Evidence:
    """The reply's details that an excerpt holds and the question does not."""
    shown = SourceIndex(excerpts)
    asked = SourceIndex([question])
    held = tuple(d.text for d in find_details(reply) if shown.supports(d) and not asked.supports(d))
    return Evidence(held, unsupported_count, sentences)


# -- declining ----------------------------------------------------------------------------

_DECLINES = re.compile(
    r"\b(?:i'?m sorry|i am sorry|i apologi[sz]e|unfortunately|i (?:cannot|can'?t|am unable to|"
    r"'m unable to|do not|don'?t) (?:provide|answer|help|find|determine|say|tell|access|know)|"
    r"(?:more|additional|further) (?:context|information|details)|"
    r"(?:does not|doesn'?t|do not|don'?t) (?:contain|hold|mention|include|say)|"
    r"not (?:enough|sufficient) (?:information|context)|no (?:information|mention) (?:about|of))",
    re.IGNORECASE,
)


def declines(text: str) -> bool:
    """A reply that apologises, declines, or asks for more context."""
    return bool(_DECLINES.search(text.replace("’", "'")))
