"""The message input: a TextArea where enter sends and ctrl+j / shift+enter start a new line;
Up in an empty box (or on the first line of a recalled message) recalls earlier messages.
While it holds the last message to change and resend (``editing``), its border says so; what
was typed before is set aside, given back (text and cursor) when the edit is cancelled, and
recalled by Up first until it is sent."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea
from textual.widgets.text_area import EditResult, Location

# Keys the box handles itself, for F1 (no binding: they only act in the cases described).
PROMPT_KEYS = [
    Binding(
        "up",
        "history",
        "Earlier message",
        id="history-back",
        tooltip="In an empty box: recall your earlier messages (this conversation first)",
    ),
    Binding(
        "down",
        "history",
        "Later message",
        id="history-forward",
        tooltip="While recalling: the next newer message, then an empty box again",
    ),
]


# Joiners and presentation selectors make sequences whose width terminals and Rich disagree on
# (tmux draws ❤️ in one cell where Rich counts two, and 👩‍💻 in four where Rich counts two), so a
# box drawn around them lands a column off and leaves a second border behind. The box keeps
# the characters without them, which every terminal and Rich measure alike: ❤, 👩💻.
UNSTEADY = str.maketrans("", "", "\u200d\ufe0e\ufe0f")


def steady(text: str) -> str:
    """``text`` without zero-width joiners and variation selectors (``UNSTEADY``)."""
    return text.translate(UNSTEADY)


class PromptInput(TextArea):
    """Multi-line input; ``Submitted`` carries the text (never empty), then it clears."""

    BINDINGS = [
        # Not priority bindings: those run as soon as the key arrives, ahead of the keys
        # still queued for this widget, so fast typing + enter would send half a message.
        # Instead ``_on_key`` lets these keys pass, in order, to the binding check.
        Binding("enter", "submit", "Send", id="send", tooltip="Send the message"),
        # ctrl+j is the key the footer names: under tmux and many terminals shift+enter
        # arrives as a plain enter.
        Binding(
            "ctrl+j,shift+enter",
            "newline",
            "New line",
            id="newline",
            tooltip="Start a new line in the message (shift+enter too, where the terminal"
            " tells it from enter)",
        ),
        # The screen's copy (the last reply), not TextArea's redo.
        Binding(
            "ctrl+y",
            "screen.copy",
            "Copy reply",
            id="copy",
            show=False,
            tooltip="Copy the last reply, or the focused message or citation quote",
        ),
    ]

    class Submitted(Message):
        def __init__(self, prompt: PromptInput, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

        @property
        def control(self) -> PromptInput:
            return self.prompt

    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 10;
        &.-editing { border: tall $warning; border-title-color: $warning; }
    }
    """

    EDITING_TITLE = "editing your last message — enter resends it, escape cancels"
    EDITING_SHORT = "editing — enter resends, esc cancels"

    def __init__(
        self,
        *,
        id: str | None = None,
        placeholder: str = "",
        keymap: Mapping[str, str] | None = None,
    ) -> None:
        self.history_source: Callable[[], list[str]] = list
        self.keymap: Mapping[str, str] = keymap or {}  # binding id -> keys, as remapped
        self.editing = False  # holds the last message, to replace it when sent
        self._recall: list[str] = []
        self._draft: tuple[str, tuple[int, int]] | None = None  # set aside while editing
        self.drafts: list[str] = []  # drafts set aside by an edit, oldest first, for Up
        self._recalled = -1  # index into _recall of the text shown, -1: the person's own
        super().__init__(
            id=id,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            placeholder=placeholder,
            highlight_cursor_line=False,
        )

    def _own_keys(self) -> set[str]:
        keys: set[str] = set()
        for binding in self.BINDINGS:
            assert isinstance(binding, Binding)
            remapped = self.keymap.get(binding.id or "", binding.key)
            keys.update(k.strip() for k in remapped.split(","))
        return keys

    async def _on_key(self, event: events.Key) -> None:
        # Textual calls ``_on_key`` of every class in the MRO unless the default is
        # prevented: for our keys, skip TextArea's newline and let the key bubble on to
        # the app, which runs this widget's binding for it.
        if event.key in self._own_keys():
            event.prevent_default()
        elif event.key in ("up", "down") and self._history_step(-1 if event.key == "up" else 1):
            event.prevent_default()
            event.stop()

    def _history_step(self, step: int) -> bool:
        """Up: an older message; Down: a newer one, then back to an empty box. Only from an
        empty box or a recalled message left as it was, on its first (Up) or last (Down)
        line: otherwise the arrows move the cursor as usual."""
        recalled = self._recalled >= 0 and self.text == self._recall[self._recalled]
        if not recalled:
            if self.text or step > 0:
                return False
            drafts = list(reversed(self.drafts))
            older = [steady(t) for t in self.history_source()]
            self._recall = drafts + [t for t in older if t not in drafts]
            self._recalled = -1
        row = self.cursor_location[0]
        if recalled and (
            (step < 0 and row > 0) or (step > 0 and row < self.document.line_count - 1)
        ):
            return False
        index = self._recalled - step  # the list is newest first
        if index >= len(self._recall):
            self.app.bell()
            return True
        self._recalled = index
        self.text = self._recall[index] if index >= 0 else ""
        self.move_cursor(self.document.end if step < 0 else (0, 0))
        return True

    def action_submit(self) -> None:
        text = self.text
        if not text.strip():
            self.app.bell()
            return
        self.clear()
        self._recalled = -1
        if text in self.drafts:  # sent at last: recalled as a sent message from now on
            self.drafts.remove(text)
        self.post_message(self.Submitted(self, text))

    def action_newline(self) -> None:
        self.insert("\n")

    def _replace_via_keyboard(
        self, insert: str, start: Location, end: Location
    ) -> EditResult | None:
        """Typed or pasted text, kept steady (``UNSTEADY``)."""
        return super()._replace_via_keyboard(steady(insert), start, end)

    def put_back(self, text: str) -> None:
        """Show ``text`` again (a message that could not be sent yet), the cursor at its end."""
        self.text = steady(text)
        self.move_cursor(self.document.end)

    def start_editing(self, text: str) -> None:
        """Hold ``text`` (the last message) to change; enter then sends it as a replacement.
        What the box held is set aside (and recalled by Up) until the edit is cancelled."""
        if not self.editing:
            self._draft = (self.text, self.cursor_location) if self.text.strip() else None
            if self._draft is not None and self.text not in self.drafts:
                self.drafts.append(self.text)
        self.put_back(text)
        self.focus()
        self.set_editing(True)

    def cancel_editing(self) -> None:
        """Stop editing: the box holds again what it held before, the cursor where it was."""
        draft, self._draft = self._draft, None
        self.set_editing(False)
        self.text = draft[0] if draft else ""
        self.move_cursor(draft[1] if draft else (0, 0))

    def set_editing(self, editing: bool) -> None:
        """Mark the box as holding the last message to resend (its border says so), or not."""
        self.editing = editing
        self.set_class(editing, "-editing")
        self.border_title = self._editing_title() if editing else None

    def _editing_title(self) -> str:
        fits = not self.size.width or len(self.EDITING_TITLE) + 4 <= self.size.width
        return self.EDITING_TITLE if fits else self.EDITING_SHORT

    def on_resize(self) -> None:
        if self.editing:
            self.border_title = self._editing_title()
