"""A "who is X" question and the wiki entry about X, attached to the briefing.

Wiki entries are not chunks, so retrieval never returns them; a question that asks who
someone (or something) is gets the entry whose title names it, matched without case or
accents ("Tomas" finds "Tomás"), as attached context the reasoner can quote.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

from .prompt import Attached
from .store.derived import wiki_texts

if TYPE_CHECKING:
    from .memory import Memory

_WHO = re.compile(
    r"\b(?:who|what)(?:'s|’s|\s+is|\s+was|\s+are|\s+were)\s+(?P<name>[^?.!,;]+?)"
    r"(?:\s+to\s+(?:me|us|you|her|him))?\s*(?:[?.!,;]|$)",
    re.IGNORECASE,
)
_LEAD = re.compile(r"^(?:my|our|the|a|an)\s+", re.IGNORECASE)


def fold(text: str) -> str:
    """Lower case without accents, spaces squashed."""
    plain = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in plain if not unicodedata.combining(ch))
    return " ".join(plain.casefold().split())


def who_is(question: str) -> str | None:
    """The name a "who is X (to me)?" question asks about, or None."""
    m = _WHO.search(question)
    if m is None:
        return None
    name = _LEAD.sub("", m["name"].strip())
    return name or None


def wiki_for(memory: Memory, question: str) -> list[Attached]:
    """The wiki entry a "who is X" question names, as attached context (none: not such a
    question, or no entry by that title)."""
    name = who_is(question)
    if name is None:
        return []
    wanted = fold(name)
    for _id, title, text in wiki_texts(memory.db):
        if fold(title) == wanted:
            return [Attached("wiki", title, text, added_by="sadie")]
    return []
