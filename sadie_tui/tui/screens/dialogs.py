"""Small modal dialogs: ask for a line of text, confirm, choose one of a list, choose where
an export goes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from ...display import safe
from ...engine.errors import SadieError

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


#: Writes the export in the format named (``md`` or ``json``) at the path; blocking.
ExportWriter = Callable[[Path, str], None]


def export_format(path: Path) -> str:
    """``json`` for a ``.json`` file (it can be imported again), else Markdown."""
    return "json" if path.suffix.lower() == ".json" else "md"


class ExportDialog(ModalScreen[Path | None]):
    """Where an export goes: a path, with a sensible default, to edit. Enter writes there
    (``.json`` as JSON that can be imported again, anything else as Markdown) and dismisses
    with the full path; a folder alone (or a path ending in a separator) takes the default
    file name. A bad place (no such
    folder, no permission) is one line under the path and the dialog stays open; a file
    that exists is replaced only once confirmed. Escape cancels."""

    DEFAULT_CSS = "ExportDialog {" + DIALOG_CSS + "} ExportDialog #export-error { color: $error; }"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str, default: Path, write: ExportWriter) -> None:
        super().__init__()
        self.title_text = title
        self.default = default
        self.write = write

    def compose(self):
        with Vertical():
            yield Static(Text(safe(self.title_text)), classes="dialog-title")
            yield Input(safe(str(self.default)), id="export-path")
            yield Static("", id="export-error", markup=False)
            yield Static(
                Text("enter writes (.json: JSON sadie can import) · escape cancels"),
                classes="dim",
            )

    def on_mount(self) -> None:
        self.query_one("#export-error", Static).display = False
        path = self.query_one("#export-path", Input)
        path.focus()
        path.cursor_position = len(path.value)

    @property
    def error(self) -> str:
        """The line under the path ("" when there is none)."""
        shown = self.query_one("#export-error", Static)
        return str(shown.render()) if shown.display else ""

    def show_error(self, line: str) -> None:
        shown = self.query_one("#export-error", Static)
        shown.update(Text(safe(line)))
        shown.display = bool(line)
        self.query_one("#export-path", Input).focus()

    def target(self, value: str) -> Path | str:
        """The file ``value`` names, or the one line that says why it cannot be written."""
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = Path.cwd() / path
        # `~/x/exports/` names a folder, there or not: never a file called `exports`.
        if path.is_dir() or value.endswith((os.sep, os.altsep or os.sep)):
            path = path / self.default.name
        folder = path.parent
        if not folder.is_dir():
            return f"no such folder: {folder}"
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"cannot write in {folder}: permission denied"
        if path.exists() and not path.is_file():
            return f"{path} is not a file"
        return path

    @on(Input.Submitted, "#export-path")
    def _submitted(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.app.bell()
            return
        found = self.target(event.value.strip())
        if isinstance(found, str):
            self.show_error(found)
            return
        self.show_error("")
        if not found.exists():
            self._write(found)
            return

        def replace(yes: bool | None) -> None:
            if yes:
                self._write(found)
            else:
                self.show_error(f"{found} exists: not replaced (change the name)")

        self.app.push_screen(
            Confirm(
                f"Replace {found.name}?",
                f"{found} exists; the export would replace what it holds.",
                yes="Replace",
            ),
            replace,
        )

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _write(self, path: Path) -> None:
        try:
            self.write(path, export_format(path))
        except SadieError as exc:
            self.app.call_from_thread(self.show_error, exc.one_line())
        except OSError as exc:
            line = f"cannot write {path}: {exc.strerror or exc}"
            self.app.call_from_thread(self.show_error, line)
        else:
            self.app.call_from_thread(self.dismiss, path)

    def action_cancel(self) -> None:
        self.dismiss(None)
