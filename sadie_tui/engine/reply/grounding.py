"""Grounding that does not depend on the model obeying the format.

* **The citation pass** (:func:`citation_pass`): when a reply has no usable citations tail,
  one more request to the same model, with Ollama's structured outputs. It offers the shown
  sentences closest to the reply under short handles (``S1``…) and the ``format`` allows only
  a list of those handles: a grammar small enough that the model writes it at nearly its free
  speed, where an enum of whole sentences ran at a tenth of it. It asks for no support label:
  the quote is always the excerpt's own sentence, which policing grades verbatim, and the
  claim check (``claims``) judges what it backs (the model only ever answered "verbatim"
  when it was asked: all 339 passes of ``qwen2.5-coder:1.5b`` in the bridge's log). sadie
  maps each handle back to its episode and sentence, so the model can point but cannot name
  a note it was not shown or misquote one. The request repeats the briefing's messages byte
  for byte and adds the reply and the question at the end, so the model's prompt cache
  reuses the whole prefix. It is streamed, on a budget from the model's measured rates.
  Its answer is policed like a tail.
* **Found by sadie** (:func:`match_sentences`): when the pass fails too, the reply's sentences
  are matched to the shown excerpts mechanically. The matches carry their own label and are
  never presented as the model's citations.

Pure apart from the reasoner call; no UI imports.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from ..errors import ModelError, SadieError
from ..jsonvalue import JSON, JSONObject
from ..reasoners.rates import Rates
from . import claims
from .backing import SENTENCE_BREAK, Backed, back, content_words, sentence_spans, stems
from .citations import PolicedCitations, normalise, parse_tail, police, split_trailing_list
from .closeness import Encode, closeness, drop_unfound
from .unsupported import find_details

if TYPE_CHECKING:
    from ..prompt import Briefing, Excerpt
    from ..reasoners.base import Reasoner

__all__ = [
    "PASS_REQUEST",
    "Candidate",
    "PassOutcome",
    "candidates",
    "citation_pass",
    "pass_schema",
    "sentences_of",
    "match_sentences",
    "pass_messages",
]

MAX_PASS_CITATIONS = 4
# The excerpt sentences the pass offers: the ones sharing most with the reply. Each costs the
# model up to ~23 tokens to read (a long one is listed by its first LISTED characters; the
# handle still stands for the whole sentence); the handles it answers with cost a few. Each
# token read costs a 1.5B model on a 2-core CPU ~17 ms (the bridge's log).
MAX_CANDIDATES = 6
LISTED = 90

PASS_REQUEST = (
    "Which of these sentences from the excerpts does your reply rest on?\n{listing}\n"
    'Answer only with JSON like {{"s": ["S1"]}}.'
)
MAX_QUOTE = 300


MIN_QUOTE = 12


def sentences_of(text: str, *, join_short: bool = False) -> list[str]:
    """The sentences of an excerpt that can be quoted (at least 12 characters, at most 300:
    a longer one is cut at a word). ``join_short``: a shorter sentence is quoted with the one
    before it ("… kibble 7 kg. €148.70.": a receipt's amount is often a sentence of its own)
    when that one was not cut, instead of being left out; a short heading never is."""
    found: list[str] = []
    whole = False  # the last sentence found is whole (not cut), so one may follow it
    for sentence in SENTENCE_BREAK.split(text):
        sentence = sentence.strip()
        if len(sentence) < MIN_QUOTE:
            # A sentence ("She's home.", "€148.70."), not a heading ("Went well").
            ends = sentence.endswith((".", "!", "?", "…"))
            joined = f"{found[-1]} {sentence}" if found and ends else ""
            if join_short and whole and joined and len(joined) <= MAX_QUOTE:
                found[-1] = joined
            elif sentence:
                whole = False  # left out: what follows is no longer next to the last found
            continue
        whole = len(sentence) <= MAX_QUOTE
        if not whole:
            sentence = sentence[:MAX_QUOTE].rsplit(" ", 1)[0]
        if sentence not in found:
            found.append(sentence)
        else:
            whole = False  # a repeated sentence: what follows is not after the one kept
    if not found and text.strip():
        found.append(text.strip()[:MAX_QUOTE])
    return found


@dataclass(frozen=True)
class Candidate:
    """One excerpt sentence the citation pass may point at, by its handle (``S1``…)."""

    handle: str
    episode_id: str
    sentence: str


def candidates(
    reply: str, excerpts: Sequence[Excerpt], limit: int = MAX_CANDIDATES
) -> list[Candidate]:
    """The shown sentences most like the reply: content words shared with one of its
    sentences, a detail of the reply (a number, a name) counting double. None shares
    nothing with the reply."""
    replies = [reply[a:b] for a, b in sentence_spans(reply)] or [reply]
    reply_stems = [stems(r) for r in replies]
    details = [normalise(d.text) for d in find_details(reply)]
    scored: list[tuple[int, int, str, str]] = []
    seen: set[str] = set()
    for e in excerpts:
        for sentence in sentences_of(e.text, join_short=True):
            key = normalise(sentence)
            if key in seen:
                continue
            seen.add(key)
            own = stems(sentence)
            shared = max((len(own & r) for r in reply_stems), default=0)
            held = sum(1 for d in details if d and d in key)
            score = shared + 2 * held
            if score > 0:
                scored.append((-score, len(scored), e.episode_id, sentence))
    scored.sort()
    return [
        Candidate(f"S{n}", episode_id, sentence)
        for n, (_, _, episode_id, sentence) in enumerate(scored[:limit], 1)
    ]


def pass_schema(offered: Sequence[Candidate]) -> JSONObject:
    """The structured-output schema: a short list of handles, each one of ``offered``.

    The grammar is tiny (an enum of two-character handles), so the model writes it at nearly
    its free speed; sadie maps each handle back to its episode and sentence, so the model can
    point but cannot name what it was not shown or misquote."""
    return {
        "type": "object",
        "properties": {
            "s": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_PASS_CITATIONS,
                "items": {"type": "string", "enum": [c.handle for c in offered]},
            }
        },
        "required": ["s"],
    }


def pass_messages(
    briefing: Briefing, reply: str, offered: Sequence[Candidate]
) -> list[dict[str, str]]:
    """The briefing's own messages, unchanged (the server's prompt cache reads them once),
    then the reply and the request with the offered sentences."""
    listing = "\n".join(f"{c.handle}. {_listed(c.sentence)}" for c in offered)
    return [
        *briefing.messages,
        {"role": "assistant", "content": reply},
        {"role": "user", "content": PASS_REQUEST.format(listing=listing)},
    ]


def _listed(sentence: str) -> str:
    flat = " ".join(sentence.split())
    if len(flat) <= LISTED:
        return flat
    return flat[:LISTED].rsplit(" ", 1)[0] + " …"


def resolve(value: JSON, offered: Sequence[Candidate]) -> list[JSONObject] | None:
    """The pass's JSON (``{"s": ["S1", …]}``) as citation entries (episode, quote, support),
    or None when it is not the shape asked for. The earlier shape, ``{"citations": [{"s":
    "S1", "support": …}]}``, is read too. A handle that was not offered is kept, to be dropped
    by policing. The quote is the offered sentence itself, so it is cited as verbatim."""
    items: JSON = None
    if isinstance(value, dict):
        items = value.get("s") if "s" in value else value.get("citations")
    elif isinstance(value, list):
        items = value
    if not isinstance(items, list):
        return None
    by_handle = {c.handle.casefold(): c for c in offered}
    entries: list[JSONObject] = []
    for item in items:
        support: JSON = "verbatim"
        if isinstance(item, dict):
            handle = str(item.get("s") or item.get("sentence") or "")
            support = item.get("support", "verbatim")
        elif isinstance(item, str):
            handle = item
        else:
            entries.append({"entry": item})
            continue
        handle = handle.strip().casefold()
        chosen = by_handle.get(handle)
        if chosen is None:
            entries.append({"episode": f"handle {handle or '?'}", "quote": "", "support": support})
        else:
            entries.append(
                {"episode": chosen.episode_id, "quote": chosen.sentence, "support": support}
            )
    return entries


@dataclass(frozen=True)
class PassOutcome:
    policed: PolicedCitations | None  # None when the pass could not run or failed
    reason: str  # "" on success; otherwise why there are no pass citations
    ms: float = 0.0


async def citation_pass(
    reasoner: Reasoner,
    briefing: Briefing,
    reply: str,
    *,
    cap: float,
) -> PassOutcome:
    """Ask the model which offered sentences its reply rests on; police the answer.

    The budget comes from the model's measured rates (``reasoners.rates``): reading what the
    server may not have cached, then writing; ``cap`` bounds it all."""
    if not briefing.shown:
        return PassOutcome(None, "no excerpt was shown")
    structured = getattr(reasoner, "structured", None)
    if structured is None:
        return PassOutcome(None, "this reasoner has no structured outputs")
    offered = candidates(reply, [*briefing.excerpts, *briefing.attached_excerpts()])
    if not offered:
        return PassOutcome(None, "no shown excerpt shares a word with the reply")
    messages = pass_messages(briefing, reply, offered)
    rates = getattr(reasoner, "rates", None) or Rates()
    budget = rates.budget(
        reasoner.model,
        prompt_chars=sum(len(m["content"]) for m in messages),
        structured=True,
        cap=cap,
    )
    started = time.perf_counter()
    try:
        text = await structured(briefing, messages, pass_schema(offered), budget=budget)
    except ModelError as exc:
        return PassOutcome(None, exc.one_line(), (time.perf_counter() - started) * 1000)
    ms = (time.perf_counter() - started) * 1000
    try:
        value = json.loads(text)
    except ValueError:
        return PassOutcome(None, "the citation pass answered something that is not JSON", ms)
    entries = resolve(value, offered)
    if entries is None:
        return PassOutcome(None, "the citation pass answered JSON without a list of sentences", ms)
    policed = police(json.dumps(entries, ensure_ascii=False), briefing.shown)
    if not policed.citations:
        return PassOutcome(policed, "the citation pass found no supporting excerpt", ms)
    return PassOutcome(policed, "", ms)


# -- found by sadie ------------------------------------------------------------------------

MIN_SHARED = 3
MIN_OVERLAP = 0.5


@dataclass(frozen=True)
class Match:
    episode_id: str
    quote: str  # the excerpt's own sentence
    verbatim: bool  # the reply's sentence is in the excerpt word for word


def match_sentences(reply: str, excerpts: Sequence[Excerpt], limit: int = 4) -> list[Match]:
    """For each sentence of the reply, the excerpt sentence sharing most of its words.

    A match needs at least ``MIN_SHARED`` content words and half of the reply sentence's. The
    quote is always the excerpt's own sentence, so it is really there; ``verbatim`` is True
    only when the reply's sentence itself is found in the excerpt.
    """
    candidates: list[tuple[str, str, set[str], str]] = []
    for e in excerpts:
        whole = normalise(e.text)
        for sentence in sentences_of(e.text, join_short=True):
            candidates.append((e.episode_id, sentence, content_words(sentence), whole))
    found: list[Match] = []
    seen: set[tuple[str, str]] = set()
    for sentence in SENTENCE_BREAK.split(reply):
        sentence = sentence.strip()
        words = content_words(sentence)
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
    tail: str  # ok | empty | unusable | missing | unasked (see events.CitationsEvent)
    repaired: bool = False
    pass_reason: str = ""  # why the citation pass gave nothing ("" when it did or did not run)
    pass_ms: float = 0.0
    found: list[Match] | None = None
    list_removed: bool = False
    backed: Backed | None = None  # once settled: the sentence each citation backs
    # Once settled (``claims``): the line the person reads before the answer when what it
    # cites does not establish it, and the reply answered from its own quote when it said
    # the notes do not say while citing the sentence that does.
    doubt: str = ""
    answered: str = ""

    @property
    def pass_note(self) -> str | None:
        """What the citation pass did, as telemetry records it: ``ok``, why it gave nothing,
        or ``None`` when it did not run."""
        return self.pass_reason or ("ok" if self.repaired else None)


def tail_state(tail: str, diverted: bool, policed: PolicedCitations, asked: bool = True) -> str:
    """What the model's own tail amounted to (see ``events.CitationsEvent``); ``asked``:
    whether the briefing asked for one."""
    if not diverted and not tail.strip():
        return "missing" if asked else "unasked"
    if policed.citations:
        return "ok"
    items, error = parse_tail(tail)
    if not items and error is None:
        return "empty"
    return "unusable"


def own_citations(
    text: str, tail: str, diverted: bool, shown: dict[str, list[str]], asked: bool = True
) -> Grounded:
    """The reply's own citations: its tail, or a JSON list it ended with and no marker
    (``asked``: whether the briefing asked for a tail)."""
    list_removed = False
    if not diverted:
        split = split_trailing_list(text)
        if split is not None:
            text, tail, diverted, list_removed = split[0], split[1], True, True
    policed = police(tail, shown)
    state = tail_state(tail, diverted, policed, asked)
    return Grounded(text, policed, state, list_removed=list_removed)


def needs_pass(reasoner: Reasoner, grounded: Grounded) -> bool:
    """The citation pass runs when the model's own tail gave nothing and a model is there."""
    return (
        grounded.tail != "ok"
        and not getattr(reasoner, "offline", True)
        and bool(grounded.text.strip())
    )


async def repair(
    reasoner: Reasoner,
    briefing: Briefing,
    grounded: Grounded,
    *,
    cap: float,
) -> None:
    """Run the citation pass; its citations stand in for the tail's (what the tail dropped
    is kept in ``dropped``), or ``pass_reason`` says why there are none."""
    outcome = await citation_pass(reasoner, briefing, grounded.text, cap=cap)
    grounded.pass_ms = outcome.ms
    found = outcome.policed
    citations = grounded.policed.citations
    if found is not None and found.citations:
        citations, grounded.repaired = found.citations, True
    else:
        grounded.pass_reason = outcome.reason
    grounded.policed = PolicedCitations(
        citations,
        grounded.policed.dropped + (found.dropped if found is not None else ()),
        grounded.policed.parse_error,
    )


def settle(briefing: Briefing, grounded: Grounded, encode: Encode | None = None) -> None:
    """Each citation attached to the sentence it backs (one that backs none is dropped);
    with no citation left, sadie's own sentence matches (labelled as such). With ``encode``
    (the embedding model's), a paraphrase close to no sentence of its note is dropped first
    (``closeness``)."""
    if encode is not None:
        grounded.policed = drop_unfound(grounded.policed, briefing.shown, encode)
    backed = back(
        grounded.policed,
        grounded.text,
        briefing.shown,
        headers=briefing.headers(),
        message=briefing.own_words,
    )
    grounded.policed, grounded.backed = backed.policed, backed
    if not backed.policed.citations:
        if grounded.repaired:
            grounded.repaired = False
            grounded.pass_reason = "the citation pass named only sentences unrelated to the reply"
        grounded.found = match_sentences(grounded.text, briefing.excerpts)
    establish(briefing, grounded, encode)


def notes_of(briefing: Briefing) -> list[claims.Note]:
    """The shown notes as the claim check reads them: one per episode, with every text shown
    of it (excerpts and source chips)."""
    by_id: dict[str, claims.Note] = {}
    for e in [*briefing.excerpts, *briefing.attached_excerpts()]:
        key = e.episode_id.lower()
        texts = tuple(briefing.shown.get(key, ())) or (e.text,)
        if key not in by_id:
            by_id[key] = claims.Note(e.episode_id, e.date, e.title, texts, e.outside)
    return list(by_id.values())


def _unshown_notes(briefing: Briefing, shown: Mapping[str, claims.Note]) -> list[claims.Note]:
    """The notes retrieval found that the model did not read, one per episode."""
    by_id: dict[str, claims.Note] = {}
    for e in briefing.unshown:
        key = e.episode_id.lower()
        if key in shown:
            continue
        if key in by_id:
            old = by_id[key]
            by_id[key] = replace(old, texts=(*old.texts, e.text))
        else:
            by_id[key] = claims.Note(e.episode_id, e.date, e.title, (e.text,), e.outside)
    return list(by_id.values())


def _near(encode: Encode | None) -> Callable[[str, str], float] | None:
    if encode is None:
        return None

    def near(a: str, b: str) -> float:
        try:
            return closeness(a, [b], encode)
        except SadieError:  # no embedding model: the lexical rules stand alone
            return 0.0

    return near


def _lead(
    question: claims.Asked,
    text: str,
    judged: list[claims.Judged],
    by_id: Mapping[str, claims.Note],
    notes: Sequence[claims.Note],
    answering: Sequence[tuple[int, int]],
    near: Callable[[str, str], float] | None,
) -> None:
    """The answer's first sentence with no citation of its own ("Kyoto guesthouse garden.",
    then a cited sentence about crying) is established only by a quote of the reply that
    says it; when one does, it joins ``judged`` as established (``claims.assess`` doubts a
    reply whose first answering sentence is not)."""
    if not answering or any(j.span == answering[0] for j in judged):
        return
    first = answering[0]
    sentence = text[first[0] : first[1]]
    for j in judged:  # it returns as soon as it appends
        note = by_id.get(j.episode_id.lower())
        if note is None or j.support == "inference" or not (j.verdict.ok or j.verdict.minor):
            continue
        verdict = claims.judge(question, sentence, j.quote, note, notes, near=near)
        if verdict.ok or verdict.minor:
            judged.append(claims.Judged(first, j.episode_id, j.quote, j.support, verdict))
            return


def establish(
    briefing: Briefing,
    grounded: Grounded,
    encode: Encode | None = None,
    today: datetime | None = None,
) -> None:
    """Judge each backed citation against the claim of its sentence (``claims.judge``: a
    doubted one keeps its place with the reason and weighs nothing), then the reply as a
    whole (``claims.assess``): ``doubt`` and ``answered``."""
    backed = grounded.backed
    if backed is None:
        return
    question = claims.asked(
        briefing.message,
        today or datetime.now(),
        briefing.extra.get("people", ()),
        briefing.extra.get("person", ""),
    )
    notes = notes_of(briefing)
    by_id = {n.episode_id.lower(): n for n in notes}
    # Every note retrieval found, read or not: a newer one makes a "now" answer stale.
    found_notes = [*notes, *_unshown_notes(briefing, by_id)]
    near = _near(encode)
    kept = []
    judged: list[claims.Judged] = []
    for c, span in zip(backed.policed.citations, backed.sentences, strict=True):
        note = by_id.get(c.episode_id.lower())
        if note is None or c.support == "inference":
            kept.append(c)
            continue
        sentence = grounded.text[span[0] : span[1]]
        verdict = claims.judge(question, sentence, c.quote, note, found_notes, near=near)
        kept.append(replace(c, doubt=verdict.reason))
        judged.append(claims.Judged(span, c.episode_id, c.quote, c.support, verdict))
    policed = PolicedCitations(tuple(kept), backed.policed.dropped, backed.policed.parse_error)
    grounded.policed = policed
    grounded.backed = replace(backed, policed=policed)
    answering = claims.answer_spans(grounded.text, question)
    for m in grounded.found or ():
        note = by_id.get(m.episode_id.lower())
        if note is None:
            continue
        for span in answering:
            sentence = grounded.text[span[0] : span[1]]
            if claims.judge(question, sentence, m.quote, note, found_notes, near=near).ok and (
                claims.answer_terms(sentence, question) & stems(m.quote)
            ):
                judged.append(
                    claims.Judged(span, m.episode_id, m.quote, "verbatim", claims.ESTABLISHED)
                )
    # A page sadie added (the wiki page of who a "who is" message names) is no episode to
    # cite, but a sentence whose details and words are the page's is established by it.
    for page in (a for a in briefing.attached if a.excerpt is None and a.text.strip()):
        note = claims.Note(f"page:{page.title}", "", page.title, (page.text,))
        for span in answering:
            sentence = grounded.text[span[0] : span[1]]
            if claims.judge(question, sentence, sentence, note, near=near).ok:
                judged.append(
                    claims.Judged(span, note.episode_id, sentence, "verbatim", claims.ESTABLISHED)
                )
    _lead(question, grounded.text, judged, by_id, found_notes, answering, near)
    outcome = claims.assess(question, grounded.text, judged, notes, found_notes)
    grounded.doubt, grounded.answered = outcome.doubt, outcome.answer
    if outcome.answered_by is not None:
        # The quote the answer now comes from establishes it.
        used = outcome.answered_by
        grounded.policed = replace(
            grounded.policed,
            citations=tuple(
                replace(c, doubt="") if (c.episode_id, c.quote) == used else c
                for c in grounded.policed.citations
            ),
        )
        grounded.backed = replace(grounded.backed, policed=grounded.policed)
