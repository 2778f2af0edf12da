"""The reply checked, in one room: the one door the turns go through to everything between
the model's tokens and what is kept.

* **Reading** (``Filtered``, from ``filtered``): while the model writes, its pieces go through the stream filter
  (thinking dropped, the citations tail set aside) and the reply guard (echoed headers and
  instructions hidden, loops cut); ``Filtered.read`` then takes out what the finished reply
  wrote back of its instructions in other words, and polices its own citations.
* **Checking**: ``run_pass``, the citation pass when the tail gave nothing (``Checking``
  events while it runs); then ``settled``: each citation attached to the sentence it backs,
  judged against what that sentence claims (``claims``), shown with its note's title and
  date, and sadie's own sentence matches beside them (``Checked``).
* **Keeping** (``Checked.kept``): the reply as kept — answered from its quote when it said the
  notes do not say while citing the sentence that does, or led by the doubt when what it
  cites does not establish it — with its unsupported details and its grounding score
  (``score``).
  ``Checked.weighed`` is the evidence an ask weighs a revision by, and ``answer_report`` an
  ask's grounding report.

The turns orchestrate these steps and emit the events; nothing here writes to the memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..events import Checking, CitationView
from .backing import Evidence, declines, evidence, moved, narrow_sources
from .citations import PolicedCitations
from .closeness import Encode
from .filtered import Filtered
from .grounding import Grounded, match_sentences, needs_pass, repair, settle
from .score import grounding_report, grounding_score
from .unsupported import Span, find_details, unsupported_within

if TYPE_CHECKING:
    from ..jsonvalue import JSONObject
    from ..prompt import Attached, Briefing
    from ..reasoners.base import Reasoner
    from ..retrieval import RetrievalResult

# The room's door: the turns import these, and nothing else of ``reply/`` (a contract in
# pyproject.toml). ``Grounded``, ``Span`` and ``Encode`` are the types they hold.
__all__ = [
    "NO_CITATIONS",
    "NO_EVIDENCE",
    "NO_SOURCES",
    "Checked",
    "Encode",
    "Filtered",
    "Grounded",
    "Kept",
    "Sources",
    "Span",
    "Titles",
    "Weighed",
    "answer_report",
    "details_of",
    "grounding_report",
    "grounding_score",
    "run_pass",
    "settled",
    "titles_of",
]

# How often a running citation pass reports its seconds.
CHECKING_EVERY = 1.0

# The title and date of each episode a reply may cite, by lower-cased id.
Titles = Mapping[str, tuple[str, str]]


def titles_of(result: RetrievalResult, attached: Sequence[Attached] = ()) -> Titles:
    """The title and date of every episode retrieval found or a source chip holds."""
    titles = {
        c.episode_id.lower(): (c.title, c.occurred_at.strftime("%Y-%m-%d")) for c in result.chunks
    }
    for item in attached:
        if item.excerpt is not None:
            key = item.excerpt.episode_id.lower()
            titles.setdefault(key, (item.excerpt.title, item.excerpt.date))
    return titles


@dataclass(frozen=True)
class Sources:
    """A settled reply's citations as screens show them, and sadie's own sentence matches."""

    views: tuple[CitationView, ...]
    found: tuple[CitationView, ...]


NO_SOURCES = Sources((), ())


@dataclass(frozen=True)
class Kept:
    """The reply as it is kept: its text, the details no source holds, its grounding score,
    and whether it was answered from its own quote or led by the doubt."""

    text: str
    spans: tuple[Span, ...]
    score: float
    answered: bool = False
    doubted: bool = False


@dataclass(frozen=True)
class Weighed:
    """A settled reply's unsupported details and the evidence sadie finds for it in the
    shown excerpts: what an ask abstains by and weighs a revision against its draft by."""

    grounded: Grounded
    spans: tuple[Span, ...]
    evidence: Evidence

    def better_than(self, draft: Weighed) -> bool:
        """Whether this revision replaces ``draft``: better supported (fewer unsupported
        details, no less support), and never a refusal in place of a draft that had support."""
        draft_support = draft.evidence.support + len(draft.grounded.policed.citations)
        if declines(self.grounded.text) and draft_support:
            return False
        return self.evidence.better_than(draft.evidence)


NO_EVIDENCE = Evidence((), 0, 0)
# An answer that cited nothing (an ask on an empty memory).
NO_CITATIONS = PolicedCitations((), (), None)


@dataclass(frozen=True)
class Checked:
    """A reply whose citations are settled, and what the screens show of them."""

    grounded: Grounded
    briefing: Briefing
    sources: Sources

    def kept(
        self, text: str | None = None, *, rewritten: bool = False, checks: bool = True
    ) -> Kept:
        """The reply as kept. ``text``: a policy's rewrite (``rewritten``) instead of the
        reply's own. It is answered from the quote it cited when it said the notes do not
        say (never a rewrite), or led by the doubt when what it cites does not establish
        its answer; its details are checked. ``checks`` false — a blocked reply, an offline
        answer (sadie's own framing around verbatim quotes) — neither, and no doubt kept."""
        g = self.grounded
        text = g.text if text is None else text
        answered = doubted = False
        if checks and g.answered and not rewritten:
            text, g.doubt, answered = g.answered, "", True
        elif checks and g.doubt:
            text, doubted = f"{g.doubt}\n\n{text}", True
        elif not checks:
            g.doubt = ""
        spans = tuple(details_of(text, self.briefing, g)) if checks else ()
        score = grounding_score(g.policed, len(spans), len(find_details(text)), doubt=bool(g.doubt))
        return Kept(text, spans, score, answered, doubted)

    def weighed(self, question: str, *, offline: bool) -> Weighed:
        """The reply's unsupported details and the evidence sadie finds for it (none for an
        offline answer: its quotes are verbatim by construction)."""
        g, briefing = self.grounded, self.briefing
        if offline:
            return Weighed(g, (), NO_EVIDENCE)
        spans = details_of(g.text, briefing, g)
        texts = [e.render() for e in [*briefing.excerpts, *briefing.attached_excerpts()]]
        weight = evidence(
            g.text,
            texts,
            question,
            unsupported_count=len(spans),
            sentences=len(match_sentences(g.text, briefing.excerpts)),
        )
        return Weighed(g, tuple(spans), weight)


async def run_pass(
    grounded: Grounded, briefing: Briefing, reasoner: Reasoner, *, cap: float
) -> AsyncGenerator[Checking, None]:
    """The citation pass, when the model's own tail gave nothing and a model is there:
    ``Checking`` as it starts, then its whole seconds every ``CHECKING_EVERY`` while it runs
    (its budget comes from the model's measured speed; ``cap`` is the most it may take). Its
    citations stand in for the tail's on ``grounded``. Closing the iterator early cancels
    the pass."""
    if not needs_pass(reasoner, grounded):
        return
    yield Checking()
    started = time.perf_counter()
    task = asyncio.ensure_future(repair(reasoner, briefing, grounded, cap=cap))
    try:
        while not (await asyncio.wait({task}, timeout=CHECKING_EVERY))[0]:
            yield Checking(elapsed=round(time.perf_counter() - started))
        task.result()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def settled(
    grounded: Grounded, briefing: Briefing, titles: Titles, encode: Encode | None = None
) -> Checked:
    """Each citation attached to the sentence it backs, a paraphrase close to none of its
    note's sentences dropped (``grounding.settle``), then shown with its note's title and
    date (blocking: the embedding model may run). Without the pass: what a stopped reply
    keeps, and an offline answer."""
    settle(briefing, grounded, encode)
    sources = Sources(_views(grounded, titles), _found(grounded, titles))
    return Checked(grounded, briefing, sources)


def _views(grounded: Grounded, titles: Titles) -> tuple[CitationView, ...]:
    """The validated citations with the title and date of the episode each one names, the
    sentence each backs and that sentence's details the cited note does not hold."""
    backed = grounded.backed
    views = []
    for n, c in enumerate(grounded.policed.citations):
        backs, unbacked = "", tuple[str, ...]()
        if backed is not None and n < len(backed.sentences):
            start, end = backed.sentences[n]
            backs, unbacked = grounded.text[start:end], backed.unbacked[n]
        views.append(
            CitationView(
                c.episode_id,
                c.quote,
                c.support,
                c.claimed,
                *titles.get(c.episode_id.lower(), ("", "")),
                backs=backs,
                unbacked=unbacked,
                doubt=c.doubt,
            )
        )
    return tuple(views)


def _found(grounded: Grounded, titles: Titles) -> tuple[CitationView, ...]:
    """sadie's own sentence matches, labelled ``found by sadie`` (never the model's)."""
    return tuple(
        CitationView(
            m.episode_id,
            m.quote,
            "verbatim" if m.verbatim else "paraphrase",
            "",
            *titles.get(m.episode_id.lower(), ("", "")),
            origin="sadie",
        )
        for m in grounded.found or ()
    )


def details_of(text: str, briefing: Briefing, grounded: Grounded) -> list[Span]:
    """``text``'s unsupported details: in a sentence a citation backs, a detail must be in
    that citation's note or the person's message; elsewhere, anywhere in the briefing
    (everything the model was told: excerpts with their headers, beliefs, observations,
    chips, the soul summary, recent messages and the person's own message)."""
    narrow: list[tuple[int, int, list[str]]] = []
    if grounded.backed is not None:
        narrow = moved(
            narrow_sources(grounded.backed, briefing.shown, briefing.headers(), briefing.own_words),
            grounded.text,
            text,
        )
    return unsupported_within(text, [m["content"] for m in briefing.messages], narrow)


def answer_report(
    weighed: Weighed, text: str, briefing: Briefing, *, offline: bool, cut: str | None
) -> JSONObject:
    """An ask's grounding report of ``text`` (the answer less its opinion, whose details are
    checked again when the opinion was split off)."""
    grounded = weighed.grounded
    spans: Sequence[Span] = weighed.spans
    if text != grounded.text:
        spans = () if offline else details_of(text, briefing, grounded)
    doubt = "" if offline else grounded.doubt
    report = grounding_report(grounded.policed, spans, len(find_details(text)), doubt)
    report.update(
        repaired=grounded.repaired,
        tail=grounded.tail,
        citation_pass=grounded.pass_note,
        cut=cut,
        evidence=[detail for detail in weighed.evidence.details],
        sentences_matched=weighed.evidence.sentences,
    )
    return report
