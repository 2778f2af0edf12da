"""Small modal dialogs: ask for a line of text, confirm, choose one of a list."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from ...display import safe

DIALOG_CSS = """
    align: center middle;
    & > Vertical {
        width: 70;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: round $primary;
        background: $surface;
        padding: 1 2;
    }
    .dialog-title { text-style: bold; margin: 0 0 1 0; }
    .dialog-buttons { height: auto; align-horizontal: right; margin: 1 0 0 0; }
    .dialog-buttons Button { margin: 0 0 0 2; }
"""


class TextPrompt(ModalScreen[str | None]):
    """One line of text (rename); enter accepts, escape cancels."""

    DEFAULT_CSS = "TextPrompt {" + DIALOG_CSS + "}"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str, value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value

    def compose(self):
        with Vertical():
            yield Static(Text(safe(self.title_text)), classes="dialog-title")
            yield Input(safe(self.value), id="dialog-input", select_on_focus=True)
            yield Static(Text("enter saves · escape cancels"), classes="dim")

    @on(Input.Submitted)
    def _accept(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if not value:
            self.app.bell()
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class Confirm(ModalScreen[bool]):
    """A yes/no question; y or the button confirms, n/escape cancels."""

    DEFAULT_CSS = "Confirm {" + DIALOG_CSS + "}"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="dialog.yes"),
        Binding("n,escape", "answer(False)", "No", id="dialog.no"),
    ]

    def __init__(self, question: str, detail: str = "", yes: str = "Forget") -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes = yes

    def compose(self):
        with Vertical():
            yield Static(Text(safe(self.question)), classes="dialog-title")
            if self.detail:
                yield Static(Text(safe(self.detail)))
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel (n)", id="no")
                yield Button(f"{self.yes} (y)", id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class Choose(ModalScreen[str | None]):
    """Pick one of ``options`` (value, description); the current one is marked."""

    DEFAULT_CSS = "Choose {" + DIALOG_CSS + "} Choose OptionList { height: auto; max-height: 20; }"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str, options: list[tuple[str, str]], current: str) -> None:
        super().__init__()
        self.title_text = title
        self.options = options
        self.current = current

    def compose(self):
        with Vertical():
            yield Static(Text(self.title_text), classes="dialog-title")
            prompts = []
            for value, description in self.options:
                text = Text("● " if value == self.current else "  ", style="bold")
                text.append(safe(value), style="bold")
                if description:
                    text.append(f"  {safe(description)}", style="dim")
                prompts.append(Option(text, id=value))
            yield OptionList(*prompts)

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        values = [v for v, _ in self.options]
        if self.current in values:
            options.highlighted = values.index(self.current)
        options.focus()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
