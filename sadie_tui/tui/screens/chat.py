"""The chat screen: transcript, chip bar, input, emotion sigil, citation sidebar, status line.

It renders the engine's events and decides nothing itself. One reply streams at a time, in
an exclusive worker; escape cancels it (the engine marks the message ``interrupted`` and
keeps what was shown).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, on, work
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Static, TextArea
from textual.worker import Worker, WorkerCancelled, WorkerFailed, WorkerState

from ...display import safe
from ...engine.events import (
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
from ..widgets.chip_bar import ChipBar, ChipItem, ChipView
from ..widgets.citations import CitationItem, CitationSidebar, Sources
from ..widgets.prompt import PromptInput
from ..widgets.sigil import EmotionSigil
from ..widgets.status import StatusLine
from ..widgets.transcript import (
    CUT_NOTES,
    AssistantMessage,
    MessageView,
    Transcript,
    UserMessage,
)

if TYPE_CHECKING:
    from ...engine.session import SessionProtocol
    from ..host import SadieHost

NEW_TITLE = "New conversation"
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


class ChatScreen(Screen[None]):
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (96, "-wide")]

    BINDINGS = [
        Binding(
            "ctrl+n",
            "new_conversation",
            "New",
            id="new-conversation",
            tooltip="Start a new conversation",
        ),
        Binding(
            "ctrl+l",
            "browser",
            "Conversations",
            id="browser",
            tooltip="Browse, search, pin, archive, rename, forget and export conversations",
        ),
        Binding(
            "ctrl+t",
            "attach_chip",
            "Attach",
            id="attach-chip",
            tooltip="Attach context: a wiki entry, note, brief, person or Today card",
        ),
        Binding(
            "ctrl+r",
            "remove_last_chip",
            "Remove last chip",
            id="remove-last-chip",
            show=False,
            tooltip="Remove the last attached chip",
        ),
        Binding(
            "ctrl+b",
            "toggle_sidebar",
            "Sources",
            id="toggle-sidebar",
            tooltip="Show or hide the citation sidebar",
        ),
        Binding(
            "escape",
            "stop_reply",
            "Stop reply",
            id="stop-reply",
            show=False,
            tooltip="Stop the reply (what was shown is kept, marked interrupted)",
        ),
        # Priority: the input's TextArea binds ctrl+y to redo.
        Binding(
            "ctrl+y",
            "copy",
            "Copy reply",
            id="copy",
            priority=True,
            show=False,
            tooltip="Copy the last reply, or the focused message or citation quote",
        ),
        Binding(
            "ctrl+g",
            "regenerate",
            "Regenerate",
            id="regenerate",
            show=False,
            tooltip="Answer your last message again (also retries a failed reply); the old"
            " reply is kept out of sight",
        ),
        Binding(
            "ctrl+o",
            "edit_last",
            "Edit last",
            id="edit-last",
            show=False,
            tooltip="Put your last message back in the box to change and resend it; it"
            " replaces the old message and its reply",
        ),
        # Priority: from the input too (its TextArea would move the cursor a page instead).
        Binding(
            "pageup",
            "scroll_transcript('scroll_page_up')",
            "Scroll up",
            id="scroll-up",
            priority=True,
            show=False,
            tooltip="Scroll the conversation up a page, from anywhere",
        ),
        Binding(
            "pagedown",
            "scroll_transcript('scroll_page_down')",
            "Scroll down",
            id="scroll-down",
            priority=True,
            show=False,
            tooltip="Scroll the conversation down a page, from anywhere",
        ),
        Binding(
            "ctrl+home",
            "scroll_transcript('scroll_home')",
            "Scroll to start",
            id="scroll-start",
            priority=True,
            show=False,
            tooltip="Jump to the start of the conversation",
        ),
        Binding(
            "ctrl+end",
            "scroll_transcript('scroll_end')",
            "Scroll to end",
            id="scroll-end",
            priority=True,
            show=False,
            tooltip="Jump to the newest message",
        ),
    ]

    AUTO_FOCUS = "#prompt"

    def __init__(self) -> None:
        super().__init__()
        self.conversation_id: str | None = None
        self.title_text = NEW_TITLE
        self.pending_chips: list[ChipItem] = []
        self.reply: AssistantMessage | None = None
        self._worker: Worker[None] | None = None
        self._replace_reason = ""
        self.editing = False  # the input holds the last message, to replace it when sent
        self.shown_reply: AssistantMessage | None = None  # whose sources the sidebar shows

    @property
    def sadie(self) -> SadieHost:
        return self.app  # type: ignore[return-value]

    @property
    def session(self) -> SessionProtocol:
        """The open session (only asked for once the memory is ready)."""
        session = self.sadie.session
        assert session is not None, "the memory is not open yet"
        return session

    def compose(self):  # type: ignore[no-untyped-def]
        with Horizontal(id="topbar"):
            yield EmotionSigil(id="sigil")
            yield Static(Text(NEW_TITLE), id="title")
        with Horizontal(id="body"):
            with Vertical(id="main"):
                yield Transcript(id="transcript")
                yield ChipBar(id="chips")
                yield PromptInput(
                    id="prompt", placeholder="Talk to sadie… (enter sends, ctrl+j new line)"
                )
            yield CitationSidebar(id="sidebar")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        status = self.query_one(StatusLine)
        app = self.sadie
        self.query_one(PromptInput).history_source = self.prompt_history
        status.model = app.model
        status.persona = app.persona
        if app.memory_ready.is_set():
            status.memory_state = "ready"
            status.via = app.ctx.via or ""
            status.embedder_ready = app.session is not None and app.session.embedder_ready

    # -- focus and keys ----------------------------------------------------------------------
    @property
    def focus_chain(self) -> list[Widget]:
        """Tab order: the input, the chips, the sources, then the messages."""
        chain = super().focus_chain

        def rank(widget: Widget) -> int:
            if isinstance(widget, PromptInput):
                return 0
            if isinstance(widget, ChipView):
                return 1
            if isinstance(widget, CitationItem):
                return 2
            if isinstance(widget, MessageView):
                return 3
            return 4

        return sorted(chain, key=rank)

    def on_key(self, event: events.Key) -> None:
        """A letter typed while a message, chip or citation has focus goes to the input."""
        if not event.is_printable or not event.character:
            return
        if isinstance(self.focused, TextArea | Input):
            return
        prompt = self.query_one(PromptInput)
        prompt.focus()
        prompt.insert(event.character)
        event.stop()
        event.prevent_default()

    def on_screen_resume(self) -> None:
        # Back from the episode view, a dialog or the browser: typing goes to the input.
        self.call_after_refresh(self.query_one(PromptInput).focus)

    def action_scroll_transcript(self, how: str) -> None:
        transcript = self.query_one(Transcript)
        getattr(transcript, how)(animate=False)

    def prompt_history(self) -> list[str]:
        """What Up recalls, newest first: this conversation's messages, then the others sent
        since the app started."""
        mine = [v.text for v in reversed(self.query_one(Transcript).messages) if v.role == "user"]
        rest = [t for t in reversed(self.sadie.sent) if t not in mine]
        return mine + rest

    # -- sending -----------------------------------------------------------------------------
    @property
    def streaming(self) -> bool:
        return self._worker is not None and self._worker.state in (
            WorkerState.PENDING,
            WorkerState.RUNNING,
        )

    @on(PromptInput.Submitted)
    async def _on_submitted(self, event: PromptInput.Submitted) -> None:
        if self.streaming:
            event.prompt.text = event.text
            event.prompt.move_cursor(event.prompt.document.end)
            self.notify("sadie is still replying — escape stops it", severity="warning", timeout=3)
            return
        if self.editing:
            self.set_editing(False)
            await self.send(event.text, regenerate=True)
            return
        await self.send(event.text)

    async def send(self, text: str, *, regenerate: bool = False) -> None:
        """Send ``text``; with ``regenerate``, it replaces the last message and its reply
        (``text`` empty: the last message as it was)."""
        transcript = self.query_one(Transcript)
        now = self.sadie.clock()
        message = text  # what the engine gets: empty to answer the last message as it was
        if regenerate:
            last = self._last_user_message()
            if last is None:
                self.notify("There is no message to answer again yet", timeout=3)
                return
            text = text.strip() or last.text
            await self._remove_from(last)
            if self.conversation_id is None:  # never stored (the memory failed): send it anew
                message, regenerate = text, False
        else:
            self.sadie.sent.append(text.strip())
        reply = AssistantMessage(at=now, emotion=self.query_one(EmotionSigil).emotion)
        self.reply = reply
        user = UserMessage(text.strip(), now)

        async def mount() -> None:
            await transcript.add(user, reply)
            await self.show_sources_of(reply)

        # The turn starts first, and the two messages are mounted once its request is out:
        # their layout then overlaps the model's reading instead of delaying the request. A
        # slower turn shows them after SHOW_WITHIN all the same.
        showing = Showing(mount)
        worker = self._worker = self._run_reply(message, reply, regenerate, showing)

        def show_late() -> None:
            if worker.state == WorkerState.RUNNING:  # not a turn stopped before it began
                showing.start()

        self.set_timer(SHOW_WITHIN, show_late)

    def _last_user_message(self) -> UserMessage | None:
        users = [v for v in self.query_one(Transcript).messages if isinstance(v, UserMessage)]
        return users[-1] if users else None

    async def _remove_from(self, first: MessageView) -> None:
        views = self.query_one(Transcript).messages
        await self.query_one(Transcript).remove_children(views[views.index(first) :])

    @work(exclusive=True, group="chat", exit_on_error=False)
    async def _run_reply(
        self,
        text: str,
        reply: AssistantMessage,
        regenerate: bool,
        showing: Showing,
    ) -> None:
        app = self.sadie
        if not app.memory_ready.is_set() or app.session is None:
            await showing.wait()  # the reply is written to at once: it must be on screen
        if not app.memory_ready.is_set():
            reply.set_placeholder("opening your memory…")
            await app.memory_ready.wait()
        if app.session is None:
            await reply.failed("the memory could not be opened", None)
            return
        from ...engine.chips import NewChip

        pending = list(self.pending_chips) if self.conversation_id is None else []
        self._replace_reason = ""
        stream = app.session.chat(
            text,
            conversation_id=self.conversation_id,
            persona=app.persona,
            regenerate=regenerate,
            model=app.model_choice,
            chips=[NewChip(item.kind, item.ref_id, item.label) for item in pending],
        )
        try:
            async with aclosing(stream) as events:
                async for event in events:
                    # Meta and the register need no messages on screen; from the budget on
                    # (the request is out), or anything said sooner, they must be there.
                    if not showing.done and not isinstance(event, Meta | EmotionEvent):
                        await showing.wait()
                    await self._render_event(event, reply, pending)
            await showing.wait()
        except asyncio.CancelledError:
            await showing.wait()
            await reply.interrupted()
            self._reload_sources(reply)
            raise
        except Exception as exc:  # noqa: BLE001 - shown, never a traceback over the UI
            await showing.wait()
            await reply.failed(f"something went wrong: {exc}", None)
            self.notify(str(exc), title="sadie", severity="error")
            raise

    async def _render_event(
        self, event: Any, reply: AssistantMessage, pending: list[ChipItem]
    ) -> None:
        if type(event) is Token:  # the hot path: thousands a reply
            reply.write(event.value)
            return
        status = self.query_one(StatusLine)
        match event:
            case Meta():
                reply.message_id = event.message_id
                status.tokens_per_s = None  # the last reply's rate is not this one's
                status.model = event.model
                status.online = not event.offline
                status.persona = event.persona
                if self.conversation_id != event.conversation_id:
                    self.conversation_id = event.conversation_id
                    self.set_title(event.title)
                    self.sadie.remember_conversation(event.conversation_id)
                if pending:
                    # The engine attached the held chips to the conversation it created.
                    items = await asyncio.to_thread(self._chips_of, event.conversation_id)
                    self.pending_chips = []
                    await self._show_chips_async(items)
            case EmotionEvent(value=emotion):
                self.query_one(EmotionSigil).emotion = emotion
                reply.set_emotion(emotion)
            case Status(value=note):
                if reply.text:  # after the reply (a policy skipped): the placeholder is gone
                    self.notify(note, severity="warning", timeout=6)
                else:
                    reply.set_placeholder(note)
            case ContextBudget():
                status.context = event
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
                await self._refresh_sources(reply)
            case Token(value=value):
                reply.write(value)
            case CitationsEvent(value=citations):
                # The text is complete: its end shows at once, not a throttle tick later,
                # and in the same frame as its sources (one layout pass, not two).
                with self.app.batch_update():
                    await reply.end_text()
                    reply.checking = False
                    reply.unsupported = list(event.unsupported)
                    reply.set_sources(
                        Sources(
                            tuple(citations),
                            tuple(event.found),
                            len(event.unsupported),
                            event.tail,
                            event.repaired,
                            event.note,
                        )
                    )
                    await self._refresh_sources(reply)
            case Replace(value=value, reason=reason):
                self._replace_reason = reason
                await reply.replace(value, reason, blocked=False, quiet=reason == "citations list")
            case Done():
                await reply.finish(event.status)
                if event.status == "blocked":
                    reply.show_note(f"⊘ blocked by {self._replace_reason or 'a policy'}")
                elif event.cut:
                    reply.show_note(CUT_NOTES.get(event.cut, f"✂ cut short ({event.cut})"))
                if reply.unsupported:
                    await reply.flag(reply.unsupported)
                status.tokens_per_s = (event.tokens_per_s or None) if status.online else None
            case ErrorEvent():
                await reply.failed(event.message, event.fix)
                reply.sources.state = "failed"
                await self._refresh_sources(reply)
                self.sadie.model_failed(event.code)
                self.notify(
                    event.message + (f"\n{event.fix}" if event.fix else ""),
                    title="The reply failed",
                    severity="error",
                    timeout=8,
                )

    def _chips_of(self, conversation_id: str) -> list[ChipItem]:
        return [_item(c) for c in self.session.chips(conversation_id)]

    def set_title(self, title: str) -> None:
        self.title_text = title
        self.query_one("#title", Static).update(Text(safe(title)))

    # -- sources -----------------------------------------------------------------------------
    @on(AssistantMessage.Focused)
    async def _on_reply_focused(self, event: AssistantMessage.Focused) -> None:
        await self.show_sources_of(event.reply)

    async def show_sources_of(self, reply: AssistantMessage | None) -> None:
        """The sidebar follows ``reply`` (the focused one, or the newest) until another."""
        self.shown_reply = reply
        if reply is None:
            await self.query_one(CitationSidebar).reset()
            return
        await self.query_one(CitationSidebar).show(reply.sources, caption=reply.caption())

    async def _refresh_sources(self, reply: AssistantMessage) -> None:
        if self.shown_reply is reply:
            await self.show_sources_of(reply)

    @work(thread=True, group="sources", exit_on_error=False)
    def _reload_sources(self, reply: AssistantMessage) -> None:
        """A stopped reply: what the engine kept of its sources (its tail's citations, or
        sadie's own matches)."""
        from ...engine.errors import SadieError

        session, cid = self.sadie.session, self.conversation_id
        if session is None or cid is None or reply.message_id is None:
            return
        try:
            stored = next((m for m in session.messages(cid) if m.id == reply.message_id), None)
        except SadieError:
            return
        if stored is not None:
            sources = Sources.stored(stored.citations, stored.metadata or {}, stored.status)
            self.app.call_from_thread(self._show_reloaded, reply, sources)

    async def _show_reloaded(self, reply: AssistantMessage, sources: Sources) -> None:
        reply.set_sources(sources)
        await self._refresh_sources(reply)

    # -- actions -----------------------------------------------------------------------------
    async def action_stop_reply(self) -> None:
        if self.streaming and self._worker is not None:
            self._worker.cancel()
            self.notify("Stopped. What was shown is kept.", timeout=2)
        elif self.editing:
            self.set_editing(False)
            self.query_one(PromptInput).clear()
        else:
            self.query_one(PromptInput).focus()

    async def action_new_conversation(self) -> None:
        if self.streaming:
            self.notify(
                "Stopped the reply (what was shown is kept) for a new conversation", timeout=3
            )
        await self.open_conversation(None)

    async def action_regenerate(self) -> None:
        if self.streaming:
            self.notify("sadie is still replying — escape stops it", severity="warning", timeout=3)
            return
        await self.send("", regenerate=True)

    def action_edit_last(self) -> None:
        if self.streaming:
            self.notify("sadie is still replying — escape stops it", severity="warning", timeout=3)
            return
        last = self._last_user_message()
        if last is None:
            self.notify("There is no message to edit yet", timeout=3)
            return
        prompt = self.query_one(PromptInput)
        prompt.text = last.text
        prompt.move_cursor(prompt.document.end)
        prompt.focus()
        self.set_editing(True)

    def set_editing(self, editing: bool) -> None:
        self.editing = editing
        prompt = self.query_one(PromptInput)
        prompt.set_class(editing, "-editing")
        prompt.border_title = (
            "editing your last message — enter resends it, escape cancels" if editing else None
        )

    def action_browser(self) -> None:
        from .conversations import BrowserScreen

        def opened(result: tuple[str, str | None] | None) -> None:
            if result is None:
                return
            action, conversation_id = result
            if action == "open" and conversation_id == self.conversation_id:
                return
            self.run_worker(self.open_conversation(conversation_id), group="open")

        self.app.push_screen(BrowserScreen(current=self.conversation_id), opened)

    async def open_conversation(self, conversation_id: str | None) -> None:
        """Show another conversation (``None``: a fresh one)."""
        if self.streaming and self._worker is not None:
            worker = self._worker
            worker.cancel()
            try:
                await worker.wait()
            except (WorkerCancelled, WorkerFailed):
                pass  # the reply is marked interrupted by its own handler
        transcript = self.query_one(Transcript)
        await transcript.clear()
        await self.show_sources_of(None)
        self.conversation_id = None
        self.pending_chips = []
        self.reply = None
        self.set_editing(False)
        await self._show_chips_async([])
        self.query_one(EmotionSigil).emotion = ""
        status = self.query_one(StatusLine)
        status.context = None
        status.tokens_per_s = None
        self.set_title(NEW_TITLE)
        self.query_one(PromptInput).focus()
        if conversation_id is not None:
            self._load_conversation(conversation_id)
        else:
            self.sadie.remember_conversation(None)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load_conversation(self, conversation_id: str) -> None:
        from ...engine.errors import SadieError

        session = self.sadie.session
        if session is None:
            return
        try:
            conversation = session.conversation(conversation_id)
            items = session.messages(conversation.id)
            chips = session.chips(conversation.id)
        except SadieError as exc:
            self.app.call_from_thread(self.notify, exc.one_line(), severity="error")
            return
        self.app.call_from_thread(self._show_loaded, conversation, items, chips)

    async def _show_loaded(self, conversation: Any, items: list[Any], chips: list[Any]) -> None:
        self.conversation_id = conversation.id
        self.sadie.remember_conversation(conversation.id)
        self.set_title(conversation.title)
        transcript = self.query_one(Transcript)
        views: list[MessageView] = []
        for m in items:
            if m.role == "user":
                views.append(UserMessage(m.content, m.created_at))
            elif m.role == "assistant":
                view = AssistantMessage(
                    m.content, m.created_at, emotion=m.emotion or "", status=m.status, live=False
                )
                view.message_id = m.id
                view.sources = Sources.stored(m.citations or [], m.metadata or {}, m.status)
                view.unsupported = list((m.metadata or {}).get("unsupported") or [])
                views.append(view)
        for view in views:
            await transcript.add(view)
            if isinstance(view, AssistantMessage) and view.unsupported:
                await view.flag(view.unsupported)
        replies = [v for v in views if isinstance(v, AssistantMessage)]
        await self.show_sources_of(replies[-1] if replies else None)
        self.query_one(EmotionSigil).emotion = conversation.emotion or ""
        await self._show_chips_async([_item(c) for c in chips])

    def action_toggle_sidebar(self) -> None:
        sidebar = self.query_one(CitationSidebar)
        shown = sidebar.display
        self.set_class(not shown, "-sidebar-shown")
        self.set_class(shown, "-sidebar-hidden")

    def action_copy(self) -> None:
        focused = self.focused
        if isinstance(focused, MessageView):
            focused.action_copy()
            return
        if isinstance(focused, CitationItem):
            focused.action_copy()
            return
        reply = self.query_one(Transcript).last_reply()
        if reply is None or not reply.text:
            self.notify("There is no reply to copy yet", severity="warning", timeout=2)
            return
        self.app.copy_to_clipboard(reply.text)
        self.notify(f"Copied the last reply ({len(reply.text)} characters)", timeout=2)

    # -- chips -------------------------------------------------------------------------------
    def action_attach_chip(self) -> None:
        if self.sadie.session is None:
            self.notify("The memory is still opening — try again in a moment", timeout=3)
            return
        from .chip_picker import ChipPickerScreen

        self.app.push_screen(ChipPickerScreen(self.sadie.session), self.attach)

    async def attach(self, candidate: Any) -> None:
        """Attach a picked ``Candidate``. A new conversation has no row yet: its chips wait
        in ``pending_chips`` and go with the first message (``Session.chat``'s ``chips``)."""
        if candidate is None:
            return
        if self.conversation_id is None:
            item = ChipItem(candidate.kind, candidate.ref_id, candidate.label, candidate.snippet)
            if all(p.key != item.key for p in self.pending_chips):
                self.pending_chips.append(item)
            await self._show_chips_async(list(self.pending_chips))
            return
        self._attach_saved(candidate)

    @work(thread=True, group="chips", exit_on_error=False)
    def _attach_saved(self, candidate: Any) -> None:
        from ...engine.chips import cut
        from ...engine.errors import SadieError

        session = self.session
        assert self.conversation_id is not None
        try:
            session.add_chip(
                self.conversation_id,
                candidate.kind,
                candidate.ref_id,
                label=cut(candidate.label, 80),
            )
            chips = session.chips(self.conversation_id)
        except SadieError as exc:
            self.app.call_from_thread(self.notify, exc.one_line(), severity="error")
            return
        self.app.call_from_thread(self._show_chips, [_item(c) for c in chips])

    @on(ChipView.RemoveRequested)
    async def _on_remove_chip(self, event: ChipView.RemoveRequested) -> None:
        await self.remove_chip(event.item)

    async def action_remove_last_chip(self) -> None:
        items = self.query_one(ChipBar).items
        if not items:
            self.notify("No context is attached", severity="warning", timeout=2)
            return
        await self.remove_chip(items[-1])

    async def remove_chip(self, item: ChipItem) -> None:
        if item.chip_id is None or self.conversation_id is None:
            self.pending_chips = [p for p in self.pending_chips if p.key != item.key]
            await self._show_chips_async(list(self.pending_chips))
            return
        self._remove_saved(item)

    @work(thread=True, group="chips", exit_on_error=False)
    def _remove_saved(self, item: ChipItem) -> None:
        from ...engine.errors import SadieError

        session = self.session
        assert self.conversation_id is not None and item.chip_id is not None
        try:
            session.remove_chip(self.conversation_id, item.chip_id)
            chips = session.chips(self.conversation_id)
        except SadieError as exc:
            self.app.call_from_thread(self.notify, exc.one_line(), severity="error")
            return
        self.app.call_from_thread(self._show_chips, [_item(c) for c in chips])

    async def _show_chips(self, items: list[ChipItem]) -> None:
        await self._show_chips_async(items)

    async def _show_chips_async(self, items: list[ChipItem]) -> None:
        await self.query_one(ChipBar).set_items(items)

    # -- citations ---------------------------------------------------------------------------
    @on(CitationItem.Selected)
    def _open_citation(self, event: CitationItem.Selected) -> None:
        if self.sadie.session is None:
            return
        from .episode import EpisodeScreen

        self.app.push_screen(EpisodeScreen(self.sadie.session, event.citation))


def _item(chip: Any) -> ChipItem:
    return ChipItem(chip.kind, chip.ref_id, chip.label, chip.snippet, chip.id)
