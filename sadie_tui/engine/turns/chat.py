"""One chat turn, in small steps: prepare → brief → stream → check → persist.

Events come out in the spec's order (``events`` module): ``Meta`` and ``EmotionEvent`` once
the conversation exists and both messages are named; ``ContextBudget`` once the request is
written to the model, so that whatever a caller does with it overlaps the model's reading.
The messages themselves are written after that, while the model reads, and are there (the
assistant's as ``streaming``) before the first token is shown. Then the reply's pieces,
``Checking`` while the citation pass runs, ``CitationsEvent``, ``Replace`` when the final
text differs from what streamed, and ``Done`` — or ``ErrorEvent`` in place of the tail, with
what streamed kept as ``error`` or ``interrupted``. Blocking work (DuckDB, embeddings) runs
in threads so the caller's event loop never stalls.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import conversations as conv
from ..chips import add_chip
from ..errors import ConfigError, ErrorKind, ModelError, NotFoundError, SadieError, UsageError
from ..events import (
    Checking,
    CitationsEvent,
    CitationView,
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
from ..prompt import TONE, Attached, Briefing, build_briefing
from ..reasoners.base import Ahead, Piece, paced
from ..reply.grounding import Grounded, needs_pass, own_citations, repair, settle
from ..retrieval import RetrievalResult, retrieve
from ..telemetry import add_policy_event, record_turn
from ..titles import make_title
from ..wiki_pages import wiki_for
from .common import (
    Filtered,
    Steps,
    checked_details,
    citation_views,
    cited_chunk_ids,
    count_details,
    excerpt_order,
    excerpts_of,
    found_views,
    grounding_score,
    keep_rates,
    no_answer,
    tokens_per_second,
)
from .host import TurnHost

if TYPE_CHECKING:
    from ..chips import NewChip
    from ..personas import Persona

THINKING_EVERY = 0.25
# How long a turn waits for an embedding model that is loading quickly (ONNX) at launch.
EMBEDDER_WAIT = 3.0
WAITING_EVERY = 1.0
SAVE_EVERY = 1.0
CHECKING_EVERY = 1.0
# The Replace reason when sentences the model wrote back in other words were taken out.
ECHO_REASON = "removing echoed instructions"


@dataclass
class ChatTurn:
    """The state of one turn as its steps fill it in."""

    host: TurnHost
    message: str
    conversation_id: str | None = None
    persona_name: str | None = None
    new: bool = False
    # Answer the conversation's last message again (``message`` empty) or an edit of it:
    # the old exchange is kept as ``superseded``, out of the conversation.
    regenerate: bool = False
    model: str | None = None  # this turn's model; None: the configured one
    # Attached once the conversation is found or created, before the turn reads its chips.
    chips: tuple[NewChip, ...] = ()
    started: float = field(default_factory=time.perf_counter)
    step: Steps = field(default_factory=Steps)
    # prepare
    persona: Persona | None = None
    cid: str = ""
    title: str = ""
    history: list[tuple[str, str]] = field(default_factory=list)
    reasoner: Any = None  # a Reasoner once prepare() has run
    notice: str | None = None
    emotion: str = ""
    use_vector: bool = True  # False: the embedding model is still loading (keywords and names)
    user_id: str = ""
    reply_id: str = ""
    replaced: list[str] = field(default_factory=list)
    _stamps: tuple[datetime, datetime] = (datetime.min, datetime.min)  # when each was sent
    _writing: asyncio.Future[None] | None = None
    _written: bool = False
    _write_lock: threading.Lock = field(default_factory=threading.Lock)
    _pieces: Ahead[Piece | None] | None = None  # the model's stream, once its request is out
    kind: str = "chat"  # chat | regenerate | edit, as telemetry records the turn
    # brief
    result: RetrievalResult | None = None
    attached: list[Attached] = field(default_factory=list)
    policies: Any = None
    briefing: Briefing | None = None
    # stream
    shown: str = ""
    pieces: int = 0
    gen_seconds: float = 0.0
    thinking_s: float = 0.0  # how long the model reasoned before its first shown word
    cut: str | None = None
    # check
    grounded: Grounded | None = None

    @property
    def db(self) -> Any:
        return self.host.memory.db

    async def run(self) -> AsyncIterator[Event]:
        self.message = self.message.strip()
        if not self.message and not self.regenerate:
            yield ErrorEvent("the message is empty", code=ErrorKind.USAGE)
            return
        try:
            # Inside the try: a turn stopped while preparing (after the assistant row exists)
            # still leaves that row interrupted, never streaming.
            async for event in self.prepare():
                yield event
            async for event in self.brief():
                yield event
            async for event in self.stream():
                yield event
            async for event in self.check_and_persist():
                yield event
        except (asyncio.CancelledError, GeneratorExit):
            self._save_partial("interrupted")
            raise
        except ModelError as exc:
            self.host.forget_status()
            self._save_partial("error", exc.one_line())
            code = getattr(exc, "code", ErrorKind.MODEL)
            yield ErrorEvent(exc.message, code=code, fix=exc.fix, message_id=self.reply_id)
        except SadieError as exc:
            self._save_partial("error", exc.one_line())
            yield ErrorEvent(exc.message, code=_kind(exc), fix=exc.fix, message_id=self.reply_id)
        finally:
            await self._close_stream()  # a turn stopped between the request and its stream

    # -- prepare: the reasoner, the conversation, its history and the register --------------
    async def prepare(self) -> AsyncIterator[Event]:
        host, step = self.host, self.step
        self.persona = host.persona(self.persona_name, host.settings.chat_persona)
        with step("reasoner"):
            self.reasoner, self.notice = await host.pick_reasoner(self.model)
        embedder = host.memory.embedder
        self.use_vector = embedder.loaded or host.wait_for_embedder
        if not self.use_vector:
            with step("embedder"):
                # Sent right after launch: the ONNX model is ready in about half a second, so
                # waiting for it beats answering from keywords and names alone.
                self.use_vector = await asyncio.to_thread(embedder.wait_if_quick, EMBEDDER_WAIT)
        # One thread hop for all of it: in the app, every hop back to a busy event loop
        # could wait for a frame to finish painting.
        await asyncio.to_thread(self._prepare)
        # Named now, written once the request is out (``_write_rows``): the model does
        # not need them, and the writes took ~15 ms of every turn's wait.
        self.user_id, self.reply_id = conv.new_id(), conv.new_id()
        self._stamps = (conv.now(), conv.now())
        yield Meta(
            self.cid,
            self.reasoner.model,
            self.persona.name,
            self.reasoner.offline,
            self.reply_id,
            self.user_id,
            self.title,
            tuple(self.replaced),
        )
        yield EmotionEvent(self.emotion)
        if self.notice:
            yield Status(self.notice)

    def _prepare(self) -> None:
        """The conversation (found, created, or its last exchange to answer again), its
        history, and the register (the classifier may run the embedding model)."""
        db, step = self.db, self.step
        assert self.persona is not None
        created = False
        with step("conversation"):
            if self.regenerate:
                if not self.conversation_id:
                    raise UsageError("there is no conversation to answer again")
                conversation = conv.get_conversation(db, self.conversation_id)
                last, after = conv.last_exchange(db, conversation.id)
                self.kind = "edit" if self.message else "regenerate"
                self.message = self.message or last.content
                self.replaced = [last.id, *(m.id for m in after)]
            elif self.conversation_id and not self.new:
                conversation = conv.get_conversation(db, self.conversation_id)
            else:
                conversation = conv.create_conversation(
                    db, make_title(self.message), persona=self.persona.name
                )
                created = True
            self.cid, self.title = conversation.id, conversation.title
            if self.chips:
                self._attach_chips(created=created)
            rows = conv.recent_messages(db, self.cid, 10_000)
        self.history = [
            (m.role, m.content)
            for m in rows
            if m.role in ("user", "assistant") and m.id not in self.replaced
        ]
        with step("emotion"):
            choice = self.host.emotions.choose(self.message, allow_load=self.use_vector)
        self.emotion = choice.value

    def _attach_chips(self, *, created: bool) -> None:
        """The chips sent with the message; one that cannot be attached fails the turn and
        takes back the conversation the turn created for it."""
        try:
            for chip in self.chips:
                add_chip(self.db, self.cid, chip.kind, chip.ref, label=chip.label)
        except SadieError:
            if created:
                conv.forget(self.db, self.cid)
            raise

    # -- brief: retrieval, chips, policies and the briefing ----------------------------------
    async def brief(self) -> AsyncIterator[Event]:
        if not self.use_vector:
            yield Status("the embedding model is still loading: searching by keywords and names")
        policy_errors = await asyncio.to_thread(self._brief)  # one hop, as in prepare
        result, briefing = self.result, self.briefing
        assert result is not None and briefing is not None
        for notice in result.notices:
            yield Status(notice)
        for err in policy_errors:
            yield Status(f"policy ignored: {err}")
        # The budget is what the model was sent: it comes once the request is written, so a
        # screen showing it (and the new messages) does that while the model reads.
        await self._send()
        yield ContextBudget(
            chunks=len(result.chunks),
            messages=briefing.history_used,
            messages_dropped=briefing.history_dropped,
            chips=len(self.attached),
            retrieval_ms=round(result.elapsed_ms, 1),
            vector=result.vector_used,
        )

    def _brief(self) -> list[str]:
        """Retrieval, the chips, the policies and the briefing; the policy files' errors."""
        host, memory, step = self.host, self.host.memory, self.step
        assert self.persona is not None
        previous = next((c for r, c in reversed(self.history) if r == "user"), None)
        with step("retrieval"):
            self.result = result = retrieve(
                memory,
                self.message,
                self.persona,
                previous=previous,
                use_vector=self.use_vector,
            )
        with step("chips"):
            self.attached = host.attached(self.cid)
        with step("policies"):
            self.policies, policy_errors = host.policies()
        with step("briefing"):
            named = {(a.kind, a.title) for a in self.attached}
            wiki = [w for w in wiki_for(memory, self.message) if (w.kind, w.title) not in named]
            self.briefing = build_briefing(
                message=self.message,
                excerpts=excerpts_of(result),
                excerpt_order=excerpt_order(result),
                beliefs=result.beliefs,
                observations=result.observations,
                observation_weight_high=self.persona.observation_weight > 1.0,
                attached=[*self.attached, *wiki],
                history=self.history,
                soul=memory.soul(),
                guardrails=guardrail_block(self.policies),
                voice=self.persona.voice,
                tone=TONE.get(self.emotion, ""),
                memory_empty=memory.is_empty(),
            )
        return policy_errors

    # -- stream: the model's pieces through the filter and the guard -------------------------
    async def _send(self) -> None:
        """Start the model's stream and wait until its request is written (or has failed);
        then start writing the rows, which the model does not need."""
        assert self.briefing is not None
        sent = asyncio.Event()
        stream = self.reasoner.stream(self.briefing, self.message, sent=sent.set)
        with self.step("send"):
            self._pieces = Ahead(paced(stream, WAITING_EVERY))
            await self._pieces.started(sent)
        # The rows are there before anything of the reply is shown (or saved).
        self._writing = asyncio.ensure_future(asyncio.to_thread(self._write_rows))
        # A turn that fails before awaiting it writes the rows itself (``_save_partial``).
        self._writing.add_done_callback(lambda done: done.cancelled() or done.exception())

    async def _close_stream(self) -> None:
        if self._pieces is not None:
            await self._pieces.aclose()

    async def stream(self) -> AsyncIterator[Event]:
        assert self.briefing is not None and self._pieces is not None
        filtered = Filtered(self.briefing, self.host.settings.reply_max_chars)
        self._filtered = filtered
        started = time.perf_counter()
        think_started: float | None = None
        last_think = 0.0
        last_save = started
        thought = False  # reasoning came in the separate thinking field
        async with aclosing(self._pieces) as stream:
            async for piece in stream:
                if self._writing is not None:
                    await self._rows_written()
                now = time.perf_counter()
                if piece is None:  # a second passed with nothing from the model
                    if not self.pieces and think_started is None:
                        yield Waiting(round(now - started))
                    continue
                if piece.kind == "thinking":
                    visible, thinking = "", True
                    thought = True
                else:
                    self.pieces += 1
                    visible = filtered.feed(piece.text)
                    thinking = filtered.filter.thinking
                if thinking and not self.shown:
                    think_started = think_started or now
                    if now - last_think >= THINKING_EVERY:
                        last_think = now
                        yield Thinking(round(now - think_started, 1))
                if visible:
                    if think_started is not None and not self.shown:
                        self.thinking_s = round(now - think_started, 1)
                    self.shown += visible
                    yield Token(visible)
                    if now - last_save >= SAVE_EVERY:
                        last_save = now
                        await asyncio.to_thread(
                            conv.update_message, self.db, self.reply_id, content=self.shown
                        )
                if filtered.guard.stopped:
                    break  # closes the model's stream: a loop or a runaway reply
        await self._rows_written()
        rest = filtered.finish()
        if rest:
            self.shown += rest
            yield Token(rest)
        if not self.shown.strip():
            # Never an empty "complete" reply: an unclosed <think> (or reasoning and nothing
            # after it) is the model failing to answer, kept as an error like any other.
            raise no_answer(filtered, self.reasoner, thought)
        self.gen_seconds = max(1e-6, time.perf_counter() - started)
        self.cut = filtered.cut(self.reasoner)

    # -- check and persist: citations, policies, unsupported details, the stored rows ---------
    async def check_and_persist(self) -> AsyncIterator[Event]:
        briefing, result, reasoner = self.briefing, self.result, self.reasoner
        assert briefing is not None and result is not None
        filtered = self._filtered
        tail = filtered.filter
        text = await asyncio.to_thread(filtered.unecho, self.shown)
        if not text.strip():
            raise no_answer(filtered, reasoner, False)
        grounded = own_citations(text, tail.tail, tail.diverted, briefing.shown)
        self.grounded = grounded  # a turn stopped during the pass keeps the tail's citations
        if needs_pass(reasoner, grounded):
            async for event in self._check(grounded):
                yield event
        settle(briefing, grounded)
        self.grounded = grounded
        views, found = self._views(grounded)

        final_text, final_emotion = grounded.text, self.emotion
        # The person's own patterns, each on a time budget: in a thread, so that even a slow
        # one never stalls the caller's event loop (the TUI keeps repainting and hears Esc).
        outcome = await asyncio.to_thread(lint, final_text, self.policies)
        for name in outcome.skipped:
            yield Status(skip_notice(name))
        reason = "citations list" if grounded.list_removed else ""
        if filtered.near_echoes:
            reason = ECHO_REASON
        if outcome.changed:
            final_text = outcome.text
            blocked = outcome.blocked_by
            reason = f"policy {blocked.name}" if blocked else "policy rewrite"
            if blocked is not None:
                final_emotion, views, found = "serious", (), ()
        # An offline answer is sadie's own framing around verbatim quotes: nothing to check.
        check = not outcome.blocked_by and not reasoner.offline
        spans = checked_details(final_text, briefing, grounded) if check else []
        yield CitationsEvent(
            views,
            unsupported=tuple(sp.as_json() for sp in spans),
            repaired=grounded.repaired,
            tail=grounded.tail,
            found=found,
            note=grounded.pass_reason,
        )
        if final_text != self.shown:
            yield Replace(final_text, reason)
        if outcome.blocked_by is not None and final_emotion != self.emotion:
            yield EmotionEvent(final_emotion)
        status = "blocked" if outcome.blocked_by is not None else "complete"
        latency = (time.perf_counter() - self.started) * 1000
        tokens = getattr(reasoner, "last_eval_count", 0) or self.pieces
        rate = tokens_per_second(reasoner, tokens, self.gen_seconds)
        metadata = self._metadata(final_text, tokens, rate, spans, found, outcome)
        await asyncio.to_thread(
            self._persist, final_text, status, final_emotion, views, latency, metadata, outcome
        )
        yield Done(
            self.reply_id,
            round(latency, 1),
            len(result.chunks),
            status,
            tokens,
            rate,
            final_emotion,
            cut=self.cut or "",
        )

    async def _check(self, grounded: Grounded) -> AsyncIterator[Event]:
        """The citation pass, with ``Checking`` and its seconds every second while it runs
        (its budget comes from the model's measured speed; the setting is the cap)."""
        assert self.briefing is not None
        started = time.perf_counter()
        yield Checking()
        task = asyncio.ensure_future(
            repair(
                self.reasoner,
                self.briefing,
                grounded,
                cap=self.host.settings.citation_pass_timeout,
            )
        )
        try:
            while not (await asyncio.wait({task}, timeout=CHECKING_EVERY))[0]:
                yield Checking(elapsed=round(time.perf_counter() - started))
            task.result()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    def _metadata(
        self,
        final_text: str,
        tokens: int,
        rate: float,
        spans: list[Any],
        found: tuple[CitationView, ...],
        outcome: Any,
    ) -> dict[str, Any]:
        assert self.persona and self.briefing and self.result and self.grounded
        g = self.grounded
        metadata: dict[str, Any] = {
            "persona": self.persona.name,
            "prompt_version": self.briefing.version,
            "chunks_considered": len(self.result.chunks),
            "messages_in_context": self.briefing.history_used,
            "messages_dropped": self.briefing.history_dropped,
            "chips": len(self.attached),
            "retrieval_ms": round(self.result.elapsed_ms, 1),
            "steps_ms": dict(self.step.ms),
            "tokens": tokens,
            "tokens_per_s": rate,
            "offline": self.reasoner.offline,
            "dropped_citations": len(g.policed.dropped),
            # What a policy withheld is not kept (issue 23): only an echo's original is.
            "streamed_text": None if outcome.changed or final_text == self.shown else self.shown,
            "tail": g.tail,
            "repaired": g.repaired,
            "citation_pass": g.pass_reason or ("ok" if g.repaired else None),
            "pass_ms": round(g.pass_ms, 1),
            "thinking_s": self.thinking_s,
            "unsupported": [sp.as_json() for sp in spans],
            "found_by_sadie": [v.as_json() for v in found],
            "cut": self.cut,
            "echoes_hidden": self._filtered.echoes,
        }
        if outcome.blocked_by is not None:
            metadata["blocked_by"] = outcome.blocked_by.name
        if outcome.skipped:
            metadata["policies_skipped"] = list(outcome.skipped)
        return metadata

    def _persist(
        self,
        final_text: str,
        status: str,
        emotion: str,
        views: tuple[CitationView, ...],
        latency: float,
        metadata: dict[str, Any],
        outcome: Any,
    ) -> None:
        db, result, briefing = self.db, self.result, self.briefing
        assert result and briefing and self.persona and self.grounded
        conv.update_message(
            db,
            self.reply_id,
            content=final_text,
            status=status,
            emotion=emotion,
            citations=[v.as_json() for v in views],
            latency_ms=latency,
            metadata=metadata,
        )
        state: dict[str, Any] = {"emotion": emotion}
        if conv.count_messages(db, self.cid) <= 2:
            state["summary"] = conv.summary_from_first_exchange(self.message, final_text)
        conv.set_state(db, self.cid, **state)
        for hit in outcome.hits:
            add_policy_event(db, self.cid, self.reply_id, hit.policy, hit.action, hit.match)
        record_turn(
            db,
            kind=self.kind,
            query=self.message,
            model=self.reasoner.model,
            persona=self.persona.name,
            prompt_version=briefing.version,
            grounding=grounding_score(
                self.grounded.policed, len(metadata["unsupported"]), count_details(final_text)
            ),
            abstained=False,
            latency_ms=latency,
            conversation_id=self.cid,
            message_id=self.reply_id,
            chunks=result.chunks,
            cited_chunk_ids=cited_chunk_ids(result, views),
            tail=metadata["tail"],
            repaired=metadata["repaired"],
            citation_pass=metadata["citation_pass"],
            unsupported=len(metadata["unsupported"]),
            cut=metadata["cut"],
        )
        keep_rates(self.reasoner)

    def _partial_citations(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """What a stopped reply keeps of its sources: its tail's citations (the complete
        entries of a tail cut off mid-stream), else sadie's own sentence matches."""
        briefing, result = self.briefing, self.result
        filtered = getattr(self, "_filtered", None)
        if briefing is None or result is None or not self.shown.strip():
            return [], []
        grounded = self.grounded
        if grounded is None:
            if filtered is None:
                return [], []
            tail = filtered.filter
            grounded = own_citations(
                self.shown, closed_list(tail.tail), tail.diverted, briefing.shown
            )
        settle(briefing, grounded)
        views, found = self._views(grounded)
        return [v.as_json() for v in views], [v.as_json() for v in found]

    def _views(
        self, grounded: Grounded
    ) -> tuple[tuple[CitationView, ...], tuple[CitationView, ...]]:
        """The citations as shown, and sadie's own matches, of a settled ``grounded``."""
        assert self.result is not None
        return (
            citation_views(grounded, self.result, self.attached),
            found_views(grounded, self.result, self.attached),
        )

    def _write_rows(self) -> None:
        """The person's message and the reply's ``streaming`` row (and the replaced exchange
        taken out), once: from the thread started once the request is out, or from a turn
        that failed or was stopped before it got that far."""
        with self._write_lock:
            if self._written or not self.reply_id:
                return
            assert self.persona is not None and self.reasoner is not None
            user_at, reply_at = self._stamps
            db = self.db
            conv.add_message(
                db,
                self.cid,
                "user",
                self.message,
                "complete",
                emotion=self.emotion,
                created_at=user_at,
                message_id=self.user_id,
            )
            conv.add_message(
                db,
                self.cid,
                "assistant",
                "",
                "streaming",
                emotion=self.emotion,
                model=self.reasoner.model,
                metadata={"persona": self.persona.name},
                created_at=reply_at,
                message_id=self.reply_id,
            )
            if self.replaced:  # only now: a turn stopped before this still shows the old ones
                conv.supersede(db, self.replaced)
            self._written = True

    async def _rows_written(self) -> None:
        writing, self._writing = self._writing, None
        if writing is not None:
            await writing
        elif not self._written:
            await asyncio.to_thread(self._write_rows)

    def _save_partial(self, status: str, error: str | None = None) -> None:
        """What streamed, kept as ``interrupted`` or ``error`` (never left ``streaming``)."""
        if not self.reply_id:
            return
        try:
            self._write_rows()  # waits for the thread writing them, if it is running
            meta: dict[str, Any] = {"error": error} if error else {}
            views, found = self._partial_citations()
            if found:
                meta["found_by_sadie"] = found
            conv.update_message(
                self.db,
                self.reply_id,
                content=self.shown,
                status=status,
                metadata=meta or None,
                citations=views or None,
            )
        except SadieError:
            pass  # the database itself failed; the error already reached the person


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
