"""The conversation pane: the person's messages and sadie's, each with its time and (for
sadie) its register; the reply streams in as Markdown through a throttled ``ReplyStream``.

Everything from notes, the model and the person is shown as text (``rich.text.Text`` or
Markdown source), never parsed as Rich/Textual markup.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from ...display import safe
from ...engine.empty_memory import WELCOME as EMPTY_WELCOME
from ...engine.jsonvalue import objects
from ..registers import colour, glyph
from .citations import Sources, stopped_note
from .fitting import NARROW

if TYPE_CHECKING:
    # lazy: markdown-it loads with the first reply that needs Markdown
    from textual.widgets import Markdown

    from ...engine.conversations import Message as Stored
    from ...engine.jsonvalue import JSONObject

FLUSH_SECONDS = 1 / 30  # the most often a streaming reply re-renders

CUT_NOTES = {
    "repetition": "✂ cut: the model began repeating itself",
    "length": "✂ cut: the reply ran past its length limit (reply_max_chars)",
    "tokens": "✂ cut: the model reached its token limit (reply_tokens)",
}

STATUS_NOTES = {
    "interrupted": "■ stopped — what you see is what was kept",
    "blocked": "⊘ blocked by a policy",
    "error": "✗ this reply failed",
    "streaming": "… this reply was cut off (sadie closed while it streamed)",
}


class ReplyStream:
    """Feeds a streaming reply to its Markdown from one task.

    Appends start at most ``FLUSH_SECONDS`` apart, so a fast model costs a few appends, not
    thousands (each one re-parses and re-lays out the growing last block). Each append takes
    everything written up to the moment it starts: while the event loop is busy (reading a
    burst of tokens, say) nothing is queued that would show text already out of date.
    ``stop`` appends the rest at once.
    """

    def __init__(self, markdown: Markdown) -> None:
        self._markdown = markdown
        self._pending: list[str] = []
        self._written = asyncio.Event()
        self._stopping = asyncio.Event()
        self._task = asyncio.create_task(self._run())

    def write(self, fragment: str) -> None:
        self._pending.append(fragment)
        self._written.set()

    async def stop(self) -> None:
        """Show all that was written and end; shielded, so cancelling the caller (escape)
        still leaves the whole written text in the Markdown."""
        self._stopping.set()
        self._written.set()
        await asyncio.shield(self._task)

    async def _run(self) -> None:
        while True:
            await self._written.wait()
            self._written.clear()
            started = time.monotonic()
            if self._pending:
                text = "".join(self._pending)
                self._pending.clear()
                await self._markdown.append(text)
            if self._stopping.is_set() and not self._pending:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._stopping.wait(), started + FLUSH_SECONDS - time.monotonic()
                )


class MessageHeader(Widget):
    """The line above a message: its view's ``header_text``, the short wording when the long
    one does not fit the column."""

    DEFAULT_CSS = """
    MessageHeader {
        height: 1;
    }
    """

    def render(self) -> Text:
        view = self.parent
        if not isinstance(view, MessageView):
            return Text()
        full = view.header_text()
        width = self.size.width
        if not width or full.cell_len <= width or self.app.size.width >= NARROW:
            return full
        return view.header_text(short=True)


class MessageView(Widget, can_focus=True):
    """One message; focus it (click, tab, or the scroll keys) and press ctrl+y to copy it.
    Letters typed while it has focus go to the message box, not to it."""

    # The screen's ctrl+y (a priority binding) copies the focused message; this one names it
    # in the footer while a message has focus.
    BINDINGS = [Binding("ctrl+y", "copy", "Copy", id="copy", tooltip="Copy this message")]

    DEFAULT_CSS = """
    MessageView {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        & > .header {
            height: 1;
            color: $sadie-muted;
        }
        &:focus {
            background: $primary 18%;
            border-left: thick $accent;
            & > .header { text-style: bold reverse; color: $foreground; }
        }
    }
    """

    role = "user"

    def __init__(self, text: str, at: datetime, *, emotion: str = "") -> None:
        super().__init__()
        self._text = text
        self.at = at
        self.emotion = emotion

    @property
    def text(self) -> str:
        return self._text

    def header_text(self, short: bool = False) -> Text:
        """The line above the message; ``short``: the wording for a narrow column."""
        return Text.assemble(("you", "bold"), f" · {self.at:%H:%M}")

    def update_header(self) -> None:
        # One line high whatever it says: no layout. Not composed yet: compose shows it.
        for header in self.query_children(MessageHeader):
            header.refresh()

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.text)
        self.app.notify(f"Copied the message ({len(self.text)} characters)", timeout=2)


class UserMessage(MessageView):
    DEFAULT_CSS = """
    UserMessage {
        border-left: thick $sadie-user;
        & > .body { color: $foreground; }
    }
    """

    def compose(self):
        yield MessageHeader(classes="header")
        yield Static(Text(safe(self._text)), classes="body")


class AssistantMessage(MessageView):
    DEFAULT_CSS = """
    AssistantMessage {
        border-left: thick $sadie-assistant;
        & > .placeholder {
            color: $sadie-muted;
            text-style: italic;
        }
        & > Markdown {
            padding: 0;
            margin: 0;
            & > MarkdownBlock:last-child { margin-bottom: 0; }
        }
        & > .note {
            color: $warning;
            display: none;
        }
        &.-error > .note { color: $error; }
        &.-has-note > .note { display: block; }
        /* Details found in no note: the reply's ~~spans~~, restyled (see flag_markdown). */
        &.-flagged MarkdownBlock > .s {
            text-style: underline;
            color: $warning;
        }
    }
    """

    role = "assistant"

    def __init__(
        self,
        text: str = "",
        at: datetime | None = None,
        *,
        emotion: str = "",
        status: str = "streaming",
        live: bool = True,
    ) -> None:
        super().__init__(text, at or datetime.now(), emotion=emotion)
        self.status = status
        self.live = live
        self.message_id: str | None = None
        self.sources = Sources(state="waiting") if live else Sources()
        self.checking = False
        self.checking_for = 0.0  # seconds the citation pass has run
        self.in_tail = False  # the prose is complete: the model is writing its sources
        self.unsupported: list[JSONObject] = []
        self._stream: ReplyStream | None = None
        self._placeholder = "reading your notes…" if live else ""

    @classmethod
    def stored(cls, message: Stored) -> AssistantMessage:
        """A reply as the memory kept it (a ``Message``): its text, register, status and
        sources, and the details no note holds (flagged once it is mounted)."""
        metadata = message.metadata or {}
        view = cls(
            message.content,
            message.created_at,
            emotion=message.emotion or "",
            status=message.status,
            live=False,
        )
        view.message_id = message.id
        view.sources = Sources.stored(message.citations or [], metadata, message.status)
        view.unsupported = objects(metadata.get("unsupported"))
        return view

    def compose(self):
        # Imported here: markdown-it is not needed for the first frame.
        from textual.widgets import Markdown

        yield MessageHeader(classes="header")
        placeholder = Static(Text(self._placeholder), classes="placeholder")
        placeholder.display = self.live and not self._text
        yield placeholder
        yield Markdown(safe(self._text) or None, open_links=False)
        yield Static("", classes="note")

    def on_mount(self) -> None:
        if not self.live and self.status != "complete":
            self.show_note(STATUS_NOTES.get(self.status, self.status), error=self.status == "error")
        elif not self.live and self.sources.stopped is not None:
            self.show_note(stopped_note(self.sources.stopped))

    def header_text(self, short: bool = False) -> Text:
        """Sigil, time, register, sources and what the reply is doing; ``short`` (a narrow
        column): the register only as its sigil, fewer words."""
        text = Text()
        mark = glyph(self.emotion)
        if mark is not None:
            ink = colour(self.emotion, dark=self.app.current_theme.dark)
            text.append(mark, style=Style(color=ink, bold=True))
            text.append(" ")
        text.append("sadie", style="bold")
        text.append(f" · {self.at:%H:%M}")
        if self.emotion and not short:
            text.append(f" · {self.emotion}")
        count = self.sources.count
        if count:
            noun = "src" if short else f"source{'s' if count != 1 else ''}"
            text.append(f" · {count} {noun}")
        if self.live and self.status == "streaming":
            if self.checking:
                spent = f" {self.checking_for:.0f} s" if self.checking_for >= 1 else ""
                word = "checking…" if short else "checking sources…"
                text.append(f" · {word}{spent}", style="italic")
            elif self.in_tail:
                word = "writing sources…" if short else "writing its sources… esc keeps the reply"
                text.append(f" · {word}", style="italic")
            else:
                text.append(" · replying…" if short else " · replying… esc stops", style="italic")
        return text

    @property
    def markdown(self) -> Markdown:
        # lazy: textual.widgets loads only when markdown runs, off the start-up path
        from textual.widgets import Markdown

        return self.query_one(Markdown)

    # -- live updates ----------------------------------------------------------------------
    def set_emotion(self, emotion: str) -> None:
        self.emotion = emotion
        self.update_header()

    class Focused(Message):
        """A reply got focus: the sidebar shows its sources."""

        def __init__(self, reply: AssistantMessage) -> None:
            super().__init__()
            self.reply = reply

    def on_focus(self) -> None:
        self.post_message(self.Focused(self))

    def set_sources(self, sources: Sources) -> None:
        self.sources = sources
        self.update_header()

    def caption(self) -> str:
        """Which reply this is, for the sidebar: its time and first words."""
        words = " ".join(self._text.split()[:7])
        if len(self._text.split()) > 7:
            words += "…"
        when = f"{self.at:%H:%M}"
        return f"sadie's reply at {when}" + (f": “{words}”" if words else "")

    def set_placeholder(self, text: str) -> None:
        self._placeholder = text
        if not self._text:
            self.query_one(".placeholder", Static).update(Text(text))

    def thinking(self, elapsed: float) -> None:
        self.set_placeholder(f"thinking… {elapsed:.0f}s")

    def waiting(self, elapsed: float) -> None:
        self.set_placeholder(f"reading your notes… {elapsed:.0f} s")

    def set_checking(self, checking: bool, elapsed: float = 0.0) -> None:
        self.checking, self.checking_for = checking, elapsed
        self.update_header()

    async def flag(self, spans: list[JSONObject]) -> None:
        """Mark the details no note holds (offsets into the final text) in a distinct style."""
        self.unsupported = [sp for sp in spans if _span_fits(sp, self._text)]
        if not self.unsupported:
            return
        self.add_class("-flagged")
        await self.markdown.update(safe(flag_markdown(self._text, self.unsupported)))

    def write(self, fragment: str) -> None:
        """Add a piece of the reply; the first shows at once, later ones in batches (see
        ``ReplyStream``)."""
        if not fragment:
            return
        if self._stream is None:
            self.query_one(".placeholder", Static).display = False
            self._stream = ReplyStream(self.markdown)
        self._text += fragment
        self._stream.write(safe(fragment))

    async def end_text(self) -> None:
        """The reply's text is complete: show all of it now, without waiting for the throttle."""
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    async def _stop(self) -> None:
        await self.end_text()
        self.query_one(".placeholder", Static).display = False
        if self.status == "streaming":
            self.status = "stopping"  # the caller sets the real outcome next

    async def finish(self, status: str = "complete") -> None:
        await self._stop()
        self.status = status
        self.update_header()
        if not self._text and status == "complete":
            self.show_note("(sadie had nothing to say)")

    async def replace(self, text: str, reason: str, *, blocked: bool, quiet: bool = False) -> None:
        await self._stop()
        self._text = text
        await self.markdown.update(safe(text))
        if quiet:
            return
        if blocked:
            self.show_note(f"⊘ blocked by {reason}: the reply was replaced by this note")
        else:
            self.show_note(f"✎ changed by {reason}")

    async def writing_sources(self) -> None:
        """The prose is complete and the model writes its citations: all of it shows now,
        and the header and the sidebar say what is being waited for."""
        await self.end_text()
        self.in_tail = True
        self.sources.state = "writing"
        self.update_header()

    async def stopped_in_sources(self) -> None:
        """Stopped while the model wrote its sources: the reply is kept complete (the engine
        checked the citations that had arrived; they are read back next)."""
        await self._stop()
        self.in_tail = False
        self.status = "complete"
        self.update_header()

    async def interrupted(self) -> None:
        await self._stop()
        self.status = "interrupted"
        self.update_header()
        self.show_note(STATUS_NOTES["interrupted"])

    async def failed(self, message: str, fix: str | None) -> None:
        await self._stop()
        self.status = "error"
        self.update_header()
        note = f"✗ {message}" + (f" — {fix}" if fix else "")
        self.show_note(note, error=True)

    def show_note(self, note: str, *, error: bool = False) -> None:
        self.query_one(".note", Static).update(Text(safe(note)))
        self.add_class("-has-note")
        self.set_class(error, "-error")


def _span_fits(span: dict, text: str) -> bool:
    try:
        start, end = int(span["start"]), int(span["end"])
    except (KeyError, TypeError, ValueError):
        return False
    return 0 <= start < end <= len(text) and text[start:end] == span.get("text")


def flag_markdown(text: str, spans: list[dict]) -> str:
    """The reply's Markdown with each flagged span as ``~~span~~`` (restyled by CSS in a
    flagged message); the reply's own ``~~`` are escaped so only flags look that way."""
    out: list[str] = []
    at = 0
    for span in sorted(spans, key=lambda sp: int(sp["start"])):
        start, end = int(span["start"]), int(span["end"])
        if start < at:
            continue
        out.append(text[at:start].replace("~", "\\~"))
        out.append("~~" + text[start:end].replace("~", "\\~") + "~~")
        at = end
    out.append(text[at:].replace("~", "\\~"))
    return "".join(out)


class Transcript(VerticalScroll, can_focus=False):
    """The scrolling list of messages; anchored to the bottom unless scrolled up."""

    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        padding: 0 1;
        #welcome {
            color: $sadie-muted;
            padding: 1 2;
        }
    }
    """

    WELCOME = (
        "Talk with sadie about your own life. Replies come only from your notes, and every "
        "quote is checked against them.\n\nenter sends · ctrl+j new line · ctrl+t attach context"
        " · ctrl+l past conversations · f1 help"
    )

    def compose(self):
        yield Static(Text(self.WELCOME), id="welcome")

    def set_empty(self, empty: bool) -> None:
        """The start screen for an empty memory (how to fill it), or the usual one."""
        self.query_one("#welcome", Static).update(Text(EMPTY_WELCOME if empty else self.WELCOME))

    def on_mount(self) -> None:
        self.anchor()

    async def clear(self) -> None:
        await self.query(MessageView).remove()
        self.query_one("#welcome").display = True
        self.anchor()

    async def add(self, view: MessageView, *more: MessageView) -> MessageView:
        """Mount ``view`` (and ``more`` after it, in the same mount: one pass of compose,
        styles and layout for a message and its reply); returns ``view``."""
        self.query_one("#welcome").display = False
        await self.mount(view, *more)
        self.anchor()
        return view

    async def show_stored(self, messages: Iterable[Stored]) -> AssistantMessage | None:
        """Mount a stored conversation's messages (``Message`` records; system ones are not
        shown) and flag their unsupported details; returns the last reply, if any."""
        views: list[MessageView] = []
        for m in messages:
            if m.role == "user":
                views.append(UserMessage(m.content, m.created_at))
            elif m.role == "assistant":
                views.append(AssistantMessage.stored(m))
        for view in views:
            await self.add(view)
            if isinstance(view, AssistantMessage) and view.unsupported:
                await view.flag(view.unsupported)
        return self.last_reply()

    async def remove_from(self, first: MessageView) -> None:
        """Take ``first`` and every message after it off the screen."""
        views = self.messages
        await self.remove_children(views[views.index(first) :])

    @property
    def messages(self) -> list[MessageView]:
        return list(self.query(MessageView))

    def last_reply(self) -> AssistantMessage | None:
        replies = list(self.query(AssistantMessage))
        return replies[-1] if replies else None

    def last_user_message(self) -> UserMessage | None:
        """The person's newest message on screen, if any."""
        users = list(self.query(UserMessage))
        return users[-1] if users else None

    def sent_texts(self) -> list[str]:
        """The person's messages in this conversation, newest first (for Up)."""
        return [v.text for v in reversed(self.messages) if v.role == "user"]
