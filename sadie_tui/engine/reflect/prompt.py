"""What ``sadie reflect`` tells the model, and the JSON schemas it answers under.

Two requests, both with Ollama's structured outputs and short handles, as in the citation
pass (``reply.grounding``): the model points at an excerpt (``E1``…) or an item (``R1``…) and
sadie resolves the handle, so it can never name a note it was not shown. The grammar stays
small: enums of two-character handles and a few labels; the statements and quotes are free
strings, checked afterwards.

Every request of a run opens with the same system prompt (``SYSTEM``) and a batch's requests
with the same excerpts, the instruction last: the server's prompt cache (llama.cpp keeps the
last prompt's tokens) then reads the system prompt once per run and a batch's notes once per
batch, however many requests follow.

* **Asking** (``questions_messages``): as the reflection of Park et al.'s *Generative Agents*,
  the salient high-level questions the batch raises about the person.
* **Answering** (``answer_messages``): the batch again (cached), then what retrieval found
  across the whole memory for one question, each under a further handle; the answer is
  beliefs in the proposing schema, quotes under the handles of any excerpt shown.
* **Proposing** (``propose_messages``): one batch of excerpts, read directly (a batch the
  model raised no question about).
* **Judging** (``judge_messages``): one belief against the beliefs, records and notes that
  might disagree with it; ``judge_many_messages``: the beliefs a batch's notes speak to, in
  one request, against those notes.
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

SYSTEM = (
    "You help one person learn what their own memory shows about them: excerpts of their "
    "notes, records from their devices and services, and beliefs about them. Say only what "
    "the items show, and answer in JSON under the schema given."
)
# How a belief is written and backed, in every request that proposes some.
BELIEF_RULES = (
    'Write each in the first person, as the person would say it, starting with "I", one idea '
    "per belief, short and specific: how often, how much, who by name, what they want, what "
    "they think of something. Not a plan (what they will do) and not one day's event or mood: "
    "something that holds over weeks or months. Back each belief with evidence: the handle of "
    "the excerpt (E1, E2, ...) and one whole sentence copied word for word from it. "
    "confidence: 0.3 when one note hints at it, 0.6 when a note says it plainly, 0.9 when "
    "several notes repeat it."
)
PROPOSE = (
    "List what the excerpts show about the person: their habits, preferences, relationships, "
    "facts of their life, values, goals, health, feelings about their work. Give one belief "
    "for each excerpt that shows something lasting, up to five. " + BELIEF_RULES
)
# No example answer, and no example belief: a 1.5B model copied the example's placeholder quote
# word for word, and proposed the instruction's example belief from a note about something
# else (measured on the real model). The schema already fixes the shape.
PROPOSE_ASK = (
    "Answer in JSON: the beliefs, each with its statement, kind, confidence and evidence "
    "(e: the excerpt's handle, quote: the sentence copied from it)."
)
# Park et al.'s reflection asks "what are the most salient high-level questions we can answer
# about the subjects in the statements?". Put to a 1.5B model as a question, it was copied back
# as the answer ("What are the most salient high-level questions we can answer about this
# person over months...", measured): the instruction is not worded as a question, and an answer
# that repeats it is dropped (``step.echoes``).
QUESTIONS = (
    "Write up to {n} short questions about this person that the excerpts above raise and that "
    "their other notes, from any month, could answer. Each names one concrete thing from the "
    "excerpts: a habit, their health or sleep, a person by name, their work, something they "
    "value, something that changed. Each starts with How often, How much, How, Who, What or "
    "Why, and ends with a question mark."
)
ANSWER = (
    "Question about the person: {question}\n"
    "Answer it from the excerpts above, from any date: up to {n} beliefs that the excerpts "
    "show, each backed by the excerpts that answer the question (from different dates when "
    "several agree). " + BELIEF_RULES + " If no excerpt answers it, give no belief."
)

JUDGE = (
    "Check the belief above against each item from the person's memory (other beliefs, "
    "records from devices and services, excerpts of their notes). For each item "
    'say "same" if it states the same belief in other words, "supports" if it backs the belief, '
    '"contradicts" if both cannot be true, "replaces" if it is a newer state of the same '
    'thing (the belief was true before but is not now), or "unrelated". Quote the words of '
    "the item that decide it."
)
JUDGE_ASK = (
    'Answer only with JSON like {"items": [{"r": "R1", "verdict": "contradicts", '
    '"quote": "<the words of R1 that decide it>"}]}, one entry per item.'
)
# Several beliefs against one set of items, in one request (the beliefs a batch's notes speak
# to): one entry per belief and item.
JUDGE_MANY = (
    "Check each belief above (B1, B2, ...) against each item from the person's memory. For "
    'each belief and item say "same" if the item states the same belief in other words, '
    '"supports" if it backs the belief, "contradicts" if both cannot be true, "replaces" if '
    "it is a newer state of the same thing (the belief was true before but is not now), or "
    '"unrelated". Quote the words of the item that decide it.'
)
JUDGE_MANY_ASK = (
    'Answer only with JSON like {"items": [{"b": "B1", "r": "R1", "verdict": "contradicts", '
    '"quote": "<the words of R1 that decide it>"}]}, one entry per belief and item.'
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


def excerpts_block(shown: Sequence[Shown]) -> str:
    """The batch's excerpts as every request of the batch opens with them (the same bytes)."""
    return "Excerpts:\n\n" + "\n".join(s.render() for s in shown) + "\n"


def propose_messages(shown: Sequence[Shown]) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"{excerpts_block(shown)}\n{PROPOSE}\n{PROPOSE_ASK}"},
    ]


def questions_messages(shown: Sequence[Shown], most: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"{excerpts_block(shown)}\n{QUESTIONS.format(n=most)}"},
    ]


# The longest question the grammar lets the model write: one question, not a dozen run into one
# string until the token limit cut it (the 1.5B model did, on every batch of a quiet run:
# 99 tokens written of 100, 2026-12-05).
QUESTION_CHARS = 120


def questions_schema(most: int) -> JSONObject:
    return {
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "maxItems": most,
                "items": {"type": "string", "minLength": 12, "maxLength": QUESTION_CHARS},
            }
        },
        "required": ["questions"],
    }


def answer_messages(
    shown: Sequence[Shown], found: Sequence[Shown], question: str, most: int
) -> list[dict[str, str]]:
    """The batch (the cached prefix), what retrieval ``found`` for ``question`` under the
    handles that follow the batch's, then the question."""
    more = "".join(s.render() + "\n" for s in found)
    ask = ANSWER.format(question=question, n=most)
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"{excerpts_block(shown)}{more}\n{ask}\n{PROPOSE_ASK}"},
    ]


def propose_schema(handles: Sequence[str], most: int = 0) -> JSONObject:
    """Beliefs with evidence under ``handles``, at most ``most`` of them (``MAX_BELIEFS``)."""
    return {
        "type": "object",
        "properties": {
            "beliefs": {
                "type": "array",
                "maxItems": most or MAX_BELIEFS,
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
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Belief: {statement}\n\n{listing}\n\n{JUDGE}\n{JUDGE_ASK}",
        },
    ]


def judge_many_messages(statements: Sequence[str], items: Sequence[Item]) -> list[dict[str, str]]:
    beliefs = "\n".join(f"B{n} {statement}" for n, statement in enumerate(statements, 1))
    listing = "\n".join(i.render() for i in items)
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Beliefs:\n{beliefs}\n\n{listing}\n\n{JUDGE_MANY}\n{JUDGE_MANY_ASK}",
        },
    ]


def judge_many_schema(beliefs: int, handles: Sequence[str]) -> JSONObject:
    return {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "maxItems": beliefs * len(handles),
                "items": {
                    "type": "object",
                    "properties": {
                        "b": {"type": "string", "enum": [f"B{n}" for n in range(1, beliefs + 1)]},
                        "r": {"type": "string", "enum": list(handles)},
                        "verdict": {"type": "string", "enum": list(VERDICTS)},
                        "quote": {"type": "string"},
                    },
                    "required": ["b", "r", "verdict", "quote"],
                },
            }
        },
        "required": ["items"],
    }


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
