"""The message input: a TextArea where enter sends and shift+enter / ctrl+j start a new line."""

from __future__ import annotations

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
        # Priority, or the TextArea would insert a newline before the binding is seen.
        Binding("enter", "submit", "Send", id="send", priority=True, tooltip="Send the message"),
        Binding(
            "shift+enter,ctrl+j",
            "newline",
            "New line",
            id="newline",
            priority=True,
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

    def action_submit(self) -> None:
        text = self.text
        if not text.strip():
            self.app.bell()
            return
        self.clear()
        self.post_message(self.Submitted(self, text))

    def action_newline(self) -> None:
        self.insert("\n")
