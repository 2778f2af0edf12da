"""Help (F1): every binding of the screen it was opened from (with the person's remapped
keys), the keys of focusable items, what each sigil means and what each citation label
means."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ...engine.emotions import EMOTIONS, MEANINGS
from ..registers import GLYPHS, colour
from ..widgets.citations import LABEL_HELP

if TYPE_CHECKING:
    from ..host import SadieHost

# The order of the keys table; other bindings follow in the order found.
ORDER = (
    "send",
    "newline",
    "new-conversation",
    "browser",
    "attach-chip",
    "remove-chip",
    "remove-last-chip",
    "attach-record",
    "toggle-sidebar",
    "stop-reply",
    "regenerate",
    "edit-last",
    "copy",
    "scroll-up",
    "scroll-down",
    "scroll-start",
    "scroll-end",
    "help",
    "command-palette",
    "switch-persona",
    "switch-theme",
    "choose-model",
    "beliefs",
    "quit",
)

# How the memory fills, and what an empty one and a missing model look like (issue 34).
MEMORY_HELP = (
    "`sadie ingest PATH` reads notes, journals, calendars and CSV into it; "
    '`notes = ["~/notes"]` in config.toml names folders the app keeps current; '
    "`sadie --demo` opens a year of an invented life instead. While the memory is empty the "
    "start screen, the status line and every reply say so. With no model reachable the "
    "status line says offline and sadie quotes your notes; F4 sets the model server's address."
)

Row = tuple[str, str, str, str]  # keys, name, what it does, binding id


def _rank(row: Row) -> int:
    return ORDER.index(row[3]) if row[3] in ORDER else len(ORDER)


def screen_bindings(screen: Screen) -> list[Row]:
    """Every binding with an id active on ``screen`` (its keys merged), as help rows."""
    app = screen.app
    rows: dict[str, tuple[list[str], Binding]] = {}
    for active in screen.active_bindings.values():
        binding = active.binding
        if not binding.id:
            continue
        keys, _ = rows.setdefault(binding.id, ([], binding))
        display = app.get_key_display(binding)
        if display not in keys:
            keys.append(display)
    found = [
        (" / ".join(keys), b.description or b.action, b.tooltip, binding_id)
        for binding_id, (keys, b) in rows.items()
    ]
    return sorted(found, key=_rank)


def class_bindings(host: SadieHost, bindings: Iterable[BindingType]) -> list[Row]:
    """Bindings of widgets that only apply when one is focused, with keymap overrides."""
    rows = []
    for item in bindings:
        # A BINDINGS entry may be a tuple; make_bindings would also split "up,k" in two.
        binding = item if isinstance(item, Binding) else Binding(*item)
        keys = host.keymap.get(binding.id or "", binding.key)
        shown = " / ".join(
            host.get_key_display(Binding(k.strip(), binding.action)) for k in keys.split(",")
        )
        rows.append((shown, binding.description, binding.tooltip, binding.id or ""))
    return rows


def keys_table(rows: list[Row]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(ratio=1)
    table.add_column(style="dim", no_wrap=True)
    for keys, name, what, binding_id in rows:
        table.add_row(Text(keys), Text(name), Text(what), Text(binding_id))
    return table


def sigil_table(dark: bool = True) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column()
    for emotion in EMOTIONS:
        ink = colour(emotion, dark=dark)
        glyph = Text(f"{GLYPHS[emotion]} ", style=f"bold {ink}")
        glyph.append(emotion, style=f"{ink}")
        table.add_row(glyph, Text(MEANINGS[emotion].split(" — ", 1)[-1]))
    return table


def labels_table() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for label, meaning in LABEL_HELP.items():
        table.add_row(Text(label), Text(meaning))
    table.add_row(
        Text("underlined", style="underline yellow"),
        Text(
            "a number, time, date, amount or name in the reply that none of your notes, "
            "chips, soul summary or messages holds: the model may have made it up"
        ),
    )
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,q", "close", "Close", id="help.close")]

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        #help-box {
            width: 90%;
            max-width: 96;
            height: 90%;
            border: round $primary;
            background: $surface;
        }
        #help-scroll { padding: 0 1; }
        .help-heading { text-style: bold; color: $primary; margin: 1 0 0 0; }
        #help-foot { height: 1; color: $sadie-muted; padding: 0 1; }
    }
    """

    def __init__(
        self,
        title: str,
        bindings: list[Row],
        item_bindings: Iterable[tuple[str, list[Row]]] = (),
    ) -> None:
        super().__init__()
        self.title_text = title
        self.bindings_rows = bindings
        self.item_bindings = list(item_bindings)

    def compose(self):
        with Vertical(id="help-box"):
            with VerticalScroll(id="help-scroll"):
                yield Static(Text(f"Keys — {self.title_text}"), classes="help-heading")
                yield Static(keys_table(self.bindings_rows))
                for heading, rows in self.item_bindings:
                    yield Static(Text(heading), classes="help-heading")
                    yield Static(keys_table(rows))
                yield Static(
                    Text("The sigil: sadie's register for a reply"), classes="help-heading"
                )
                yield Static(sigil_table(self.app.current_theme.dark))
                yield Static(Text("Citation labels"), classes="help-heading")
                yield Static(labels_table())
                yield Static(
                    Text(
                        "Every citation is checked against the note it names before you see it; "
                        "citations to notes sadie was not shown are dropped."
                    )
                )
                yield Static(Text("Your memory"), classes="help-heading")
                yield Static(Text(MEMORY_HELP))
            yield Static(
                Text("escape closes · remap a key by its id under [keys] in config.toml"),
                id="help-foot",
            )

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()

    def action_close(self) -> None:
        self.dismiss(None)
