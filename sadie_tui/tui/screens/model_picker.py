"""F4: choose the model, and the model server it runs on.

The dialog shows the server's address and which source it came from (the environment,
config.toml, the default, or set here), says when the environment and config.toml disagree,
and lists the server's models. When the list fails it says why in one line and puts the
cursor in the address box: a new address is used at once (this run, whatever the environment
says), saved to config.toml by the app, and the models are asked for again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ...display import safe
from ...engine.errors import SadieError
from .dialogs import DIALOG_CSS

if TYPE_CHECKING:
    from ...engine.reasoners.choose import ServerSource
    from ...engine.reasoners.ollama import ModelInfo
    from ..host import SadieHost


def describe(model: ModelInfo) -> str:
    """A picker line for a ``ModelInfo``: size, parameters, family, quantisation."""
    parts = []
    if model.size:
        parts.append(
            f"{model.size / 1e9:.1f} GB" if model.size >= 1e8 else f"{model.size / 1e6:.0f} MB"
        )
    parts += [x for x in (model.parameter_size, model.family, model.quantization) if x]
    return " · ".join(parts)


class ModelPicker(ModalScreen[str | None]):
    """The models of the server in use (enter picks one), its address and where that came
    from; the address box changes the server (see the module)."""

    DEFAULT_CSS = (
        "ModelPicker {"
        + DIALOG_CSS
        + """
        #server-conflict { color: $warning; display: none; }
        #server-state { margin: 1 0 0 0; }
        #server-state.-failed { color: $error; }
        OptionList { height: auto; max-height: 16; }
        OptionList.-empty { display: none; }
        #server-row { height: auto; margin: 1 0 0 0; }
        #server-row > Static { width: auto; padding: 1 1 0 0; }
        #server-address { width: 1fr; }
        }"""
    )
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, host: SadieHost, current: str, *, edit_address: bool = False) -> None:
        super().__init__()
        self.host = host
        self.current = current
        self.edit_address = edit_address  # opened to change the address: the box has focus
        self.failed = ""  # why the last listing failed ("" when it did not)
        self.names: list[str] = []

    def compose(self):
        with Vertical():
            yield Static(Text("Model"), classes="dialog-title")
            yield Static("", id="server-source", markup=False)
            yield Static("", id="server-conflict", markup=False)
            # The address before the list: in sight, and focused first, on a 60×20 screen.
            with Horizontal(id="server-row"):
                yield Static("Address", markup=False)
                yield Input(placeholder="http://127.0.0.1:11434", id="server-address")
            yield Static(Text("Asking the model server for its models…"), id="server-state")
            yield OptionList(id="models")

    def on_mount(self) -> None:
        session = self.host.session
        if session is not None:
            self.show_source(session.model_server())
        self.query_one(OptionList).add_class("-empty")  # until models come
        self.query_one(Input).focus()  # the list takes it once it has models to pick
        self.list_models()

    def show_source(self, source: ServerSource) -> None:
        """The address in use, where it came from, and a disagreement between sources."""
        self.query_one("#server-source", Static).update(
            Text(f"Model server: {safe(source.describe())}")
        )
        conflict = self.query_one("#server-conflict", Static)
        conflict.display = bool(source.conflict)
        conflict.update(Text(f"! {safe(source.conflict)}"))
        box = self.query_one(Input)
        if not box.value or box.value != source.address:
            box.value = source.address

    def show_state(self, line: str, *, failed: bool = False) -> None:
        state = self.query_one("#server-state", Static)
        state.update(Text(safe(line)))
        state.set_class(failed, "-failed")

    @work(exclusive=True, group="model-picker", exit_on_error=False)
    async def list_models(self) -> None:
        """Ask the server in use for its models and show them, or why it could not."""
        session = self.host.session
        if session is None:
            return
        self.show_state("Asking the model server for its models…")
        options = self.query_one(OptionList)
        try:
            found = await session.models()
        except SadieError as exc:
            self.failed = exc.message
            options.clear_options()
            options.add_class("-empty")
            self.names = []
            self.show_state(
                f"✗ Cannot list the models: {exc.message}. Change the address above"
                " and press enter.",
                failed=True,
            )
            self.query_one(Input).focus()
            return
        self.failed = ""
        self.names = [m.name for m in found]
        options.clear_options()
        for model in found:
            text = Text("● " if model.name == self.current else "  ", style="bold")
            text.append(safe(model.name), style="bold")
            if description := describe(model):
                text.append(f"  {safe(description)}", style="dim")
            options.add_option(Option(text, id=model.name))
        options.set_class(not found, "-empty")
        if not found:
            self.show_state("The server answers, but has no models pulled.", failed=True)
            return
        count = len(found)
        self.show_state(f"{count} model{'s' if count != 1 else ''} on this server: enter picks one")
        if self.current in self.names:
            options.highlighted = self.names.index(self.current)
        if not self.query_one(Input).has_focus or not self.edit_address:
            options.focus()

    @on(Input.Submitted, "#server-address")
    def _address(self, event: Input.Submitted) -> None:
        event.stop()
        address = event.value.strip()
        if not address:
            return
        try:
            source = self.host.models.use_server(address)
        except SadieError as exc:
            self.show_state(f"✗ {exc.one_line()}", failed=True)
            return
        self.show_source(source)
        self.edit_address = False
        self.list_models()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
