"""What ``sadie reflect`` tells the model, and the JSON schemas it answers under.

Two requests, both with Ollama's structured outputs and short handles, as in the citation
pass (``reply.grounding``): the model points at an excerpt (``E1``…) or an item (``R1``…) and
sadie resolves the handle, so it can never name a note it was not shown. The grammar stays
small: enums of two-character handles and a few labels; the statements and quotes are free
strings, checked afterwards.

* **Proposing** (``propose_messages``): the standing instruction (the same bytes on every
  call, so the server's prompt cache reads it once), then one batch of excerpts.
* **Judging** (``judge_messages``): one belief against the beliefs, records and notes that
  might disagree with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..jsonvalue import JSONObject
from .beliefs import KINDS

MAX_BELIEFS = 5  # per batch
MAX_EVIDENCE = 3  # per belief
EPISODE_CHARS = 3000  # an episode longer than this is shown (and policed) up to here
# A quote's least length, in characters, in the schema: a grammar that forbids "..." and ""
# makes a small model copy words instead of the example's placeholder. (No maxLength: a
# bound of n unrolls into n nested rules, and the grammar is checked at every token.)
MIN_QUOTE = 12

PROPOSE = (
    "You read excerpts from one person's own notes and list what they show about that "
    "person: their habits, preferences, relationships, facts of their life, values, goals, "
    "health, feelings about their work. Give one belief for each excerpt that shows "
    "something lasting, up to five. Write each in the first person, as the person would say "
    'it, starting with "I", one idea per belief, short and specific: how often, how much, '
    "who by name, what they want, what they think of something; not a mood of one day. "
    "Back each belief with "
    "evidence: the handle of the excerpt (E1, E2, ...) and one whole sentence copied word for "
    "word from it. Say only what the excerpts show. confidence: 0.3 when one note hints at "
    "it, 0.6 when a note says it plainly, 0.9 when several notes repeat it."
)
# No example answer, and no example belief: a 1.5B model copied the example's placeholder quote
# word for word, and proposed the instruction's example belief from a note about something
# else (measured on the real model). The schema already fixes the shape.
PROPOSE_ASK = (
    "Answer in JSON: the beliefs, each with its statement, kind, confidence and evidence "
    "(e: the excerpt's handle, quote: the sentence copied from it)."
)

JUDGE = (
    "You check one belief about a person against other things from their memory: other "
    "beliefs, records from devices and services, and excerpts of their notes. For each item "
    'say "same" if it states the same belief in other words, "supports" if it backs the belief, '
    '"contradicts" if both cannot be true, "replaces" if it is a newer state of the same '
    'thing (the belief was true before but is not now), or "unrelated". Quote the words of '
    "the item that decide it."
)
JUDGE_ASK = (
    'Answer only with JSON like {"items": [{"r": "R1", "verdict": "contradicts", '
    '"quote": "<the words of R1 that decide it>"}]}, one entry per item.'
)
VERDICTS = ("same", "supports", "contradicts", "replaces", "unrelated")


@dataclass(frozen=True)
class Shown:
    """One episode as a batch shows it, under its handle."""

    handle: str  # E1, E2, ...
    episode_id: str
    date: str
    title: str
    text: str  # what the model saw: the episode, up to EPISODE_CHARS

    def render(self) -> str:
        title = " ".join(self.title.split()) or "untitled"
        return f"{self.handle} ({self.date}) {title}\n{self.text.strip()}\n"


def shown_text(text: str) -> str:
    """An episode's text as a batch shows it (a long one cut at a paragraph or a word)."""
    if len(text) <= EPISODE_CHARS:
        return text
    cut = text[:EPISODE_CHARS]
    at = cut.rfind("\n\n")
    if at < EPISODE_CHARS // 2:
        at = cut.rfind(" ")
    return cut[: max(at, 1)]


def propose_messages(shown: Sequence[Shown]) -> list[dict[str, str]]:
    excerpts = "\n".join(s.render() for s in shown)
    return [
        {"role": "system", "content": PROPOSE},
        {"role": "user", "content": f"Excerpts:\n\n{excerpts}\n{PROPOSE_ASK}"},
    ]


def propose_schema(handles: Sequence[str]) -> JSONObject:
    return {
        "type": "object",
        "properties": {
            "beliefs": {
                "type": "array",
                "maxItems": MAX_BELIEFS,
                "items": {
                    "type": "object",
                    "properties": {
                        "statement": {"type": "string", "minLength": 8},
                        "kind": {"type": "string", "enum": list(KINDS)},
                        "confidence": {"type": "number"},
                        "evidence": {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": MAX_EVIDENCE,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "e": {"type": "string", "enum": list(handles)},
                                    "quote": {"type": "string", "minLength": MIN_QUOTE},
                                },
                                "required": ["e", "quote"],
                            },
                        },
                    },
                    "required": ["statement", "kind", "confidence", "evidence"],
                },
            }
        },
        "required": ["beliefs"],
    }


@dataclass(frozen=True)
class Item:
    """Something a belief is judged against, under its handle (R1, R2, ...)."""

    handle: str
    kind: str  # belief | record | note
    id: str  # the belief's, the observation's or the episode's
    date: str
    title: str  # the note's title or the record's source ("" for a belief)
    text: str
    similarity: float

    def render(self) -> str:
        if self.kind == "belief":
            return f"{self.handle} (another belief) {self.text}"
        label = "record" if self.kind == "record" else "note"
        return f"{self.handle} ({label}, {self.date}, {' '.join(self.title.split())}) {self.text}"


def judge_messages(statement: str, items: Sequence[Item]) -> list[dict[str, str]]:
    listing = "\n".join(i.render() for i in items)
    return [
        {"role": "system", "content": JUDGE},
        {"role": "user", "content": f"Belief: {statement}\n\n{listing}\n\n{JUDGE_ASK}"},
    ]


def judge_schema(handles: Sequence[str]) -> JSONObject:
    return {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "maxItems": len(handles),
                "items": {
                    "type": "object",
                    "properties": {
                        "r": {"type": "string", "enum": list(handles)},
                        "verdict": {"type": "string", "enum": list(VERDICTS)},
                        "quote": {"type": "string"},
                    },
                    "required": ["r", "verdict", "quote"],
                },
            }
        },
        "required": ["items"],
    }
