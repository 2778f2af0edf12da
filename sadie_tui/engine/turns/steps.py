"""The steps both turns are made of before and after the reply is checked: the persona, the
person's rules, the chips, the briefing, and the turn's telemetry.

Each step is a function over the ``TurnContext`` and the values earlier steps returned;
what a step returns is frozen. The chat turn (``turns.chat``) streams its draft and writes
the conversation; the ask turn (``turns.ask``) drafts in one piece and writes only
telemetry. Between the briefing and the telemetry, both hand the reply to the reply's room
(``reply.check``: filtering, the citations policed, the pass, support, unsupported details,
settling).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..chips import add_chip, list_chips, resolve
from ..errors import SadieError
from ..passages import Fit, about_self, bears_on, choose, who
from ..personas import Persona, get_persona
from ..policies import Policy, load_policies
from ..prompt import TONE, Attached, Briefing, Excerpt, build_briefing, person_name
from ..reasoners.rates import TAIL, Rates
from ..store.episodes import episode_texts, people_named
from ..telemetry import record_turn
from ..wiki_pages import who_is, wiki_for
from .common import cited_chunk_ids, excerpt_order, excerpts_of

if TYPE_CHECKING:
    from ...config import Settings
    from ..context import TurnContext
    from ..events import CitationView
    from ..memory import Memory
    from ..reasoners.base import Reasoner
    from ..reply.check import Grounded
    from ..retrieval import RetrievalResult


def fit_for(settings: Settings, mode: str) -> Fit:
    """How much a model reads in ``mode`` (ask | chat): config.toml's ``ask_passages`` /
    ``chat_passages`` and ``passage_chars`` (0 passages: every retrieved chunk, whole)."""
    passages = settings.ask_passages if mode == "ask" else settings.chat_passages
    return Fit(passages, settings.passage_chars)


def persona_for(name: str | None, default: str) -> Persona:
    """The named persona, or the turn's default (shipped, or the person's own file)."""
    from ...paths import config_dir  # noqa: PLC0415 - paths sits a floor above the engine

    return get_persona(name or default, config_dir() / "personas")


@dataclass(frozen=True)
class Rules:
    """The person's chat policies, and the policy file's errors (each shown as a notice)."""

    policies: tuple[Policy, ...]
    errors: tuple[str, ...] = ()


def rules_for(memory: Memory) -> Rules:
    policy_set = load_policies(memory.home / "policies.toml")
    return Rules(policy_set.for_scope("chat"), tuple(policy_set.errors))


def attached_for(memory: Memory, conversation_id: str) -> tuple[Attached, ...]:
    """The conversation's chips with their content (one whose content is gone is left out)."""
    items: list[Attached] = []
    for chip in list_chips(memory.db, conversation_id):
        try:
            content = resolve(memory.db, chip)
        except SadieError:
            continue
        excerpt = None
        if content.episode_id:
            excerpt = Excerpt(content.episode_id, content.date or "", content.title, content.text)
        items.append(
            Attached(chip.kind, content.title, content.text, excerpt, added_by=chip.added_by)
        )
    return tuple(items)


def add_wiki_chips(memory: Memory, conversation_id: str, message: str) -> tuple[str, ...]:
    """The wiki page of someone a "who is X" message names, attached to the conversation as a
    chip marked as sadie's (``added_by``), unless a chip holds it already: what sadie puts in
    the briefing is always a chip the person sees and can remove. Their labels."""
    added = []
    for page in wiki_for(memory, message):
        held = {c.id for c in list_chips(memory.db, conversation_id)}
        try:
            chip = add_chip(memory.db, conversation_id, "wiki", page.title, added_by="sadie")
        except SadieError:
            continue
        if chip.id not in held:
            added.append(chip.label)
    return tuple(added)


def briefing_for(
    memory: Memory,
    message: str,
    result: RetrievalResult,
    persona: Persona,
    emotion: str,
    *,
    mode: str = "chat",
    wiki_query: str | None = None,
    attached: Sequence[Attached] = (),
    history: Sequence[tuple[str, str]] = (),
    guardrails: str = "",
    extra: Sequence[str] = (),
    fit: Fit | None = None,
    tail: bool = True,
) -> Briefing:
    """What the model is told (blocking: the soul summary, the people the message names and
    the wiki pages are read). ``fit``: how many of the retrieved chunks it reads, and how long
    each (``passages``; None: every chunk, whole); ``tail``: whether it is asked for the
    citations tail (``asks_tail``). The beliefs and observations it sees are
    those that bear on the message (all of them for a persona that weighs records above
    self-report, the skeptic's lens); the soul summary is who the person is, whole only when
    the message is about them. The wiki pages the question names come after the chips, less
    those a chip already holds."""
    named = {(a.kind, a.title) for a in attached}
    wiki = [w for w in wiki_for(memory, wiki_query or message) if (w.kind, w.title) not in named]
    people = people_named(memory.db, _word_runs(message))
    excerpts = retrieved = excerpts_of(result)
    beliefs, observations, blocks = list(result.beliefs), list(result.observations), list(extra)
    whole_soul = soul = memory.soul()
    if fit is not None:
        excerpts = choose(excerpts, message, fit, people, dated=excerpt_order(result))
        lens = persona.observation_weight > 1.0
        beliefs = [b for b in beliefs if lens or bears_on(b.statement, message)]
        observations = [o for o in observations if lens or bears_on(o.text, message)]
        blocks = [b for b in blocks if lens or bears_on(b, message, 0.34)]
        if who_is(message) is not None:
            # A question about someone else: the person's own profile is what a small model
            # copies in place of the answer ("Hana is a backend engineer from Leeds…").
            soul = ""
        elif not about_self(message):
            soul = who(soul)
    return build_briefing(
        message=message,
        excerpts=excerpts,
        excerpt_order=excerpt_order(result),
        beliefs=beliefs,
        observations=observations,
        observation_weight_high=persona.observation_weight > 1.0,
        attached=[*attached, *wiki],
        history=list(history),
        soul=soul,
        guardrails=guardrails,
        voice=persona.voice,
        # The register's tone is the conversation's: a one-shot answer is the persona's lens
        # alone ("precise and plain", not "take a celebrating tone"), and its instructions stay
        # one prefix the server's cache reads once (each new token costs a 1.5B model on a
        # CPU ~17 ms, measured from the bridge's log).
        tone=TONE.get(emotion, "") if mode == "chat" else "",
        mode=mode,
        extra_blocks=blocks,
        memory_empty=mode == "chat" and memory.is_empty(),
        people=people,
        person=person_name(whole_soul),
        wholes=episode_texts(memory.db, [e.episode_id for e in excerpts]),
        unshown=_unread(retrieved, excerpts),
        tail=tail,
    )


def asks_tail(ctx: TurnContext, reasoner: Reasoner) -> bool:
    """Whether the briefing asks ``reasoner`` for the citations tail: unless its model has
    not been writing one (the ``tail`` habit, ``reasoners.rates``; ``record`` keeps count)."""
    return reasoner.offline or habits(ctx, reasoner).pays(reasoner.model, TAIL)


def habits(ctx: TurnContext, reasoner: Reasoner) -> Rates:
    """Where ``reasoner``'s measured rates and habits are kept: its own, else the memory's."""
    own = getattr(reasoner, "rates", None)
    return own if isinstance(own, Rates) else ctx.rates


def _unread(retrieved: Sequence[Excerpt], read: Sequence[Excerpt]) -> list[Excerpt]:
    """The retrieved excerpts of notes the model reads nothing of."""
    shown = {e.episode_id for e in read}
    return [e for e in retrieved if e.episode_id not in shown]


def _word_runs(text: str, longest: int = 3) -> list[str]:
    """The message's words and runs of up to ``longest`` words, case-folded (entity keys)."""
    words = re.findall(r"[\w'’-]+", text.casefold())
    runs = {
        " ".join(words[i : i + n]) for n in range(1, longest + 1) for i in range(len(words) - n + 1)
    }
    return sorted(runs)


@dataclass(frozen=True)
class Telemetry:
    """One turn as the ``turns`` table records it."""

    kind: str  # chat | regenerate | edit | ask
    query: str
    model: str
    persona: str
    briefing: Briefing
    result: RetrievalResult
    grounded: Grounded
    grounding: float
    latency_ms: float
    cited: tuple[CitationView, ...] = ()
    abstained: bool = False
    unsupported: int = 0
    cut: str | None = None
    conversation_id: str | None = None
    message_id: str | None = None


def record(ctx: TurnContext, reasoner: Reasoner, t: Telemetry) -> None:
    """Write the turn and its retrievals, and the model's measured rates (blocking)."""
    record_turn(
        ctx.db,
        kind=t.kind,
        query=t.query,
        model=t.model,
        persona=t.persona,
        prompt_version=t.briefing.version,
        grounding=t.grounding,
        abstained=t.abstained,
        latency_ms=t.latency_ms,
        conversation_id=t.conversation_id,
        message_id=t.message_id,
        chunks=t.result.chunks,
        cited_chunk_ids=cited_chunk_ids(t.result, t.cited),
        tail=t.grounded.tail,
        repaired=t.grounded.repaired,
        citation_pass=t.grounded.pass_note,
        unsupported=t.unsupported,
        cut=t.cut,
    )
    rates = habits(ctx, reasoner)
    # A reply cut short (a loop, its length, the token cap) never reached its tail: it says
    # nothing of the habit.
    if not reasoner.offline and t.cut is None:
        if t.briefing.tail:
            rates.tried(reasoner.model, TAIL, paid=t.grounded.tail != "missing")
        else:
            rates.skipped(reasoner.model, TAIL)
    rates.save()  # the model's measured rates and habits, beside the memory


@dataclass(frozen=True)
class Unfinished:
    """A turn that wrote no reply of its own, as the ``turns`` table still records it: an ask
    on an empty memory, a chat that ended in an error or was stopped. ``result`` and
    ``version``: what it was briefed with, when it got that far."""

    kind: str
    query: str
    model: str
    persona: str
    started: float
    abstained: bool | None = None
    result: RetrievalResult | None = None
    version: str | None = None
    conversation_id: str | None = None
    message_id: str | None = None


def record_unfinished(ctx: TurnContext, t: Unfinished) -> None:
    """Write the turn (and what it retrieved), no grounding (blocking; nothing on a read-only
    memory, whose search says so itself)."""
    if ctx.db.read_only:
        return
    record_turn(
        ctx.db,
        kind=t.kind,
        query=t.query,
        model=t.model,
        persona=t.persona,
        prompt_version=t.version,
        grounding=None,
        abstained=t.abstained,
        latency_ms=(time.perf_counter() - t.started) * 1000,
        conversation_id=t.conversation_id,
        message_id=t.message_id,
        chunks=t.result.chunks if t.result is not None else (),
    )
