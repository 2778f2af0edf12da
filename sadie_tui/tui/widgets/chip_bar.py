"""The chip bar above the input: every attached chip as label + kind, its snippet as the
tooltip; delete/backspace on a focused chip (or a click) removes it."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.containers import HorizontalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

KIND_NAMES = {
    "wiki": "wiki",
    "source": "source",
    "brief": "brief",
    "graph_entity": "entity",
    "discourse": "today",
}


@dataclass(frozen=True)
class ChipItem:
    """A chip as the screen knows it; ``chip_id`` is None while it waits for the first send
    (a new conversation has no row to attach it to yet)."""

    kind: str
    ref_id: str
    label: str
    snippet: str | None = None
    chip_id: str | None = None

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.ref_id}"


class ChipView(Widget, can_focus=True):
    DEFAULT_CSS = """
    ChipView {
        width: auto;
        height: 1;
        margin: 0 1 0 0;
        padding: 0 1;
        background: $sadie-chip-background;
        color: $foreground;
        &:focus {
            background: $primary 40%;
            text-style: bold;
        }
        &:hover {
            background: $primary 25%;
        }
    }
    """

    BINDINGS = [
        Binding(
            "delete,backspace",
            "remove",
            "Remove chip",
            id="remove-chip",
            tooltip="Remove this chip",
        ),
    ]

    class RemoveRequested(Message):
        def __init__(self, item: ChipItem) -> None:
            super().__init__()
            self.item = item

    def __init__(self, item: ChipItem) -> None:
        super().__init__()
        self.item = item

    def on_mount(self) -> None:
        snippet = self.item.snippet or self.item.label
        self.tooltip = Text(f"{snippet}\n\n(delete or click removes it)")

    def render(self) -> Text:
        text = Text(self.item.label, no_wrap=True)
        text.append(f" · {KIND_NAMES.get(self.item.kind, self.item.kind)}", style="italic dim")
        text.append(" ✕", style="dim")
        return text

    def action_remove(self) -> None:
        self.post_message(self.RemoveRequested(self.item))

    def on_click(self) -> None:
        self.post_message(self.RemoveRequested(self.item))


class ChipBar(HorizontalScroll, can_focus=False):
    DEFAULT_CSS = """
    ChipBar {
        height: 1;
        width: 1fr;
        scrollbar-size: 0 0;
        padding: 0 1;
        #chip-hint {
            width: auto;
            color: $sadie-muted;
        }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[ChipItem] = []

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(
            "no context attached · ctrl+t attaches notes, wiki, briefs, people",
            id="chip-hint",
            markup=False,
        )

    async def set_items(self, items: list[ChipItem]) -> None:
        self.items = list(items)
        focused_key = self.app.focused.item.key if isinstance(self.app.focused, ChipView) else None
        await self.query(ChipView).remove()
        await self.mount_all([ChipView(item) for item in self.items])
        self.query_one("#chip-hint").display = not self.items
        if focused_key is not None:
            # Keep the keyboard in the bar: focus the neighbour of a removed chip.
            views = list(self.query(ChipView))
            if views:
                views[-1].focus()
            else:
                self.screen.focus_next()
