"""The offline reasoner: when no model answers, quote the notes themselves.

It picks the sentences of the retrieved excerpts that share the most words with the
question (earlier-ranked excerpts first), quotes them with their dates and titles, cites
each verbatim, and says plainly that no model was reachable. It streams like a model, so
the same filter, policing and events apply.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from .base import Piece

if TYPE_CHECKING:
    from ..prompt import Briefing, Excerpt

OFFLINE_MODEL = "offline (extractive)"
MAX_QUOTES = 3
_WORD = re.compile(r"[\w'’]+")
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
STOP = set(
    "a an and are as at be been but by can could did do does for from had has have he her his how "
    "i if in into is it its me my of on or our she so that the their them then there they this to "
    "was we were what when where which who why will with would you your about after again all am "
    "any before did does doing during each few more most other some such than too very just tell "
    "know think said say".split()
)


def _terms(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text) if w.casefold() not in STOP and len(w) > 1}


def pick_quotes(
    excerpts: list[Excerpt], query: str, limit: int = MAX_QUOTES
) -> list[tuple[Excerpt, str]]:
    """The best sentence from each of the best excerpts, in excerpt rank order."""
    wanted = _terms(query)
    scored: list[tuple[float, int, Excerpt, str]] = []
    for rank, excerpt in enumerate(excerpts):
        best: tuple[float, str] | None = None
        for sentence in _SENTENCE.split(excerpt.text):
            sentence = sentence.strip()
            if len(sentence) < 12:
                continue
            overlap = len(wanted & _terms(sentence))
            score = overlap - rank * 0.15 + min(len(sentence), 200) / 2000
            if best is None or score > best[0]:
                best = (score, sentence[:280])
        if best is not None:
            scored.append((best[0], rank, excerpt, best[1]))
    scored.sort(key=lambda s: (-s[0], s[1]))
    chosen = sorted(scored[:limit], key=lambda s: s[1])
    return [(excerpt, sentence) for _, _, excerpt, sentence in chosen]


BANNER = "No language model is reachable right now"


def said_before(briefing: Briefing) -> bool:
    """Whether an earlier reply of this conversation already gave the offline banner."""
    return any(
        m.get("role") == "assistant" and str(m.get("content", "")).startswith(BANNER)
        for m in briefing.messages[:-1]
    )


def compose(briefing: Briefing, query: str, reason: str = "") -> str:
    """The offline answer; the full banner once per conversation, a short one after."""
    quotes = pick_quotes(briefing.excerpts, query)
    why = f" ({reason})" if reason else ""
    again = said_before(briefing)
    if not quotes:
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
    citations = []
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
        self, briefing: Briefing, query: str = "", messages: list[dict[str, str]] | None = None
    ) -> AsyncIterator[Piece]:
        text = compose(briefing, query or briefing.messages[-1]["content"], self.reason)
        for piece in re.findall(r"\S+\s*|\s+", text):
            yield Piece("content", piece)
        await asyncio.sleep(0)

    async def complete(self, briefing: Briefing, query: str = "") -> str:
        return compose(briefing, query or briefing.messages[-1]["content"], self.reason)
