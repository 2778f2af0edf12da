"""The briefing: everything the reasoner is told, in a fixed shape.

Order: what stays the same between turns first (the standing system prompt and the citation
instruction, the persona's voice, the soul summary, the guardrail block), then this
message's tone, then the memory blocks (Excerpts, Beliefs, Observations, Attached context),
then — in chat — the last 12 messages, then the person's message. Each excerpt renders with
its provenance, ``episode <id> (<YYYY-MM-DD>) <title>``, the id shortened to its shortest
unique prefix of 8 or more characters (``short_refs``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol, TypedDict

PROMPT_VERSION = "sadie-brief-4"
HISTORY_LIMIT = 12
CHUNK_CAP = 1600
EMPTY_ASK = "there is nothing in the memory yet to answer from"
EMPTY_MEMORY_NOTE = (
    "The memory is empty: the person has not added any notes, journal entries, voice memos "
    "or records yet. Say so plainly if they ask about their life, and never make anything up."
)

STANDING = (
    "You are sadie, a thoughtful confidant who knows one person through their own notes, "
    "journal entries, voice memos and records. You talk with that person about their own life. "
    "Reply in plain prose, warmly and concretely, in a few short paragraphs at most, speaking to "
    'them as "you". Everything you say about their life must rest on the excerpts and context '
    "below; if they do not hold the answer, say so plainly instead of guessing. Never invent "
    "events, people, dates or quotes."
)

CITATION_RULES = (
    "After your reply, on a line of its own, write @@CITATIONS@@ and then a JSON array of the "
    "excerpts your reply rests on, like this:\n"
    "@@CITATIONS@@\n"
    '[{"episode": "<episode id>", "quote": "<words copied exactly from that excerpt>", '
    '"support": "verbatim"}]\n'
    'Use "verbatim" when the quote is copied word for word, "paraphrase" when it restates the '
    'excerpt in other words, and "inference" when you are connecting dots the notes do not state. '
    "Only cite episode ids that appear above. Write [] if nothing supports your reply. Write "
    "nothing after the array."
)

# The tone line of each register (``emotions``), told to the model in the system prompt.
TONE: dict[str, str] = {
    "curious": "Take a curious tone: explore the question with them and ask one good question back.",
    "encouraging": (
        "Take an encouraging tone: be warm and steady, name what they have already done, "
        "and suggest one small next step."
    ),
    "focused": (
        "Take a focused tone: be brief and practical, with concrete steps in a sensible order."
    ),
    "playful": "Take a playful tone: be light and witty, and enjoy the joke with them.",
    "serious": (
        "Take a serious tone: be calm, careful and kind, with no jokes or exclamation marks, "
        "and make room for what they feel."
    ),
    "reflective": (
        "Take a reflective tone: be unhurried and thoughtful, and connect this to what they "
        "have written before."
    ),
    "celebrating": (
        "Take a celebrating tone: share their joy warmly and say what makes this win theirs."
    ),
}


_OPINION = (
    "If you want to add your own view beyond what the notes say, put it after a line reading "
    "OPINION:{where}, so it stays separate from what the notes support."
)
OPINION_RULE = _OPINION.format(where=" (before the citations marker)")
OPINION_ALONE = _OPINION.format(where="")  # when no citations tail is asked for


# The briefing's block headings (the observations' ends with how to weigh them).
SOUL_HEADING = "Who this person is (their soul summary):"
BELIEFS_HEADING = "Beliefs (conclusions derived from the notes, not the person's own words):"
OBSERVATIONS_HEADING = (
    "Observations (independent records from devices and services, not the person's words"
)
# How the excerpts are ordered for a question about the last / first time.
ORDER_NOTES = {
    "newest": "the question asks about the most recent time: newest first, by date",
    "oldest": "the question asks about the first time: oldest first, by date",
}


class BriefingExtra(TypedDict, total=False):
    """What a briefing keeps beside its messages: the standing texts a model may echo back
    (voice, tone, guardrails), the person's name from the soul summary, and the people the
    message names (the claim check asks that a citation's note mentions them)."""

    voice: list[str]
    person: str
    people: list[str]


class BeliefLine(Protocol):
    """What the briefing shows of a belief (retrieval's ``BeliefHit``)."""

    @property
    def statement(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def confidence(self) -> float: ...


class ObservationLine(Protocol):
    """What the briefing shows of an observation (retrieval's ``ObservationHit``)."""

    @property
    def source(self) -> str: ...
    @property
    def observed_at(self) -> datetime: ...
    @property
    def text(self) -> str: ...


@dataclass(frozen=True)
class Excerpt:
    """One chunk (or an attached source) as the model sees it."""

    episode_id: str
    date: str
    title: str
    text: str
    # The asked time ("in March") when this note lies outside it: it only fills in because
    # the window held too few notes, and its header says so.
    outside: str = ""
    # How the briefing names the episode: the shortest unique prefix of its id (``short_refs``)
    ref: str = ""
    # The whole chunk when ``text`` is a passage cut from it (``passages.cut``): citations are
    # graded against the whole chunk.
    whole: str = ""

    def header(self) -> str:
        title = " ".join(self.title.split()) or "untitled"
        note = (
            f" [outside the asked time: {' '.join(self.outside.split())}]" if self.outside else ""
        )
        return f"episode {self.ref or self.episode_id} ({self.date}) {title}{note}"

    def render(self) -> str:
        return f"{self.header()}\n{self.text[:CHUNK_CAP].strip()}\n"


_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
SHORT_REF = 8


def short_refs(ids: Sequence[str]) -> dict[str, str]:
    """Each UUID's shortest prefix of at least 8 characters that no other of ``ids`` shares
    (``3f7f7a68``): a 36-character id costs the model ~25 tokens to read at every mention, a
    prefix ~5, and citation policing resolves a unique prefix to the whole id. Other ids are
    kept whole."""
    uuids = sorted({i.lower() for i in ids if _UUID.match(i)})
    refs: dict[str, str] = {}
    for i in ids:
        key = i.lower()
        if key not in uuids:
            refs[i] = i
            continue
        n = SHORT_REF
        while any(o != key and o.startswith(key[:n]) for o in uuids) or key[n - 1] == "-":
            n += 1
        refs[i] = key[:n]
    return refs


@dataclass(frozen=True)
class Attached:
    kind: str
    title: str
    text: str
    excerpt: Excerpt | None = None  # a source chip renders as a citable excerpt
    added_by: str = "you"  # you | sadie: the briefing never says the person attached it


CHAT_TEMPERATURE = 0.4
ASK_TEMPERATURE = 0.0


@dataclass
class Briefing:
    system: str
    messages: list[dict[str, str]]
    excerpts: list[Excerpt]
    shown: dict[str, list[str]]
    history_used: int = 0
    history_dropped: int = 0
    version: str = PROMPT_VERSION
    extra: BriefingExtra = field(default_factory=lambda: BriefingExtra())
    attached: list[Attached] = field(default_factory=list)
    # What retrieval found that the model was not given to read (a small model reads the few
    # passages that answer): the claim check still weighs it, so that a "now" answer quoting
    # an old figure is doubted when a newer note retrieved beside it speaks to the question.
    unshown: list[Excerpt] = field(default_factory=list)
    # How freely the model writes: a chat reply a little, a one-shot answer not at all
    # (``ASK_TEMPERATURE``): the same question gets the same answer, and on the 40 demo
    # questions the 1.5B model's greedy drafts were as often right (30) as sampled ones.
    temperature: float = CHAT_TEMPERATURE
    # Whether the model was asked for the citations tail (``CITATION_RULES``): not when it
    # never writes one (``reasoners.rates``, the ``tail`` habit); the citation pass points.
    tail: bool = True

    @property
    def message(self) -> str:
        """The person's own message (the last one of the briefing)."""
        return self.messages[-1]["content"] if self.messages else ""

    @property
    def own_words(self) -> str:
        """What a backed sentence's details may come from besides its note: the person's
        message, and their own name (the soul summary's opening words) — "you" in a reply
        is often written as the name."""
        return "\n".join(t for t in (self.message, self.extra.get("person", "")) if t)

    def attached_excerpts(self) -> list[Excerpt]:
        """The source chips, as citable excerpts."""
        return [a.excerpt for a in self.attached if a.excerpt is not None]

    def headers(self) -> dict[str, list[str]]:
        """The provenance line of every shown excerpt, by episode id (its date and title are
        part of what the excerpt says)."""
        found: dict[str, list[str]] = {}
        for e in [*self.excerpts, *self.attached_excerpts()]:
            found.setdefault(e.episode_id.lower(), []).append(e.header())
        return found

    def instructions(self) -> list[str]:
        """The standing texts a model may echo back (never to be shown as its reply)."""
        return [
            STANDING,
            CITATION_RULES,
            OPINION_RULE,
            OPINION_ALONE,
            EMPTY_MEMORY_NOTE,
            # the briefing's own headings (an echoed heading is as foreign to a reply)
            SOUL_HEADING,
            BELIEFS_HEADING,
            OBSERVATIONS_HEADING,
            *(f"Excerpts ({note}):" for note in ORDER_NOTES.values()),
            *self.extra.get("voice", ()),
        ]

    @property
    def chars(self) -> int:
        return sum(len(m["content"]) for m in self.messages)

    def num_ctx(self, reply_tokens: int = 1536) -> int:
        """A context window that fits the briefing (≈3.5 chars a token) and the reply."""
        needed = int(self.chars / 3.2) + reply_tokens
        size = 4096
        while size < needed and size < 131072:
            size *= 2
        return size


_LEADING_NAME = re.compile(r"^\s*((?:[A-Z][\w'’-]+)(?:[ \t]+[A-Z][\w'’-]+){0,3})")


def person_name(soul: str) -> str:
    """The name a soul summary opens with ("Maya Okafor is 34, …" → "Maya Okafor"), or ""."""
    found = _LEADING_NAME.match(strip_front_matter(soul))
    return found.group(1) if found else ""


def strip_front_matter(text: str) -> str:
    """The text without a leading YAML front matter block (``---`` … ``---``)."""
    stripped = text.lstrip("\ufeff")
    if not stripped.startswith("---"):
        return text
    lines = stripped.splitlines()
    if lines[0].strip() != "---":
        return text
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() in ("---", "..."):
            return "\n".join(lines[i + 1 :]).strip()
    return text


def render_beliefs(beliefs: Sequence[BeliefLine]) -> str:
    if not beliefs:
        return ""
    lines = [BELIEFS_HEADING]
    for b in beliefs:
        outside = ", outside the asked time" if getattr(b, "in_window", None) is False else ""
        lines.append(f"- [{b.status}, confidence {b.confidence:.1f}{outside}] {b.statement}")
    return "\n".join(lines)


def render_observations(observations: Sequence[ObservationLine], weigh_above: bool = False) -> str:
    if not observations:
        return ""
    head = OBSERVATIONS_HEADING
    head += "; weigh them above self-report):" if weigh_above else "):"
    lines = [head]
    for o in observations:
        when = o.observed_at.strftime("%Y-%m-%d %H:%M")
        outside = " [outside the asked time]" if getattr(o, "in_window", None) is False else ""
        lines.append(f"- {when} {o.source}{outside}: {o.text}")
    return "\n".join(lines)


ATTACHED_HEADING = "Attached context (the person attached these to this conversation):"
ADDED_HEADING = (
    "Context sadie added (pages from the memory about who the message names; the person did "
    "not attach these):"
)


def render_attached(attached: Sequence[Attached]) -> str:
    """The chips the person attached, then what sadie added itself, each under a heading
    that says who attached it."""
    blocks = []
    for heading, items in (
        (ATTACHED_HEADING, [a for a in attached if a.added_by != "sadie"]),
        (ADDED_HEADING, [a for a in attached if a.added_by == "sadie"]),
    ):
        if not items:
            continue
        parts = [heading]
        for item in items:
            if item.excerpt is not None:
                parts.append(f"[{item.kind}]\n{item.excerpt.render()}")
            else:
                parts.append(f"[{item.kind}] {item.title}\n{item.text.strip()}\n")
        blocks.append("\n".join(parts))
    return "\n\n".join(blocks)


def build_briefing(
    *,
    message: str,
    excerpts: Sequence[Excerpt],
    beliefs: Sequence[BeliefLine] = (),
    observations: Sequence[ObservationLine] = (),
    observation_weight_high: bool = False,
    attached: Sequence[Attached] = (),
    history: Sequence[tuple[str, str]] = (),
    soul: str = "",
    guardrails: str = "",
    voice: str = "",
    tone: str = "",
    memory_empty: bool = False,
    mode: str = "chat",
    extra_blocks: Sequence[str] = (),
    excerpt_order: str = "",
    people: Sequence[str] = (),
    person: str = "",
    wholes: Mapping[str, str] | None = None,
    unshown: Sequence[Excerpt] = (),
    tail: bool = True,
) -> Briefing:
    """Assemble the messages for the reasoner; ``history`` is (role, content), oldest first.

    ``excerpt_order``: "newest" / "oldest" when the question asks for the last / first time
    and the excerpts come in date order (said at the top of the block). ``tail``: ask for the
    citations tail (``CITATION_RULES``); False for a model that never writes it."""
    # What does not change from turn to turn comes first, byte for byte, so the model
    # server's prompt cache reads it once: the standing texts, the voice, the soul summary and
    # the guardrails; then the tone of this message's register; then this turn's memory.
    system: list[str] = [STANDING, CITATION_RULES] if tail else [STANDING]
    if mode == "ask":
        system.append(OPINION_RULE if tail else OPINION_ALONE)
    if voice:
        system.append(voice.strip())
    soul = strip_front_matter(soul)
    if soul.strip():
        system.append(f"{SOUL_HEADING}\n" + soul.strip())
    if guardrails.strip():
        system.append(guardrails.strip())
    if tone:
        system.append(tone.strip())
    refs = short_refs(
        [e.episode_id for e in excerpts]
        + [a.excerpt.episode_id for a in attached if a.excerpt is not None]
    )
    excerpts = [replace(e, ref=refs[e.episode_id]) for e in excerpts]
    attached = [
        replace(a, excerpt=replace(a.excerpt, ref=refs[a.excerpt.episode_id]))
        if a.excerpt is not None
        else a
        for a in attached
    ]

    memory: list[str] = []
    if memory_empty:
        memory.append(EMPTY_MEMORY_NOTE)
    elif excerpts:
        heading = "Excerpts:"
        if excerpt_order in ORDER_NOTES:
            heading = f"Excerpts ({ORDER_NOTES[excerpt_order]}):"
        memory.append(heading + "\n\n" + "\n".join(e.render() for e in excerpts))
    else:
        memory.append("Excerpts:\n\n(no excerpt of the memory matches this message)\n")
    for block in (
        render_beliefs(beliefs),
        render_observations(observations, observation_weight_high),
        *extra_blocks,
        render_attached(attached),
    ):
        if block:
            memory.append(block)
    system_text = "\n\n".join(system) + "\n\n" + "\n\n".join(memory)

    kept = list(history)[-HISTORY_LIMIT:] if mode == "chat" else []
    messages: list[dict[str, str]] = [{"role": "system", "content": system_text}]
    messages.extend({"role": role, "content": content} for role, content in kept)
    messages.append({"role": "user", "content": message})

    shown: dict[str, list[str]] = {}
    for e in excerpts:
        shown.setdefault(e.episode_id.lower(), []).append((e.whole or e.text)[:CHUNK_CAP])
    for item in attached:
        if item.excerpt is not None:
            shown.setdefault(item.excerpt.episode_id.lower(), []).append(item.excerpt.text)
    # A quote from a part of a shown note the model did not read here (another chunk, an
    # earlier turn's passage) is graded by the whole note's text, never called "not in it".
    for key, whole in (wholes or {}).items():
        if key.lower() in shown and whole and whole not in shown[key.lower()]:
            shown[key.lower()].append(whole)
    return Briefing(
        temperature=ASK_TEMPERATURE if mode == "ask" else CHAT_TEMPERATURE,
        system=system_text,
        messages=messages,
        excerpts=list(excerpts),
        shown=shown,
        history_used=len(kept),
        history_dropped=max(0, len(history) - len(kept)),
        extra={
            "voice": [t for t in (voice, tone, guardrails) if t.strip()],
            "person": person or person_name(soul),
            "people": list(people),
        },
        attached=list(attached),
        unshown=list(unshown),
        tail=tail,
    )
