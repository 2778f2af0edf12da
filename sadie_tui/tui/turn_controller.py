"""One reply at a time: the person's message goes to ``Session.chat`` in an exclusive worker
of the chat screen, and each event the engine yields is rendered on the screen's widgets.

It renders and decides nothing itself. Escape cancels the worker: the engine marks the
message ``interrupted`` and keeps what was shown, and the reply's sources are read back from
what the engine kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from functools import partial
from typing import TYPE_CHECKING

from textual.worker import Worker, WorkerCancelled, WorkerFailed, WorkerState

from ..engine.errors import SadieError, in_words
from ..engine.events import (
    Checking,
    CitationsEvent,
    ContextBudget,
    Done,
    EmotionEvent,
    ErrorEvent,
    Meta,
    Replace,
    Status,
    Thinking,
    Token,
    Waiting,
)
from ..engine.jsonvalue import objects
from ..engine.operations import ShowConversation
from ..engine.requests import ChatTurn
from .chat_widgets import ChatWidgets
from .conversation_controller import ConversationController
from .host import from_thread
from .widgets.chip_bar import ChipItem
from .widgets.citations import Sources, stopped_note
from .widgets.transcript import CUT_NOTES, AssistantMessage, UserMessage

if TYPE_CHECKING:
    from textual.screen import Screen

    from ..engine.conversations import Message
    from ..engine.events import Event
    from .host import SadieHost

# The longest a sent message waits for the turn's request before it is shown all the same.
SHOW_WITHIN = 0.1


class Showing:
    """Mounting a sent message and its reply, once, whoever asks first: the turn when its
    request is out (or it has something to say sooner), or the SHOW_WITHIN timer."""

    def __init__(self, mount: Callable[[], Awaitable[None]]) -> None:
        self._mount = mount
        self._task: asyncio.Future[None] | None = None

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    def start(self) -> asyncio.Future[None]:
        if self._task is None:
            self._task = asyncio.ensure_future(self._mount())
        return self._task

    async def wait(self) -> None:
        await asyncio.shield(self.start())  # shared: a stopped turn must not cancel it


class TurnController:
    """Sends a message and shows its reply as the engine's events arrive (see the module)."""

    def __init__(
        self,
        owner: Screen[None],
        host: SadieHost,
        widgets: ChatWidgets,
        conversation: ConversationController,
    ) -> None:
        self.owner = owner  # runs the workers and timers, shows the notifications
        self.host = host
        self.widgets = widgets
        self.conversation = conversation
        self.reply: AssistantMessage | None = None  # the newest reply sent from here
        self._worker: Worker[None] | None = None
        self._replace_reason = ""

    @property
    def streaming(self) -> bool:
        """Whether a reply is being written (its worker pending or running)."""
        return self._worker is not None and self._worker.state in (
            WorkerState.PENDING,
            WorkerState.RUNNING,
        )

    # -- starting and stopping ---------------------------------------------------------------
    async def send(self, text: str, *, regenerate: bool = False) -> None:
        """Send ``text``; with ``regenerate``, it replaces the last message and its reply
        (``text`` empty: the last message as it was)."""
        transcript = self.widgets.transcript
        now = self.host.clock()
        message = text  # what the engine gets: empty to answer the last message as it was
        if regenerate:
            last = transcript.last_user_message()
            if last is None:
                self.owner.notify("There is no message to answer again yet", timeout=3)
                return
            text = text.strip() or last.text
            await transcript.remove_from(last)
            if self.conversation.conversation_id is None:  # never stored: send it anew
                message, regenerate = text, False
        else:
            self.host.sent.append(text.strip())
        reply = AssistantMessage(at=now, emotion=self.widgets.sigil.emotion)
        self.reply = reply
        user = UserMessage(text.strip(), now)

        async def mount() -> None:
            await transcript.add(user, reply)
            await self.widgets.sources.follow(reply)

        # The turn starts first, and the two messages are mounted once its request is out:
        # their layout then overlaps the model's reading instead of delaying the request. A
        # slower turn shows them after SHOW_WITHIN all the same.
        showing = Showing(mount)
        worker = self._worker = self.owner.run_worker(
            self._run(message, reply, regenerate, showing),
            name="reply",
            group="chat",
            exclusive=True,
            exit_on_error=False,
        )

        def show_late() -> None:
            if worker.state == WorkerState.RUNNING:  # not a turn stopped before it began
                showing.start()

        self.owner.set_timer(SHOW_WITHIN, show_late)

    def stop(self) -> bool:
        """Stop the reply being written (what was shown is kept); False when there is none."""
        if not self.streaming or self._worker is None:
            return False
        self._worker.cancel()
        return True

    async def abandon(self) -> None:
        """Stop the reply being written, if any, and wait until it is kept as interrupted:
        the screen is about to show another conversation."""
        worker = self._worker
        if self.stop() and worker is not None:
            try:
                await worker.wait()
            except (WorkerCancelled, WorkerFailed):
                pass  # the reply is marked interrupted by its own handler
        self.reply = None

    # -- the turn ----------------------------------------------------------------------------
    async def _run(
        self, text: str, reply: AssistantMessage, regenerate: bool, showing: Showing
    ) -> None:
        host = self.host
        if not host.memory_ready.is_set() or host.session is None:
            await showing.wait()  # the reply is written to at once: it must be on screen
        if not host.memory_ready.is_set():
            reply.set_placeholder("opening your memory…")
            await host.memory_ready.wait()
        if host.session is None:
            await reply.failed("the memory could not be opened", None)
            return
        from ..engine.chips import NewChip  # lazy: it loads DuckDB, which the first frame need not

        pending = self.conversation.pending()
        self._replace_reason = ""
        stream = host.session.chat(
            ChatTurn(
                text,
                conversation_id=self.conversation.conversation_id,
                persona=host.persona,
                regenerate=regenerate,
                model=host.model_choice,
                chips=tuple(NewChip(item.kind, item.ref_id, item.label) for item in pending),
            )
        )
        try:
            async with aclosing(stream) as events:
                async for event in events:
                    # Meta and the register need no messages on screen; from the budget on
                    # (the request is out), or anything said sooner, they must be there.
                    if not showing.done and not isinstance(event, Meta | EmotionEvent):
                        await showing.wait()
                    await self._render(event, reply, pending)
            await showing.wait()
        except asyncio.CancelledError:
            await showing.wait()
            if reply.in_tail:  # the engine kept it complete, with what had arrived checked
                await reply.stopped_in_sources()
            else:
                await reply.interrupted()
            self.owner.run_worker(
                partial(self._reload_sources, reply),
                thread=True,
                group="sources",
                exit_on_error=False,
            )
            raise
        except Exception as exc:  # noqa: BLE001 - shown, never a traceback over the UI
            await showing.wait()
            await reply.failed(f"something went wrong: {in_words(exc)}", None)
            self.owner.notify(in_words(exc), title="sadie", severity="error")
            raise

    async def _render(self, event: Event, reply: AssistantMessage, pending: list[ChipItem]) -> None:
        if type(event) is Token:  # the hot path: thousands a reply
            reply.write(event.value)
            return
        match event:
            case Meta():
                await self._on_meta(event, reply, pending)
            case EmotionEvent(value=emotion):
                self.widgets.sigil.emotion = emotion
                reply.set_emotion(emotion)
            case Status() if event.writing_sources:
                await reply.writing_sources()
                await self.widgets.sources.sources_changed(reply)
            case Status(value=note):
                if reply.text:  # after the reply (a policy skipped): the placeholder is gone
                    self.owner.notify(note, severity="warning", timeout=6)
                else:
                    reply.set_placeholder(note)
            case ContextBudget():
                self.widgets.status.context = event
                self.conversation.offer(event.offered)
                if event.added and self.conversation.conversation_id is not None:
                    # sadie attached a chip itself: the bar shows it, marked, removable.
                    await self.conversation.chips_taken(self.conversation.conversation_id)
                    names = ", ".join(f"“{label}”" for label in event.added)
                    remove = self.host.keymap.get("remove-last-chip", "ctrl+r").split(",")[0]
                    self.owner.notify(
                        f"sadie attached the page on {names} as a chip ({remove} removes it)",
                        timeout=6,
                    )
            case Thinking(elapsed=elapsed):
                reply.thinking(elapsed)
            case Waiting(elapsed=elapsed):
                reply.waiting(elapsed)
            case Checking(elapsed=elapsed) if reply.checking:
                reply.set_checking(True, elapsed)  # the pass runs on: its seconds
            case Checking():
                await reply.end_text()
                reply.set_checking(True)
                reply.sources.state = "checking"
                await self.widgets.sources.sources_changed(reply)
            case Token(value=value):
                reply.write(value)
            case CitationsEvent():
                await self._on_citations(event, reply)
            case Replace(value=value, reason=reason):
                self._replace_reason = reason
                await reply.replace(value, reason, blocked=False, quiet=reason == "citations list")
            case Done():
                await self._on_done(event, reply)
            case ErrorEvent():
                await self._on_error(event, reply)

    async def _on_meta(self, event: Meta, reply: AssistantMessage, pending: list[ChipItem]) -> None:
        status = self.widgets.status
        reply.message_id = event.message_id
        status.tokens_per_s = None  # the last reply's rate is not this one's
        status.model = event.model
        status.online = not event.offline
        status.persona = event.persona
        if self.conversation.conversation_id != event.conversation_id:
            self.conversation.adopt(event.conversation_id, event.title)
        if pending:  # the engine attached the held chips to the conversation it created
            await self.conversation.chips_taken(event.conversation_id)

    async def _on_citations(self, event: CitationsEvent, reply: AssistantMessage) -> None:
        # The text is complete: its end shows at once, not a throttle tick later, and in the
        # same frame as its sources (one layout pass, not two).
        with self.owner.app.batch_update():
            await reply.end_text()
            reply.checking = False
            reply.in_tail = False  # the tail is in: a stop from here is an ordinary one
            reply.unsupported = list(event.unsupported)
            reply.set_sources(
                Sources(
                    tuple(event.value),
                    tuple(event.found),
                    len(event.unsupported),
                    event.tail,
                    event.repaired,
                    event.note,
                )
            )
            await self.widgets.sources.sources_changed(reply)

    async def _on_done(self, event: Done, reply: AssistantMessage) -> None:
        await reply.finish(event.status)
        if event.status == "blocked":
            reply.show_note(f"⊘ blocked by {self._replace_reason or 'a policy'}")
        elif event.cut:
            reply.show_note(CUT_NOTES.get(event.cut, f"✂ cut short ({event.cut})"))
        if reply.unsupported:
            await reply.flag(reply.unsupported)
        status = self.widgets.status
        status.tokens_per_s = (event.tokens_per_s or None) if status.online else None

    async def _on_error(self, event: ErrorEvent, reply: AssistantMessage) -> None:
        retry = f"{self.host.keymap.get('regenerate', 'ctrl+g').split(',')[0]} retries"
        fix = f"{event.fix}; {retry}" if event.fix else retry
        await reply.failed(event.message, fix)
        reply.sources.state = "failed"
        await self.widgets.sources.sources_changed(reply)
        self.host.models.failed(event.code)
        self.owner.notify(
            f"{event.message}\n{fix}",
            title="The reply failed",
            severity="error",
            timeout=8,
        )

    # -- a stopped reply's sources -----------------------------------------------------------
    def _reload_sources(self, reply: AssistantMessage) -> None:
        """A stopped reply (in a thread): what the engine kept of its sources (its tail's
        citations, or sadie's own matches)."""
        session, cid = self.host.session, self.conversation.conversation_id
        if session is None or cid is None or reply.message_id is None:
            return
        try:
            stored = next(
                (
                    m
                    for m in session.call(ShowConversation(cid)).messages
                    if m.id == reply.message_id
                ),
                None,
            )
        except SadieError:
            return
        if stored is not None:
            sources = Sources.stored(stored.citations, stored.metadata or {}, stored.status)
            from_thread(self.owner.app, self._show_reloaded, reply, sources, stored)

    async def _show_reloaded(
        self, reply: AssistantMessage, sources: Sources, stored: Message
    ) -> None:
        reply.set_sources(sources)
        if stored.status == "interrupted" and reply.status == "complete":
            await reply.interrupted()  # the engine could not keep it complete after all
        if sources.stopped is not None:
            # Kept complete: its final text (an echo or a policy may have changed it), the
            # note saying how many sources were checked, and the details no note holds.
            if stored.content != reply.text:
                await reply.replace(stored.content, "", blocked=False, quiet=True)
            reply.show_note(stopped_note(sources.stopped))
            unsupported = objects((stored.metadata or {}).get("unsupported"))
            if unsupported:
                await reply.flag(unsupported)
        await self.widgets.sources.sources_changed(reply)
