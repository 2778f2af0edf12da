"""The passphrase dialog: an encrypted memory's passphrase when the app opens it (no keyring
holds its key), or on the first run, whether a new memory starts encrypted and under which
passphrase (typed twice). The app asks it from its memory worker (``ask_in_app``), which waits
for the answer; nothing is opened or written until it comes."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import App
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from ...display import safe
from .dialogs import DIALOG_CSS

if TYPE_CHECKING:
    from ...engine.privacy.unlock import Ask

FIRST_RUN = (
    "Choose a passphrase to keep this new memory encrypted on disk (never stored: without it"
    " the memory cannot be opened), or keep it plain (`sadie encrypt` later)."
)


class PassphraseScreen(ModalScreen[str | None]):
    """A passphrase, unseen; ``new``: typed twice, and "Keep it plain" declines (None)."""

    DEFAULT_CSS = (
        "PassphraseScreen {"
        + DIALOG_CSS
        + "  Input { margin: 0 0 1 0; }\n"
        + "  #passphrase-error { color: $error; height: auto; }\n}"
    )
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, prompt: str, new: bool) -> None:
        super().__init__()
        self.prompt = prompt
        self.new = new

    def compose(self):
        with Vertical():
            title = "Encrypt your memory?" if self.new else "This memory is encrypted"
            yield Static(Text(title), classes="dialog-title")
            yield Static(Text(FIRST_RUN if self.new else safe(self.prompt)))
            # Compact: the whole dialog fits a 60×20 terminal with its buttons.
            yield Input(password=True, placeholder="passphrase", id="passphrase", compact=True)
            if self.new:
                yield Input(
                    password=True, placeholder="the same again", id="passphrase-again", compact=True
                )
            yield Static("", id="passphrase-error")
            with Horizontal(classes="dialog-buttons"):
                if self.new:
                    yield Button("Keep it plain", id="plain", compact=True)
                accept = "Encrypt" if self.new else "Open"
                yield Button(accept, id="accept", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#passphrase", Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if self.new and event.input.id == "passphrase":
            self.query_one("#passphrase-again", Input).focus()
            return
        self._accept()

    @on(Button.Pressed, "#accept")
    def _accept(self) -> None:
        first = self.query_one("#passphrase", Input).value
        error = self.query_one("#passphrase-error", Static)
        if not first:
            error.update(Text("type a passphrase"))
            return
        if self.new and first != self.query_one("#passphrase-again", Input).value:
            error.update(Text("the two passphrases differ"))
            return
        self.dismiss(first)

    @on(Button.Pressed, "#plain")
    def action_cancel(self) -> None:
        self.dismiss(None)


def ask_in_app(app: App[Any]) -> Ask:  # Any: any app's result type
    """The ``Launch.ask`` of the app: called from its memory worker's thread, it shows the
    dialog on the app's loop and waits for the answer."""

    async def show(prompt: str, new: bool) -> str | None:
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        app.push_screen(PassphraseScreen(prompt, new), callback=answer.set_result)
        return await answer

    def ask(prompt: str, new: bool) -> str | None:
        # textual types call_from_thread for callbacks returning nothing; show returns the answer
        answer: str | None = app.call_from_thread(show, prompt, new)  # type: ignore[arg-type]
        return answer

    return ask
