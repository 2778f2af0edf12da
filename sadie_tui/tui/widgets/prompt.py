"""The message input: a TextArea where enter sends and shift+enter / ctrl+j start a new line."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea


class PromptInput(TextArea):
    """Multi-line input; ``Submitted`` carries the text (never empty), then it clears."""

    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 10;
    }
    """

    BINDINGS = [
        # Not priority bindings: those run as soon as the key arrives, ahead of the keys
        # still queued for this widget, so fast typing + enter would send half a message.
        # Instead ``_on_key`` lets these keys pass, in order, to the binding check.
        Binding("enter", "submit", "Send", id="send", tooltip="Send the message"),
        Binding(
            "shift+enter,ctrl+j",
            "newline",
            "New line",
            id="newline",
            tooltip="Start a new line in the message",
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

    def __init__(self, *, id: str | None = None, placeholder: str = "") -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            placeholder=placeholder,
            highlight_cursor_line=False,
        )

    def _own_keys(self) -> set[str]:
        keymap: dict[str, str] = getattr(self.app, "keymap", {})
        keys: set[str] = set()
        for binding in self.BINDINGS:
            assert isinstance(binding, Binding)
            keys.update(k.strip() for k in keymap.get(binding.id or "", binding.key).split(","))
        return keys

    async def _on_key(self, event: events.Key) -> None:
        # Textual calls ``_on_key`` of every class in the MRO unless the default is
        # prevented: for our keys, skip TextArea's newline and let the key bubble on to
        # the app, which runs this widget's binding for it.
        if event.key in self._own_keys():
            event.prevent_default()

    def action_submit(self) -> None:
        text = self.text
        if not text.strip():
            self.app.bell()
            return
        self.clear()
        self.post_message(self.Submitted(self, text))

    def action_newline(self) -> None:
        self.insert("\n")
