"""The chat screen: transcript, chip bar, input, emotion sigil, citation sidebar, status line.

The screen is composition, key bindings and routing: a sent message goes to the turn
controller (``tui/turn_controller.py``), which renders the engine's events on the widgets;
which conversation is on show, and its chips, is the conversation controller's
(``tui/conversation_controller.py``). The widgets post messages up (a chip to remove, a
reply focused, a citation opened) and the screen hands each to whoever owns it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Static, TextArea

from ..chat_widgets import NEW_TITLE, ChatWidgets
from ..conversation_controller import ConversationController
from ..turn_controller import TurnController
from ..widgets.chip_bar import ChipBar, ChipView
from ..widgets.citations import CitationItem, CitationSidebar
from ..widgets.fitting import NARROW, FittingFooter
from ..widgets.prompt import PromptInput
from ..widgets.sigil import EmotionSigil
from ..widgets.status import StatusLine
from ..widgets.transcript import AssistantMessage, MessageView, Transcript

if TYPE_CHECKING:
    from ...engine.chips import Candidate
    from ..host import SadieHost

STILL_REPLYING = "sadie is still replying — escape stops it"


def recall_order(mine: list[str], sent: list[str]) -> list[str]:
    """What Up recalls, newest first: this conversation's messages (``mine``, newest first),
    then the others sent since the app started (``sent``, oldest first)."""
    return mine + [t for t in reversed(sent) if t not in mine]


def focus_rank(widget: Widget) -> int:
    """Tab order: the input, the chips, the sources, then the messages."""
    for rank, kind in enumerate((PromptInput, ChipView, CitationItem, MessageView)):
        if isinstance(widget, kind):
            return rank
    return 4


class ChatScreen(Screen[None]):
    """The conversation screen (see the module)."""

    # Below NARROW columns the sources sidebar is an overlay, shown by ctrl+b.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW, "-wide")]

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
            tooltip="Attach context: a wiki entry, note, brief, person, Today card or record",
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
            "ctrl+f",
            "attach_record",
            "Attach record",
            id="attach-record",
            show=False,
            tooltip="Attach the record sadie offered: a calendar event, workout or purchase"
            " that matches your message but that the persona leaves out",
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
        # Not a priority binding, so a focused message's or citation's own ctrl+y shows in
        # the footer; the input binds it here too (its TextArea would redo).
        Binding(
            "ctrl+y",
            "copy",
            "Copy reply",
            id="copy",
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

    def __init__(self, host: SadieHost) -> None:
        super().__init__()
        self.host = host
        # Made here, not in compose: the controllers hold them from the start.
        self.widgets = widgets = ChatWidgets(
            title=Static(Text(NEW_TITLE), id="title"),
            sigil=EmotionSigil(id="sigil"),
            transcript=Transcript(id="transcript"),
            chips=ChipBar(id="chips"),
            prompt=PromptInput(
                id="prompt",
                placeholder="Talk to sadie… (enter sends, ctrl+j new line)",
                keymap=host.keymap,
            ),
            sources=CitationSidebar(id="sidebar"),
            status=StatusLine(id="status"),
        )
        self.conversation = ConversationController(self, host, widgets)
        self.turns = TurnController(self, host, widgets, self.conversation)
        widgets.prompt.history_source = lambda: recall_order(
            widgets.transcript.sent_texts(), host.sent
        )

    def compose(self):
        w = self.widgets
        with Horizontal(id="topbar"):
            yield w.sigil
            yield w.title
        with Horizontal(id="body"):
            with Vertical(id="main"):
                yield w.transcript
                yield w.chips
                yield w.prompt
            yield w.sources
        yield w.status
        yield FittingFooter()

    def on_mount(self) -> None:
        status, host = self.widgets.status, self.host
        status.model = host.model
        status.persona = host.persona
        if host.memory_ready.is_set():
            status.memory_state = "ready"
            status.via = host.via
            status.embedder_ready = host.session is not None and host.session.embedder_ready

    # -- what the app (and the tests) read -----------------------------------------------------
    @property
    def conversation_id(self) -> str | None:
        """The conversation on show (None: a new one, until its first reply)."""
        return self.conversation.conversation_id

    @property
    def title_text(self) -> str:
        """Its title, as the top bar shows it."""
        return self.conversation.title

    @property
    def reply(self) -> AssistantMessage | None:
        """The newest reply sent from this screen (None in a conversation just opened)."""
        return self.turns.reply

    @property
    def streaming(self) -> bool:
        """Whether a reply is being written."""
        return self.turns.streaming

    @property
    def chosen(self) -> bool:
        """Whether the person has chosen what to show (a conversation opened, ctrl+n, a
        message sent): the relaunch's reopen of the last conversation must not undo it."""
        return self.conversation.opened > 0 or self.streaming

    @property
    def editing(self) -> bool:
        """Whether the input holds the last message, to replace it when sent."""
        return self.widgets.prompt.editing

    # -- focus and keys ----------------------------------------------------------------------
    @property
    def focus_chain(self) -> list[Widget]:
        """Tab order: the input, the chips, the sources (one stop: the focused citation, else
        the first; Up/Down move within), then the messages."""
        chain = sorted(super().focus_chain, key=focus_rank)
        sources = [w for w in chain if isinstance(w, CitationItem)]
        keep = self.focused if self.focused in sources else next(iter(sources), None)
        return [w for w in chain if not isinstance(w, CitationItem) or w is keep]

    def on_key(self, event: events.Key) -> None:
        """A letter typed while a message, chip or citation has focus goes to the input."""
        if not event.is_printable or not event.character:
            return
        if isinstance(self.focused, TextArea | Input):
            return
        prompt = self.widgets.prompt
        prompt.focus()
        prompt.insert(event.character)
        event.stop()
        event.prevent_default()

    def on_screen_resume(self) -> None:
        # Back from the episode view, a dialog or the browser: typing goes to the input.
        self.call_after_refresh(self.widgets.prompt.focus)

    def action_scroll_transcript(self, how: str) -> None:
        transcript = self.widgets.transcript
        scroll = {
            "scroll_page_up": transcript.scroll_page_up,
            "scroll_page_down": transcript.scroll_page_down,
            "scroll_home": transcript.scroll_home,
            "scroll_end": transcript.scroll_end,
        }[how]
        scroll(animate=False)

    # -- routing -----------------------------------------------------------------------------
    @on(PromptInput.Submitted)
    async def _on_submitted(self, event: PromptInput.Submitted) -> None:
        if self.streaming:
            event.prompt.put_back(event.text)
            self.notify(STILL_REPLYING, severity="warning", timeout=3)
            return
        self.conversation.keep_shown()
        if event.prompt.editing:
            event.prompt.set_editing(False)
            await self.turns.send(event.text, regenerate=True)
            return
        await self.turns.send(event.text)

    async def send(self, text: str) -> None:
        """Send ``text`` as if typed (``sadie "question"`` starts with one)."""
        self.conversation.keep_shown()
        await self.turns.send(text)

    @on(AssistantMessage.Focused)
    async def _on_reply_focused(self, event: AssistantMessage.Focused) -> None:
        await self.widgets.sources.follow(event.reply)

    @on(ChipView.RemoveRequested)
    async def _on_remove_chip(self, event: ChipView.RemoveRequested) -> None:
        await self.conversation.remove(event.item)

    @on(CitationItem.Selected)
    def _open_citation(self, event: CitationItem.Selected) -> None:
        if self.host.session is None:
            return
        from .episode import EpisodeScreen  # lazy: shown on demand

        self.app.push_screen(EpisodeScreen(self.host.session, event.citation))

    # -- actions -----------------------------------------------------------------------------
    async def action_stop_reply(self) -> None:
        prompt = self.widgets.prompt
        # The sidebar shown over the chat (below NARROW columns) goes first.
        if self.has_class("-narrow") and self.widgets.sources.display:
            self.action_toggle_sidebar()
        elif self.turns.stop():
            self.notify("Stopped. What was shown is kept.", timeout=2)
        elif prompt.editing:
            prompt.cancel_editing()
        else:
            prompt.focus()

    async def action_new_conversation(self) -> None:
        if self.streaming:
            self.notify(
                "Stopped the reply (what was shown is kept) for a new conversation", timeout=3
            )
        await self.open_conversation(None)

    async def action_regenerate(self) -> None:
        if self.streaming:
            self.notify(STILL_REPLYING, severity="warning", timeout=3)
            return
        await self.turns.send("", regenerate=True)

    def action_edit_last(self) -> None:
        if self.streaming:
            self.notify(STILL_REPLYING, severity="warning", timeout=3)
            return
        last = self.widgets.transcript.last_user_message()
        if last is None:
            self.notify("There is no message to edit yet", timeout=3)
            return
        self.widgets.prompt.start_editing(last.text)

    def action_browser(self) -> None:
        from .conversations import BrowserScreen  # lazy: shown on demand

        def opened(result: tuple[str, str | None] | None) -> None:
            if result is None:
                return
            action, conversation_id = result
            if action == "open" and conversation_id == self.conversation_id:
                return
            self.run_worker(self.open_conversation(conversation_id), group="open")

        self.app.push_screen(BrowserScreen(self.host, current=self.conversation_id), opened)

    async def open_conversation(self, conversation_id: str | None) -> None:
        """Show another conversation (``None``: a fresh one); a reply being written is
        stopped first, and kept as interrupted."""
        await self.turns.abandon()
        prompt = self.widgets.prompt
        if prompt.editing:
            prompt.cancel_editing()
        await self.conversation.open(conversation_id)
        prompt.focus()

    def action_toggle_sidebar(self) -> None:
        sources = self.widgets.sources
        shown = sources.display
        self.set_class(not shown, "-sidebar-shown")
        self.set_class(shown, "-sidebar-hidden")
        if shown and self.focused is not None and sources in self.focused.ancestors:
            self.widgets.prompt.focus()  # not left on a hidden citation

    def action_copy(self) -> None:
        focused = self.focused
        if isinstance(focused, MessageView | CitationItem):
            focused.action_copy()
            return
        reply = self.widgets.transcript.last_reply()
        if reply is None or not reply.text:
            self.notify("There is no reply to copy yet", severity="warning", timeout=2)
            return
        self.app.copy_to_clipboard(reply.text)
        self.notify(f"Copied the last reply ({len(reply.text)} characters)", timeout=2)

    # -- chips -------------------------------------------------------------------------------
    def action_attach_chip(self) -> None:
        if self.host.session is None:
            self.notify("The memory is still opening — try again in a moment", timeout=3)
            return
        from .chip_picker import ChipPickerScreen  # lazy: shown on demand

        self.app.push_screen(ChipPickerScreen(self.host.session), self.attach)

    async def attach(self, candidate: Candidate | None) -> None:
        """Attach a picked ``Candidate``. A new conversation has no row yet: its chips wait
        in the chip bar and go with the first message (``Session.chat``'s ``chips``)."""
        await self.conversation.attach(candidate)

    async def action_attach_record(self) -> None:
        """Attach the record the last reply offered (the next one, pressed again)."""
        await self.conversation.attach_offered()

    def action_remove_last_chip(self) -> None:
        if not self.widgets.chips.remove_last():
            self.notify("No context is attached", severity="warning", timeout=2)
