"""The chat screen: transcript, chip bar, input, emotion sigil, citation sidebar, status line.

It renders the engine's events and decides nothing itself. One reply streams at a time, in
an exclusive worker; escape cancels it (the engine marks the message ``interrupted`` and
keeps what was shown).
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerCancelled, WorkerFailed, WorkerState

from ...engine.events import (
    Checking,
    CitationsEvent,
    CitationView,
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
from ..widgets.citations import CitationItem, CitationSidebar
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
    from ..app import SadieApp

NEW_TITLE = "New conversation"


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

    @property
    def sadie(self) -> SadieApp:
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
        status.model = app.settings.model
        status.persona = app.persona
        if app.memory_ready.is_set():
            status.memory_state = "ready"
            status.embedder_ready = app.session is not None and app.session.embedder_ready

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
        await self.send(event.text)

    async def send(self, text: str) -> None:
        transcript = self.query_one(Transcript)
        now = self.sadie.clock()
        await transcript.add(UserMessage(text.strip(), now))
        reply = AssistantMessage(at=now, emotion=self.query_one(EmotionSigil).emotion)
        self.reply = reply
        await transcript.add(reply)
        self._worker = self._run_reply(text, reply)

    @work(exclusive=True, group="chat", exit_on_error=False)
    async def _run_reply(self, text: str, reply: AssistantMessage) -> None:
        app = self.sadie
        if not app.memory_ready.is_set():
            reply.set_placeholder("opening your memory…")
            await app.memory_ready.wait()
        if app.session is None:
            await reply.failed("the memory could not be opened", None)
            return
        pending = list(self.pending_chips) if self.conversation_id is None else []
        self._replace_reason = ""
        stream = app.session.chat(text, conversation_id=self.conversation_id, persona=app.persona)
        try:
            async with aclosing(stream) as events:
                async for event in events:
                    await self._render_event(event, reply, pending)
        except asyncio.CancelledError:
            await reply.interrupted()
            raise
        except Exception as exc:  # noqa: BLE001 - shown, never a traceback over the UI
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
                status.model = event.model
                status.online = not event.offline
                status.persona = event.persona
                if self.conversation_id != event.conversation_id:
                    self.conversation_id = event.conversation_id
                    self.set_title(event.title)
                if pending:
                    # The engine reads chips after Meta: attach the held ones now.
                    items = await asyncio.to_thread(
                        self._attach_pending, event.conversation_id, pending
                    )
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
            case Checking():
                await reply.end_text()
                reply.set_checking(True)
            case Token(value=value):
                reply.write(value)
            case CitationsEvent(value=citations):
                # The text is complete: its end shows at once, not a throttle tick later,
                # and in the same frame as its sources (one layout pass, not two).
                with self.app.batch_update():
                    await reply.end_text()
                    reply.checking = False
                    reply.unsupported = list(event.unsupported)
                    reply.set_sources(len(citations) + len(event.found))
                    await self.query_one(CitationSidebar).show(
                        citations,
                        found=event.found,
                        unsupported=len(event.unsupported),
                        tail=event.tail,
                        repaired=event.repaired,
                        note=event.note,
                    )
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
                status.tokens_per_s = event.tokens_per_s or None
            case ErrorEvent():
                await reply.failed(event.message, event.fix)
                self.notify(
                    event.message + (f"\n{event.fix}" if event.fix else ""),
                    title="The reply failed",
                    severity="error",
                    timeout=8,
                )

    def _attach_pending(self, conversation_id: str, pending: list[ChipItem]) -> list[ChipItem]:
        session = self.session
        for item in pending:
            session.add_chip(conversation_id, item.kind, item.ref_id, label=item.label)
        return [_item(c) for c in session.chips(conversation_id)]

    def set_title(self, title: str) -> None:
        self.title_text = title
        self.query_one("#title", Static).update(Text(title))

    # -- actions -----------------------------------------------------------------------------
    async def action_stop_reply(self) -> None:
        if self.streaming and self._worker is not None:
            self._worker.cancel()
            self.notify("Stopped. What was shown is kept.", timeout=2)
        else:
            self.query_one(PromptInput).focus()

    async def action_new_conversation(self) -> None:
        await self.open_conversation(None)

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
        await self.query_one(CitationSidebar).reset()
        self.conversation_id = None
        self.pending_chips = []
        self.reply = None
        await self._show_chips_async([])
        self.query_one(EmotionSigil).emotion = ""
        self.query_one(StatusLine).context = None
        self.set_title(NEW_TITLE)
        self.query_one(PromptInput).focus()
        if conversation_id is not None:
            self._load_conversation(conversation_id)

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
        self.set_title(conversation.title)
        transcript = self.query_one(Transcript)
        views: list[MessageView] = []
        last_citations: list[dict] = []
        last_meta: dict = {}
        for m in items:
            if m.role == "user":
                views.append(UserMessage(m.content, m.created_at))
            elif m.role == "assistant":
                view = AssistantMessage(
                    m.content, m.created_at, emotion=m.emotion or "", status=m.status, live=False
                )
                found = list((m.metadata or {}).get("found_by_sadie") or [])
                view.sources = len(m.citations or []) + len(found)
                view.unsupported = list((m.metadata or {}).get("unsupported") or [])
                views.append(view)
                last_citations = list(m.citations or [])
                last_meta = m.metadata or {}
        for view in views:
            await transcript.add(view)
            if isinstance(view, AssistantMessage) and view.unsupported:
                await view.flag(view.unsupported)
        await self.query_one(CitationSidebar).show(
            [CitationView.from_json(c) for c in last_citations],
            found=[CitationView.from_json(c) for c in last_meta.get("found_by_sadie") or []],
            unsupported=len(last_meta.get("unsupported") or []),
            tail=str(last_meta.get("tail") or "ok"),
            repaired=bool(last_meta.get("repaired")),
            note="" if last_meta.get("citation_pass") == "ok" else str(
                last_meta.get("citation_pass") or ""
            ),
        )
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
        in ``pending_chips`` and are attached when the first message creates it."""
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
