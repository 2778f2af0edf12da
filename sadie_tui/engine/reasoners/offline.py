"""The offline reasoner: when no model answers, quote the notes themselves.

It picks the sentences of the retrieved excerpts that best cover the question's content
words (``pick_quotes``: rarer words weigh more, earlier-ranked excerpts win ties, newest or
oldest first for "the last / first time"), opens with the wiki entry a "who is X" question
names, quotes them with their dates and titles, cites each verbatim, and says plainly that no
model was reachable. It streams like a model, so
the same filter, policing and events apply.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import TYPE_CHECKING

from ..empty_memory import EMPTY_REPLY
from ..prompt import EMPTY_MEMORY_NOTE
from ..retrieval.figures import asks_figure, figures, gives_asked, money_words
from ..retrieval.keyword.tokens import query_tokens, tokenize
from ..retrieval.recency import Recency, asks_now, parse_recency, strip_recency
from ..retrieval.timewords import parse_time_window, strip_time_words
from ..wiki_pages import fold, who_is
from .base import Piece

if TYPE_CHECKING:
    from ..prompt import Briefing, Excerpt
    from .base import Reasoner

OFFLINE_MODEL = "offline (extractive)"
MAX_QUOTES = 3
MIN_WORDS = 4  # a shorter sentence ("In 1993.") is quoted only when it is the whole note
# A sentence counts as answering when it covers at least this share of the best coverage;
# for "the last / first time" the newest (oldest) of those come first.
NEAR_BEST = 0.75
MAX_CHARS = 280  # a quote's length at most
# Asked for a figure, a sentence giving it ("340 emails" for "how many emails") gains this.
FIGURE = 0.5
# Aboutness: a question word in the note's title, and each further mention (up to three).
ABOUT_TITLE = 0.3
ABOUT_MENTION = 0.1
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
_BULLET = re.compile(r"[-•*]\s+")
# Question words and filler that name no topic (beyond the keyword channel's stop words).
_FILLER = frozenset(
    "tell know think said say feel felt remember anything something thing things about did "
    "happen happened happening ever really just also get got go went".split()
)
_STEMMED_FILLER = frozenset(tokenize(" ".join(_FILLER))) | _FILLER


def _terms(text: str) -> set[str]:
    """The stemmed content words of ``text`` (stop words and filler out)."""
    return {t for t in tokenize(text) if t not in _STEMMED_FILLER}


def _question_terms(query: str) -> set[str]:
    """The question's content words: its time words ("in March") and recency words ("the
    last time") out, since excerpts were already chosen by date."""
    text = strip_time_words(query, parse_time_window(query, datetime.now())) or query
    text = strip_recency(text, parse_recency(text))
    return {t for t in query_tokens(text, forms=True) if t not in _STEMMED_FILLER}


def _words(sentence: str) -> int:
    return len(sentence.split())


def _spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, white space at its ends and a list item's
    mark ("- ", "• ") left out."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in [*_SENTENCE.finditer(text), None]:
        end = match.start() if match else len(text)
        part = text[start:end]
        if part.strip():
            lo = start + len(part) - len(part.lstrip())
            hi = lo + len(part.strip())
            mark = _BULLET.match(text, lo, hi)
            spans.append((mark.end() if mark and mark.end() < hi else lo, hi))
        start = match.end() if match else len(text)
    return spans


def _clip(sentence: str, limit: int = MAX_CHARS) -> str:
    """At most ``limit`` characters of ``sentence``, cut at a word's end: a quote is whole
    words."""
    if len(sentence) <= limit:
        return sentence
    return sentence[:limit].rsplit(" ", 1)[0]


def _best_sentence(
    excerpt: Excerpt, wanted: set[str], weight: dict[str, float], asked: set[str] | None = None
) -> tuple[float, str] | None:
    """(coverage of the question's weighted terms, sentence) of the excerpt's best sentence.

    ``asked``: the question asks for a figure and holds these; a sentence giving the figure
    asked for (``gives_asked``: "340 emails", "saved 420 euros") gains ``FIGURE``, may be
    shorter than ``MIN_WORDS`` ("~200 cherries total."), and a sentence of the question's
    words is quoted with the short one after it that gives the amount ("… kibble 7 kg.
    €148.70.")."""
    text = excerpt.text
    spans = _spans(text)
    total = sum(weight.get(t, 1.0) for t in wanted) or 1.0
    best: tuple[float, str] | None = None
    for i, (lo, hi) in enumerate(spans):
        sentence = text[lo:hi]
        gives = asked is not None and gives_asked(sentence, wanted, asked)
        if asked is not None and not gives and i + 1 < len(spans) and wanted & _terms(sentence):
            after = text[spans[i + 1][0] : spans[i + 1][1]]
            if _words(after) < MIN_WORDS and gives_asked(after, wanted, asked):
                sentence, gives = text[lo : spans[i + 1][1]], True
        if _words(sentence) < MIN_WORDS and len(spans) > 1 and not gives:
            continue
        found = wanted & (_terms(sentence) | money_words(sentence))
        cover = sum(weight.get(t, 1.0) for t in found) / total
        score = cover + FIGURE * gives + min(len(sentence), 200) / 20000
        if cover > 0 and (best is None or score > best[0]):
            best = (score, _clip(sentence))
    return best


def _about(excerpt: Excerpt, wanted: set[str]) -> float:
    """How much the whole note is about the question: its title names a question word
    ("Physio — knee check"), or it comes back to them (up to three mentions)."""
    mentions = sum(1 for t in tokenize(excerpt.text) if t in wanted)
    titled = bool(wanted & set(tokenize(excerpt.title)))
    return ABOUT_TITLE * titled + ABOUT_MENTION * min(mentions - 1, 3) if mentions else 0.0


def pick_quotes(
    excerpts: list[Excerpt], query: str, limit: int = MAX_QUOTES
) -> list[tuple[Excerpt, str]]:
    """The sentences that best match the question's content words, one per excerpt.

    Terms are weighted by how few excerpts hold them (a name over a word every note has),
    a note about them (``_about``) goes first, earlier-ranked excerpts win ties, excerpts
    marked outside the asked time come last; the best comes first. For
    "the last time" / "when did I first" the sentences that answer (``NEAR_BEST``) come
    newest / oldest first. A sentence shorter than ``MIN_WORDS`` words is never quoted unless
    it is the whole excerpt."""
    wanted = _question_terms(query)
    if not wanted:
        return _leads(excerpts, query, limit)
    held = [_terms(e.text) for e in excerpts]
    weight = {
        t: 1.0 + math.log((1 + len(excerpts)) / (1 + sum(t in h for h in held))) for t in wanted
    }
    asked = figures(query) if asks_figure(query) else None
    scored: list[tuple[float, float, int, Excerpt, str]] = []
    for rank, excerpt in enumerate(excerpts):
        best = _best_sentence(excerpt, wanted, weight, asked)
        if best is not None:
            score = best[0] + _about(excerpt, wanted) - rank * 0.02
            scored.append((score, best[0], rank, excerpt, best[1]))
    if not scored:
        return _leads(excerpts, query, limit)
    # The best first; notes outside the asked time after every note inside it.
    scored.sort(key=lambda s: (bool(s[3].outside), -s[0], s[2]))
    recency = parse_recency(query)
    if recency is None and asks_now(query) and parse_time_window(query, datetime.now()) is None:
        # "How much have I saved?": the newest sentence that answers, not last spring's.
        recency = Recency("newest", "")
    if recency is not None:
        top = max(s[1] for s in scored)
        near = [s for s in scored if s[1] >= NEAR_BEST * top]
        near.sort(key=lambda s: s[3].date, reverse=recency.order == "newest")
        near.sort(key=lambda s: bool(s[3].outside))  # stable: dates kept within each side
        return [(e, sentence) for _, _, _, e, sentence in near[:limit]]
    return [(e, sentence) for _, _, _, e, sentence in scored[:limit]]


def _leads(excerpts: list[Excerpt], query: str, limit: int) -> list[tuple[Excerpt, str]]:
    """No sentence shares a word with the question: for a question about a time ("what did I
    do in March?") the notes of that time are the answer, so quote how each begins; else
    nothing."""
    if parse_time_window(query, datetime.now()) is None:
        return []
    out: list[tuple[Excerpt, str]] = []
    for excerpt in excerpts:
        if excerpt.outside:
            continue
        parts = [p.strip() for p in _SENTENCE.split(excerpt.text) if p.strip()]
        lead = next(
            (p for p in parts if _words(p) >= MIN_WORDS), parts[0] if len(parts) == 1 else ""
        )
        if lead:
            out.append((excerpt, _clip(lead)))
        if len(out) >= limit:
            break
    return out


def pick_wiki(briefing: Briefing, query: str) -> tuple[str, str] | None:
    """(title, opening sentences) of the attached wiki entry a "who is X" question names."""
    name = who_is(query)
    if name is None:
        return None
    for item in briefing.attached:
        if item.kind == "wiki" and fold(item.title) == fold(name):
            sentences = [p.strip() for p in _SENTENCE.split(item.text) if p.strip()]
            opening = _clip(" ".join(sentences[:2]), 400)
            return (item.title, opening) if opening else None
    return None


BANNER = "No language model is reachable right now"


def said_before(briefing: Briefing) -> bool:
    """Whether an earlier reply of this conversation already gave the offline banner."""
    return any(
        m.get("role") == "assistant" and BANNER in str(m.get("content", ""))
        for m in briefing.messages[:-1]
    )


def _previous_question(briefing: Briefing) -> str:
    """The person's message before this one, in chat (empty in ask)."""
    users = [m.get("content", "") for m in briefing.messages[1:-1] if m.get("role") == "user"]
    return users[-1] if users else ""


def compose(briefing: Briefing, query: str, reason: str = "") -> str:
    """The offline answer; the full banner once per conversation, a short one after."""
    quotes = pick_quotes(briefing.excerpts, query)
    earlier = _previous_question(briefing)
    if not quotes and earlier:
        # A follow-up ("and my time?") was retrieved with the turn before: quote by both.
        quotes = pick_quotes(briefing.excerpts, f"{earlier} {query}")
    wiki = pick_wiki(briefing, query)
    why = f" ({reason})" if reason else ""
    again = said_before(briefing)
    if EMPTY_MEMORY_NOTE in briefing.system:  # the chat's briefing says so
        offline = "" if again else f"\n\n{BANNER}{why} either."
        return EMPTY_REPLY + offline + "\n@@CITATIONS@@\n[]"
    if not quotes and wiki is None:
        body = (
            "Still offline, and nothing in your memory matches this closely enough to quote."
            if again
            else f"{BANNER}{why}, and nothing in your memory matches this closely enough to quote."
        )
        return body + "\n@@CITATIONS@@\n[]"
    lines = [
        "Still offline. Closest in your notes:"
        if again
        else f"{BANNER}{why}, so here is what your own notes say that comes closest:",
        "",
    ]
    citations: list[dict[str, str]] = []
    if wiki is not None:
        lines.append(f"- Your wiki entry “{wiki[0]}”: “{wiki[1]}”")
    for excerpt, sentence in quotes:
        lines.append(f"- On {excerpt.date}, in “{excerpt.title}”: “{sentence}”")
        citations.append({"episode": excerpt.episode_id, "quote": sentence, "support": "verbatim"})
    return "\n".join(lines) + "\n@@CITATIONS@@\n" + json.dumps(citations, ensure_ascii=False)


class OfflineReasoner:
    offline = True
    model = OFFLINE_MODEL

    def __init__(self, reason: str = "") -> None:
        self.reason = reason

    async def stream(
        self,
        briefing: Briefing,
        query: str = "",
        messages: list[dict[str, str]] | None = None,
        *,
        sent: Callable[[], None] | None = None,
    ) -> AsyncIterator[Piece]:
        if sent is not None:
            sent()  # nothing to send: the answer is made here
        text = compose(briefing, query or briefing.messages[-1]["content"], self.reason)
        for piece in re.findall(r"\S+\s*|\s+", text):
            yield Piece("content", piece)
        await asyncio.sleep(0)

    async def complete(self, briefing: Briefing, query: str = "") -> str:
        return compose(briefing, query or briefing.messages[-1]["content"], self.reason)


def offline_reason(reasoner: Reasoner) -> str:
    """Why ``reasoner`` cannot do what needs a model, in words: the model check's (an
    ``OfflineReasoner``'s reason), the setting, or the model's own limit."""
    if not reasoner.offline:
        return f"{reasoner.model} cannot answer in structured form"
    return getattr(reasoner, "reason", "") or "the reasoner is set to offline"
