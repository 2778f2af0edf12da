"""One chat turn, in steps: open → brief → send → stream → finish → persist.

Events come out in the spec's order (``events`` module): ``Meta`` and ``EmotionEvent`` once
the conversation exists and both messages are named; ``ContextBudget`` once the request is
written to the model, so that whatever a caller does with it overlaps the model's reading.
The messages themselves are written after that, while the model reads, and are there (the
assistant's as ``streaming``) before the first token is shown. Then the reply's pieces,
``Checking`` while the citation pass runs, ``CitationsEvent``, ``Replace`` when the final
text differs from what streamed, and ``Done`` — or ``ErrorEvent`` in place of the tail, with
what streamed kept as ``error`` or ``interrupted``. A turn closed at any of its events keeps
what it has (``Reply.keep``), so a caller may stop it anywhere. Blocking work (DuckDB,
embeddings) runs in threads so the caller's event loop never stalls.

Each step takes the ``TurnContext`` and the frozen values earlier steps returned
(``Opened``, ``Briefed``, ``Streamed``, ``Final``); the steps it shares with the ask turn are
in ``turns.steps``, and the reply is read and checked by the reply's room (``reply.check``):
this module orchestrates and emits the events. ``Reply`` is the one thing that changes as the turn goes: what a stopped
turn keeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from .. import conversations as conv
from ..chips import add_chip
from ..context import Choice, TurnContext, pick_reasoner
from ..empty_memory import FILL_NOTICE
from ..errors import ConfigError, ErrorKind, ModelError, NotFoundError, SadieError, UsageError
from ..events import (
    WRITING_SOURCES,
    CitationsEvent,
    ContextBudget,
    Done,
    EmotionEvent,
    ErrorEvent,
    Event,
    Meta,
    Replace,
    Status,
    Thinking,
    Token,
    Waiting,
)
from ..policies import guardrail_block, lint, skip_notice
from ..reasoners.base import Ahead, Piece, paced
from ..records_offer import offer_records
from ..reply.check import NO_SOURCES, Checked, Filtered, Sources, run_pass, settled, titles_of
from ..requests import ChatTurn
from ..retrieval import retrieve
from ..telemetry import add_policy_event
from ..titles import make_title
from .common import Steps, tokens_per_second
from .steps import (
    Rules,
    Telemetry,
    Unfinished,
    add_wiki_chips,
    asks_tail,
    attached_for,
    briefing_for,
    fit_for,
    persona_for,
    record,
    record_unfinished,
    rules_for,
)

if TYPE_CHECKING:
    from ..chips import NewChip
    from ..events import RecordOffer
    from ..jsonvalue import JSON, JSONObject
    from ..personas import Persona
    from ..policies import LintResult
    from ..prompt import Attached, Briefing
    from ..reasoners.base import Reasoner
    from ..reply.check import Encode, Grounded, Span
    from ..retrieval import RetrievalResult
    from ..store.db import Database

THINKING_EVERY = 0.25
# How long a turn waits for an embedding model that is loading quickly (ONNX) at launch.
EMBEDDER_WAIT = 3.0
WAITING_EVERY = 1.0
SAVE_EVERY = 1.0
# The Replace reason when sentences the model wrote back in other words were taken out.
ECHO_REASON = "removing echoed instructions"
# Why the kept reply differs from what streamed, when the claim check changed it.
DOUBT_REASON = "its sources do not say this directly"
ANSWERED_REASON = "answered from the sentence it cited"
LOADING = "the embedding model is still loading: searching by keywords and names"


@dataclass(frozen=True)
class Opened:
    """The turn once its conversation, history, reasoner and register are known, and its two
    messages named (written later, while the model reads)."""

    message: str
    kind: str  # chat | regenerate | edit, as telemetry records the turn
    persona: Persona
    choice: Choice
    use_vector: bool  # False: the embedding model is still loading (keywords and names)
    cid: str
    title: str
    history: tuple[tuple[str, str], ...]
    replaced: tuple[str, ...]
    emotion: str
    user_id: str
    reply_id: str
    user_at: datetime
    reply_at: datetime

    @property
    def reasoner(self) -> Reasoner:
        return self.choice.reasoner


@dataclass(frozen=True)
class Briefed:
    """What retrieval found and what the model was told."""

    result: RetrievalResult
    briefing: Briefing
    attached: tuple[Attached, ...]
    rules: Rules
    added: tuple[str, ...] = ()  # chips sadie attached itself this turn, by label
    offered: tuple[RecordOffer, ...] = ()  # records the persona leaves out, offered as chips


@dataclass(frozen=True)
class Streamed:
    """The reply as it streamed: what was shown, through which filter, and how fast."""

    shown: str
    filtered: Filtered
    pieces: int
    seconds: float
    thinking_s: float  # how long the model reasoned before its first shown word
    cut: str | None


@dataclass(frozen=True)
class Final:
    """The reply as it is kept: after the citations, the person's policies and the check of
    its details."""

    text: str
    emotion: str
    status: str  # complete | blocked
    reason: str  # why the text differs from what streamed ("" when it does not)
    sources: Sources
    spans: tuple[Span, ...]
    outcome: LintResult  # what the policies did to the reply
    grounding: float  # the kept reply's grounding score (``reply.check.grounding_score``)


def chat_turn(ctx: TurnContext, request: ChatTurn) -> AsyncGenerator[Event, None]:
    """One chat turn's events, in the order the module's docstring gives."""
    return _ChatRun(ctx, request).events()


class _ChatRun:
    """One turn running: the steps in order, and what a turn stopped at any point keeps."""

    def __init__(self, ctx: TurnContext, request: ChatTurn) -> None:
        self.ctx = ctx
        self.request = request
        self.steps = Steps()
        self.started = time.perf_counter()
        self.reply: Reply | None = None
        self.pieces: Ahead[Piece | None] | None = None

    async def events(self) -> AsyncGenerator[Event, None]:
        message = self.request.message.strip()
        if not message and not self.request.regenerate:
            yield ErrorEvent("the message is empty", code=ErrorKind.USAGE)
            return
        try:
            # Inside the try: a turn stopped while preparing (after the assistant row exists)
            # still leaves that row interrupted, never streaming.
            opened = await self._open(message)
            self.reply = reply = Reply(self.ctx.db, opened, self.ctx.encode)
            for event in opening_events(opened):
                yield event
            if not opened.use_vector:
                yield Status(LOADING)
            # One thread hop for all of it: in the app, every hop back to a busy event loop
            # could wait for a frame to finish painting.
            briefed = await asyncio.to_thread(brief, self.ctx, opened, self.steps)
            reply.briefed = briefed
            for notice in briefed.result.notices:
                yield Status(notice)
            if not briefed.result.chunks and await asyncio.to_thread(self.ctx.memory.is_empty):
                yield Status(FILL_NOTICE)  # how to fill it, whatever the model says
            for err in briefed.rules.errors:
                yield Status(f"policy ignored: {err}")
            # The budget is what the model was sent: it comes once the request is written,
            # so a screen showing it (and the new messages) does that while the model reads.
            self.pieces = await send(opened, briefed, self.steps)
            reply.start_writing()
            yield budget(briefed)
            streamed: Streamed | None = None
            async for item in stream(self.ctx, opened, briefed, self.pieces, reply):
                if isinstance(item, Streamed):
                    streamed = item
                else:
                    yield item
            assert streamed is not None
            async for event in finish(self.ctx, opened, briefed, streamed, reply):
                yield event
            yield await persist(
                self.ctx, opened, briefed, streamed, reply, self.steps, self.started
            )
        except (asyncio.CancelledError, GeneratorExit):
            if not self._keep_with_sources():
                self._keep("interrupted")
            raise
        except ModelError as exc:
            self.ctx.checks.forget()
            self._keep("error", exc.one_line())
            code = getattr(exc, "code", ErrorKind.MODEL)
            yield ErrorEvent(exc.message, code=code, fix=exc.fix, message_id=self._reply_id())
        except SadieError as exc:
            self._keep("error", exc.one_line())
            yield ErrorEvent(exc.message, code=_kind(exc), fix=exc.fix, message_id=self._reply_id())
        finally:
            if self.pieces is not None:  # a turn stopped between the request and its stream
                await self.pieces.aclose()

    async def _open(self, message: str) -> Opened:
        opening = asyncio.ensure_future(open_turn(self.ctx, self.request, message, self.steps))
        try:
            return await asyncio.shield(opening)
        except asyncio.CancelledError:
            # Stopped while opening: the opening runs to its end (its thread would anyway),
            # so that its conversation gets the message and an interrupted reply, as a turn
            # stopped at any later point does. An opening that fails leaves nothing to keep.
            with contextlib.suppress(Exception):
                self.reply = Reply(self.ctx.db, await opening, self.ctx.encode)
            raise

    def _reply_id(self) -> str:
        return self.reply.opened.reply_id if self.reply is not None else ""

    def _keep(self, status: str, error: str | None = None) -> None:
        if self.reply is not None:
            self.reply.keep(status, error)
            self.reply.record(self.ctx, self.started)  # a turn all the same (issue 34)

    def _keep_with_sources(self) -> bool:
        """Stopped while the model wrote its citations: the prose was complete, so the reply
        is kept as complete, with the citations that had arrived checked like a whole
        reply's (``keep_stopped_in_tail``). False when the stop came before that point (or
        the keeping failed): the caller keeps it as interrupted."""
        reply = self.reply
        if reply is None or not reply.in_tail or reply.final is not None:
            return False
        try:
            keep_stopped_in_tail(self.ctx, reply, self.steps, self.started)
        except SadieError:
            return False
        return True


# -- open: the reasoner, the conversation, its history and the register ----------------------
async def open_turn(ctx: TurnContext, request: ChatTurn, message: str, steps: Steps) -> Opened:
    persona = persona_for(request.persona, ctx.settings.chat_persona)
    with steps("reasoner"):
        choice = await pick_reasoner(ctx, request.model)
    embedder = ctx.memory.embedder
    use_vector = embedder.loaded or ctx.wait_for_embedder
    if not use_vector:
        with steps("embedder"):
            # Sent right after launch: the ONNX model is ready in about half a second, so
            # waiting for it beats answering from keywords and names alone.
            use_vector = await asyncio.to_thread(embedder.wait_if_quick, EMBEDDER_WAIT)
    # One thread hop for all of it: in the app, every hop back to a busy event loop could
    # wait for a frame to finish painting.
    found = await asyncio.to_thread(
        _conversation, ctx, request, message, persona, use_vector, steps
    )
    # Named now, written once the request is out (``Reply.start_writing``): the model does
    # not need them, and the writes took ~15 ms of every turn's wait.
    return Opened(
        found.message,
        found.kind,
        persona,
        choice,
        use_vector,
        found.cid,
        found.title,
        found.history,
        found.replaced,
        found.emotion,
        conv.new_id(),
        conv.new_id(),
        conv.now(),
        conv.now(),
    )


@dataclass(frozen=True)
class _Found:
    message: str
    kind: str
    cid: str
    title: str
    history: tuple[tuple[str, str], ...]
    replaced: tuple[str, ...]
    emotion: str


def _conversation(
    ctx: TurnContext,
    request: ChatTurn,
    message: str,
    persona: Persona,
    use_vector: bool,
    steps: Steps,
) -> _Found:
    """The conversation (found, created, or its last exchange to answer again), with the
    request's chips attached, its history, and the register (the classifier may run the
    embedding model)."""
    db = ctx.db
    created = False
    kind: str = "chat"
    replaced: tuple[str, ...] = ()
    with steps("conversation"):
        if request.regenerate:
            if not request.conversation_id:
                raise UsageError("there is no conversation to answer again")
            conversation = conv.get_conversation(db, request.conversation_id)
            last, after = conv.last_exchange(db, conversation.id)
            kind = "edit" if message else "regenerate"
            message = message or last.content
            replaced = (last.id, *(m.id for m in after))
        elif request.conversation_id and not request.new:
            conversation = conv.get_conversation(db, request.conversation_id)
        else:
            conversation = conv.create_conversation(db, make_title(message), persona=persona.name)
            created = True
        if request.chips:
            _attach_chips(db, conversation.id, request.chips, created=created)
        rows = conv.recent_messages(db, conversation.id, 10_000)
    history = tuple(
        (m.role, m.content)
        for m in rows
        if m.role in ("user", "assistant") and m.id not in replaced
    )
    with steps("emotion"):
        emotion = ctx.emotions.choose(message, allow_load=use_vector).value
    return _Found(message, kind, conversation.id, conversation.title, history, replaced, emotion)


def _attach_chips(db: Database, cid: str, chips: Sequence[NewChip], *, created: bool) -> None:
    """The chips sent with the message; one that cannot be attached fails the turn and
    takes back the conversation the turn created for it."""
    try:
        for chip in chips:
            add_chip(db, cid, chip.kind, chip.ref, label=chip.label)
    except SadieError:
        if created:
            conv.forget(db, cid)
        raise


def opening_events(opened: Opened) -> list[Event]:
    """``Meta`` and the register, then the notice of a fall back to offline."""
    reasoner = opened.reasoner
    events: list[Event] = [
        Meta(
            opened.cid,
            reasoner.model,
            opened.persona.name,
            reasoner.offline,
            opened.reply_id,
            opened.user_id,
            opened.title,
            opened.replaced,
        ),
        EmotionEvent(opened.emotion),
    ]
    if opened.choice.notice:
        events.append(Status(opened.choice.notice))
    return events


# -- brief: retrieval, chips, policies and the briefing --------------------------------------
def brief(ctx: TurnContext, opened: Opened, steps: Steps) -> Briefed:
    """Retrieval, the chips, the policies and the briefing (blocking)."""
    memory = ctx.memory
    previous = next((c for r, c in reversed(opened.history) if r == "user"), None)
    with steps("retrieval"):
        result = retrieve(
            memory,
            opened.message,
            opened.persona,
            previous=previous,
            use_vector=opened.use_vector,
        )
    with steps("chips"):
        added = add_wiki_chips(memory, opened.cid, opened.message)
        attached = attached_for(memory, opened.cid)
    with steps("records"):
        # Offered, never briefed: the persona's rule holds until the person attaches one.
        offered = offer_records(
            memory, opened.message, opened.persona, opened.cid, use_vector=opened.use_vector
        )
    with steps("policies"):
        rules = rules_for(memory)
    with steps("briefing"):
        briefing = briefing_for(
            memory,
            opened.message,
            result,
            opened.persona,
            opened.emotion,
            attached=attached,
            history=opened.history,
            guardrails=guardrail_block(rules.policies),
            fit=fit_for(ctx.settings, "chat"),
            tail=asks_tail(ctx, opened.reasoner),
        )
    return Briefed(result, briefing, attached, rules, added, offered)


def budget(briefed: Briefed) -> ContextBudget:
    result, briefing = briefed.result, briefed.briefing
    return ContextBudget(
        chunks=len(result.chunks),
        messages=briefing.history_used,
        messages_dropped=briefing.history_dropped,
        chips=len(briefed.attached),
        retrieval_ms=round(result.elapsed_ms, 1),
        vector=result.vector_used,
        added=briefed.added,
        offered=briefed.offered,
    )


# -- stream: the model's pieces through the filter and the guard ------------------------------
async def send(opened: Opened, briefed: Briefed, steps: Steps) -> Ahead[Piece | None]:
    """Start the model's stream and wait until its request is written (or has failed)."""
    sent = asyncio.Event()
    pieces = opened.reasoner.stream(briefed.briefing, opened.message, sent=sent.set)
    with steps("send"):
        ahead = Ahead(paced(pieces, WAITING_EVERY))
        await ahead.started(sent)
    return ahead


async def stream(
    ctx: TurnContext,
    opened: Opened,
    briefed: Briefed,
    pieces: Ahead[Piece | None],
    reply: Reply,
) -> AsyncIterator[Event | Streamed]:
    """The reply's events as it streams, then (last) what streamed."""
    reasoner = opened.reasoner
    filtered = Filtered(briefed.briefing, ctx.settings.reply_max_chars)
    reply.filtered = filtered
    started = time.perf_counter()
    think_started: float | None = None
    last_think = 0.0
    last_save = started
    count = 0
    thinking_s = 0.0
    thought = False  # reasoning came in the separate thinking field
    async with aclosing(pieces) as stream:
        async for piece in stream:
            await reply.written()
            now = time.perf_counter()
            if piece is None:  # a second passed with nothing from the model
                if not count and think_started is None:
                    yield Waiting(round(now - started))
                continue
            if piece.kind == "thinking":
                visible, thinking = "", True
                thought = True
            else:
                count += 1
                reply.pieces = count
                visible = filtered.feed(piece.text)
                thinking = filtered.filter.thinking
            if thinking and not reply.shown:
                think_started = think_started or now
                if now - last_think >= THINKING_EVERY:
                    last_think = now
                    yield Thinking(round(now - think_started, 1))
            if visible:
                if think_started is not None and not reply.shown:
                    thinking_s = round(now - think_started, 1)
                reply.shown += visible
                yield Token(visible)
                if now - last_save >= SAVE_EVERY:
                    last_save = now
                    await asyncio.to_thread(reply.save, reply.shown)
            if filtered.filter.diverted and not reply.in_tail and reply.shown.strip():
                # The prose is complete; the model writes its citations next, which on a
                # slow model takes seconds: say so, and from here a stop keeps the reply.
                reply.in_tail = True
                yield Status(WRITING_SOURCES)
            if filtered.guard.stopped:
                break  # closes the model's stream: a loop or a runaway reply
    await reply.written()
    rest = filtered.finish()
    if rest:
        reply.shown += rest
        yield Token(rest)
    if not reply.shown.strip():
        # Never an empty "complete" reply: an unclosed <think> (or reasoning and nothing
        # after it) is the model failing to answer, kept as an error like any other.
        raise filtered.no_answer(reasoner, thought)
    seconds = max(1e-6, time.perf_counter() - started)
    yield Streamed(reply.shown, filtered, count, seconds, thinking_s, filtered.cut(reasoner))


# -- finish: citations, policies and unsupported details -------------------------------------
async def finish(
    ctx: TurnContext, opened: Opened, briefed: Briefed, streamed: Streamed, reply: Reply
) -> AsyncIterator[Event]:
    """``Checking`` while the citation pass runs, ``CitationsEvent``, ``Replace`` and a
    changed register; the outcome is left on ``reply.final``."""
    briefing, reasoner, filtered = briefed.briefing, opened.reasoner, streamed.filtered
    # The reply's room (``reply.check``) reads, polices, passes and settles; the turn says so.
    grounded = await asyncio.to_thread(filtered.read, streamed.shown, briefing, reasoner)
    reply.grounded = grounded  # a turn stopped during the pass keeps the tail's citations
    cap = ctx.settings.citation_pass_timeout
    async with aclosing(run_pass(grounded, briefing, reasoner, cap=cap)) as checking:
        async for event in checking:
            yield event
    titles = titles_of(briefed.result, briefed.attached)
    checked = await asyncio.to_thread(settled, grounded, briefing, titles, ctx.encode)
    # The person's own patterns, each on a time budget: in a thread, so that even a slow
    # one never stalls the caller's event loop (the TUI keeps repainting and hears Esc).
    outcome = await asyncio.to_thread(lint, grounded.text, briefed.rules.policies)
    for name in outcome.skipped:
        yield Status(skip_notice(name))
    final = judge(opened, checked, filtered, outcome)
    reply.final = final
    yield CitationsEvent(
        final.sources.views,
        unsupported=tuple(sp.as_json() for sp in final.spans),
        repaired=grounded.repaired,
        tail=grounded.tail,
        found=final.sources.found,
        note=grounded.pass_reason,
    )
    if final.text != streamed.shown:
        yield Replace(final.text, final.reason)
    if final.emotion != opened.emotion:
        yield EmotionEvent(final.emotion)


def judge(opened: Opened, checked: Checked, filtered: Filtered, outcome: LintResult) -> Final:
    """The kept text after the policies: a rewrite replaces it, a block also takes its
    sources and makes the register serious; the reply's room keeps it (``Checked.kept``:
    answered from its quote, or led by the doubt, its details checked) unless nothing is to
    be checked (a block, or an offline answer: sadie's own framing around verbatim quotes).
    Why the kept text differs from what streamed is the turn's to say."""
    grounded, emotion, sources = checked.grounded, opened.emotion, checked.sources
    reason = "citations list" if grounded.list_removed else ""
    if filtered.near_echoes:
        reason = ECHO_REASON
    blocked = outcome.blocked_by
    if outcome.changed:
        reason = f"policy {blocked.name}" if blocked else "policy rewrite"
        if blocked is not None:
            emotion, sources = "serious", NO_SOURCES
    kept = checked.kept(
        outcome.text if outcome.changed else None,
        rewritten=outcome.changed,
        checks=blocked is None and not opened.reasoner.offline,
    )
    if kept.answered:
        # It said the notes do not say, citing the sentence that does: answered from it.
        reason = ANSWERED_REASON
    elif kept.doubted and not outcome.changed:
        # What it cites does not establish the answer: the person reads that first (a
        # policy's rewrite keeps its own reason).
        reason = DOUBT_REASON
    status = "blocked" if blocked is not None else "complete"
    return Final(kept.text, emotion, status, reason, sources, kept.spans, outcome, kept.score)


# -- persist: the stored reply, the conversation's state and telemetry -----------------------
async def persist(
    ctx: TurnContext,
    opened: Opened,
    briefed: Briefed,
    streamed: Streamed,
    reply: Reply,
    steps: Steps,
    started: float,
) -> Done:
    """Write the reply as kept, the conversation's state, the policies' hits and the turn's
    telemetry (in a thread); ``Done``."""
    final, grounded, reasoner = reply.final, reply.grounded, opened.reasoner
    assert final is not None and grounded is not None
    latency = (time.perf_counter() - started) * 1000
    tokens = getattr(reasoner, "last_eval_count", 0) or streamed.pieces
    rate = tokens_per_second(reasoner, tokens, streamed.seconds)
    metadata = _metadata(opened, briefed, streamed, grounded, final, steps, tokens, rate)
    await asyncio.to_thread(_store, ctx, opened, briefed, grounded, final, latency, metadata)
    return Done(
        opened.reply_id,
        round(latency, 1),
        len(briefed.result.chunks),
        final.status,
        tokens,
        rate,
        final.emotion,
        cut=streamed.cut or "",
    )


def _metadata(
    opened: Opened,
    briefed: Briefed,
    streamed: Streamed,
    g: Grounded,
    final: Final,
    steps: Steps,
    tokens: int,
    rate: float,
) -> JSONObject:
    briefing, result, outcome = briefed.briefing, briefed.result, final.outcome
    metadata: JSONObject = {
        "persona": opened.persona.name,
        "prompt_version": briefing.version,
        "chunks_considered": len(result.chunks),
        "messages_in_context": briefing.history_used,
        "messages_dropped": briefing.history_dropped,
        "chips": len(briefed.attached),
        "retrieval_ms": round(result.elapsed_ms, 1),
        "steps_ms": {name: ms for name, ms in steps.ms.items()},
        "tokens": tokens,
        "tokens_per_s": rate,
        "offline": opened.reasoner.offline,
        "dropped_citations": len(g.policed.dropped),
        # What a policy withheld is not kept (issue 23): only an echo's original is.
        "streamed_text": None
        if outcome.changed or final.text == streamed.shown
        else streamed.shown,
        "tail": g.tail,
        "repaired": g.repaired,
        "citation_pass": g.pass_note,
        "pass_ms": round(g.pass_ms, 1),
        "thinking_s": streamed.thinking_s,
        "unsupported": [sp.as_json() for sp in final.spans],
        "doubt": g.doubt,
        "found_by_sadie": [v.as_json() for v in final.sources.found],
        "cut": streamed.cut,
        "echoes_hidden": streamed.filtered.echoes,
    }
    if outcome.blocked_by is not None:
        metadata["blocked_by"] = outcome.blocked_by.name
    if outcome.skipped:
        metadata["policies_skipped"] = list(outcome.skipped)
    return metadata


def _store(
    ctx: TurnContext,
    opened: Opened,
    briefed: Briefed,
    grounded: Grounded,
    final: Final,
    latency: float,
    metadata: JSONObject,
) -> None:
    db, views = ctx.db, final.sources.views
    conv.update_message(
        db,
        opened.reply_id,
        content=final.text,
        status=final.status,
        emotion=final.emotion,
        citations=[v.as_json() for v in views],
        latency_ms=latency,
        metadata=metadata,
    )
    summary = None
    if conv.count_messages(db, opened.cid) <= 2:
        summary = conv.summary_from_first_exchange(opened.message, final.text)
    conv.set_state(db, opened.cid, emotion=final.emotion, summary=summary)
    for hit in final.outcome.hits:
        add_policy_event(db, opened.cid, opened.reply_id, hit.policy, hit.action, hit.match)
    spans = len(final.spans)
    telemetry = Telemetry(
        kind=opened.kind,
        query=opened.message,
        model=opened.reasoner.model,
        persona=opened.persona.name,
        briefing=briefed.briefing,
        result=briefed.result,
        grounded=grounded,
        grounding=final.grounding,
        latency_ms=latency,
        cited=views,
        unsupported=spans,
        cut=cut if isinstance(cut := metadata.get("cut"), str) else None,
        conversation_id=opened.cid,
        message_id=opened.reply_id,
    )
    record(ctx, opened.reasoner, telemetry)


def keep_stopped_in_tail(ctx: TurnContext, reply: Reply, steps: Steps, started: float) -> None:
    """A reply stopped after its prose, while the model wrote its citations (or while the
    citation pass ran after a tail that gave nothing): kept as complete, its citations — the
    complete entries of the tail so far — policed and settled as ``finish`` does, without
    the citation pass; ``metadata.stopped_in_sources`` counts the entries that had arrived.
    Blocking, and synchronous on purpose: it runs while the turn is being cancelled."""
    opened, briefed, filtered = reply.opened, reply.briefed, reply.filtered
    if briefed is None or filtered is None or not reply.shown.strip():
        raise UsageError("nothing of the reply to keep")
    reply.write_rows()
    text = filtered.unecho(reply.shown)
    if not text.strip():
        raise UsageError("nothing of the reply to keep")
    briefing, grounded = briefed.briefing, reply.grounded
    if grounded is None:
        closed = closed_list(filtered.filter.tail)
        grounded = filtered.own(text, briefing, tail=closed, diverted=True)
    arrived = len(grounded.policed.citations) + len(grounded.policed.dropped)
    titles = titles_of(briefed.result, briefed.attached)
    checked = settled(grounded, briefing, titles, reply.encode)
    outcome = lint(grounded.text, briefed.rules.policies)
    final = judge(opened, checked, filtered, outcome)
    reply.grounded, reply.final = grounded, final
    seconds = max(1e-6, time.perf_counter() - started)
    streamed = Streamed(reply.shown, filtered, reply.pieces, seconds, 0.0, None)
    rate = tokens_per_second(opened.reasoner, reply.pieces, seconds)
    metadata = _metadata(opened, briefed, streamed, grounded, final, steps, reply.pieces, rate)
    metadata["stopped_in_sources"] = arrived
    latency = (time.perf_counter() - started) * 1000
    _store(ctx, opened, briefed, grounded, final, latency, metadata)


# -- the reply so far: its two rows, and what a stopped turn keeps ----------------------------
class Reply:
    """What a turn has of its reply so far, so that a turn stopped or failing at any point
    keeps it: the two messages (written once), the text shown, the citations it had."""

    def __init__(self, db: Database, opened: Opened, encode: Encode | None = None) -> None:
        self.db = db
        self.opened = opened
        self.encode = encode
        self.briefed: Briefed | None = None
        self.filtered: Filtered | None = None
        self.grounded: Grounded | None = None
        self.final: Final | None = None
        self.shown = ""
        self.pieces = 0  # the model's pieces so far
        self.in_tail = False  # the prose is complete: the model is writing its citations
        self._lock = threading.Lock()
        self._written = False
        self._writing: asyncio.Future[None] | None = None

    def start_writing(self) -> None:
        """Write the two rows in a thread, now that the model has the request: they are
        there before anything of the reply is shown (or saved)."""
        self._writing = asyncio.ensure_future(asyncio.to_thread(self.write_rows))
        # A turn that fails before awaiting it writes the rows itself (``keep``).
        self._writing.add_done_callback(lambda done: done.cancelled() or done.exception())

    async def written(self) -> None:
        """Wait for the rows (written here when nothing has started writing them)."""
        writing, self._writing = self._writing, None
        if writing is not None:
            await writing
        elif not self._written:
            await asyncio.to_thread(self.write_rows)

    def write_rows(self) -> None:
        """The person's message and the reply's ``streaming`` row (and the replaced exchange
        taken out), once: from the thread ``start_writing`` started, or from a turn that
        failed or was stopped before it got that far."""
        with self._lock:
            if self._written:
                return
            o, db = self.opened, self.db
            conv.add_message(
                db,
                o.cid,
                "user",
                o.message,
                "complete",
                emotion=o.emotion,
                created_at=o.user_at,
                message_id=o.user_id,
            )
            conv.add_message(
                db,
                o.cid,
                "assistant",
                "",
                "streaming",
                emotion=o.emotion,
                model=o.reasoner.model,
                metadata={"persona": o.persona.name},
                created_at=o.reply_at,
                message_id=o.reply_id,
            )
            if o.replaced:  # only now: a turn stopped before this still shows the old ones
                conv.supersede(db, list(o.replaced))
            self._written = True

    def save(self, content: str) -> None:
        """What has streamed so far (blocking)."""
        conv.update_message(self.db, self.opened.reply_id, content=content)

    def keep(self, status: str, error: str | None = None) -> None:
        """What streamed, kept as ``interrupted`` or ``error`` (never left ``streaming``)."""
        try:
            self.write_rows()  # waits for the thread writing them, if it is running
            meta: JSONObject = {"error": error} if error else {}
            views, found = self._citations()
            if found:
                kept: list[JSON] = [*found]
                meta["found_by_sadie"] = kept
            conv.update_message(
                self.db,
                self.opened.reply_id,
                content=self.shown,
                status=status,
                metadata=meta or None,
                citations=views or None,
            )
        except SadieError:
            pass  # the database itself failed; the error already reached the person

    def record(self, ctx: TurnContext, started: float) -> None:
        """The turn's telemetry, for a reply kept as ``interrupted`` or ``error``: what it
        was briefed with, when it got that far (blocking)."""
        o, briefed = self.opened, self.briefed
        unfinished = Unfinished(
            o.kind,
            o.message,
            o.reasoner.model,
            o.persona.name,
            started,
            result=briefed.result if briefed is not None else None,
            version=briefed.briefing.version if briefed is not None else None,
            conversation_id=o.cid,
            message_id=o.reply_id,
        )
        with contextlib.suppress(SadieError):  # the database failed: the error is told already
            record_unfinished(ctx, unfinished)

    def _citations(self) -> tuple[list[JSONObject], list[JSONObject]]:
        """What a stopped reply keeps of its sources: its tail's citations (the complete
        entries of a tail cut off mid-stream), else sadie's own sentence matches."""
        briefed, grounded = self.briefed, self.grounded
        if briefed is None or not self.shown.strip():
            return [], []
        if grounded is None:
            if self.filtered is None:
                return [], []
            tail = self.filtered.filter
            grounded = self.filtered.own(
                self.shown, briefed.briefing, tail=closed_list(tail.tail), diverted=tail.diverted
            )
        titles = titles_of(briefed.result, briefed.attached)
        sources = settled(grounded, briefed.briefing, titles, self.encode).sources
        return [v.as_json() for v in sources.views], [v.as_json() for v in sources.found]


def closed_list(tail: str) -> str:
    """A citations tail cut off mid-stream, up to its last complete entry and closed again
    (``[{"a": 1}, {"b"`` → ``[{"a": 1}]``); what cannot be closed is returned as it is."""
    end = tail.rfind("}")
    if "[" not in tail or end < 0:
        return tail
    return tail[: end + 1] + "]"


def _kind(exc: SadieError) -> ErrorKind:
    if isinstance(exc, NotFoundError):
        return ErrorKind.NOT_FOUND
    if isinstance(exc, UsageError | ConfigError):
        return ErrorKind.USAGE
    return ErrorKind.STORAGE
