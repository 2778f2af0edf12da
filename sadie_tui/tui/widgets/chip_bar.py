"""The chip bar above the input: every attached chip as label + kind + ✕, its snippet as the
tooltip; delete/backspace on a focused chip (or a click) asks for its removal
(``ChipView.RemoveRequested``, handled by the screen). A new conversation has no row to
attach chips to yet: the bar holds them (``pending``) until the first message takes them.

One line, never a chip cut in half: when the chips do not fit, the bar shows a run of whole
chips with "‹ N more" / "N more ›" for the rest. At rest the run ends with the latest chip;
with a chip focused it holds that chip, and ←/→ (or tab/shift+tab) walk every chip,
sliding the run. A click on a hint reveals the next hidden chip.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.actions import SkipAction
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from ...display import safe
from .fitting import FittingLine

KIND_NAMES = {
    "wiki": "wiki",
    "source": "source",
    "brief": "brief",
    "graph_entity": "entity",
    "discourse": "today",
    "record": "record",
}

#: The longest label a chip shows (the tooltip has all of it).
LABEL_MAX = 28
ELLIPSIS = "…"


@dataclass(frozen=True)
class ChipItem:
    """A chip as the screen knows it; ``chip_id`` is None while it waits for the first send
    (a new conversation has no row to attach it to yet)."""

    kind: str
    ref_id: str
    label: str
    snippet: str | None = None
    chip_id: str | None = None
    added_by: str = "you"  # sadie: attached by sadie itself (a "who is" message's wiki page)

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.ref_id}"


# Before the label of a chip sadie attached itself (its tooltip says so in words).
SADIE_MARK = "✦ "


def chip_text(item: ChipItem, width: int | None = None) -> Text:
    """``label · kind ✕``, the label cut with "…" to ``LABEL_MAX`` and, if given, to fit
    ``width`` cells: the kind and the ✕ always show."""
    kind = f" · {KIND_NAMES.get(item.kind, item.kind)}"
    close = " ✕"
    room = LABEL_MAX
    if width is not None:
        room = min(room, width - cell_len(kind) - cell_len(close))
    mark = SADIE_MARK if item.added_by == "sadie" else ""
    room -= cell_len(mark)
    label = " ".join(safe(item.label).split())
    if cell_len(label) > room:
        label = _cut(label, max(1, room - 1)) + ELLIPSIS
    text = Text(label, no_wrap=True)
    if mark:
        text = Text(mark, style="italic", no_wrap=True) + text
    text.append(kind, style="italic dim")
    text.append(close, style="dim")
    return text


def _cut(text: str, cells: int) -> str:
    out = ""
    for ch in text:
        if cell_len(out + ch) > cells:
            break
        out += ch
    return out.rstrip()


def before_hint(hidden: int) -> str:
    return f"‹ {hidden} more"


def after_hint(hidden: int) -> str:
    return f"{hidden} more ›"


#: The cells a hint takes beside its text (its margin).
HINT_MARGIN = 1


def _hint_cells(hint: Callable[[int], str], hidden: int) -> int:
    return cell_len(hint(hidden)) + HINT_MARGIN if hidden else 0


def chip_window(
    widths: Sequence[int], room: int, *, focus: int | None = None, first: int = 0
) -> tuple[int, int]:
    """The chips ``[start, stop)`` to show in ``room`` cells, each of ``widths`` whole, with
    room left for the hints that count the others. All of them if they fit; else, at rest
    (``focus`` None), the run that ends with the last chip; else the run from ``first``
    moved as little as it takes to hold ``focus``, and moved back while that leaves no gap.
    At least one chip always shows."""
    n = len(widths)
    if n == 0:
        return 0, 0
    if sum(widths) <= room:
        return 0, n

    def fit(start: int) -> int:
        used = _hint_cells(before_hint, start)
        stop = start
        while stop < n:
            hint = _hint_cells(after_hint, n - stop - 1)
            if stop > start and used + widths[stop] + hint > room:
                break
            used += widths[stop]
            stop += 1
        return stop

    if focus is None:
        start = next(s for s in range(n) if fit(s) == n)
        return start, n
    focus = max(0, min(focus, n - 1))
    start = max(0, min(first, focus))
    while fit(start) <= focus:
        start += 1
    while start > 0 and fit(start - 1) >= fit(start):
        start -= 1
    return start, fit(start)


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
        Binding(
            "right,tab",
            "step(1)",
            "Next chip",
            id="next-chip",
            show=False,
            tooltip="The next chip; after the last, on to the next field",
        ),
        Binding(
            "left,shift+tab",
            "step(-1)",
            "Previous chip",
            id="previous-chip",
            show=False,
            tooltip="The previous chip; before the first, back to the previous field",
        ),
    ]

    class RemoveRequested(Message):
        """The person asked to remove this chip (a key, a click, or ctrl+r for the last)."""

        def __init__(self, item: ChipItem) -> None:
            super().__init__()
            self.item = item

    def __init__(self, item: ChipItem) -> None:
        super().__init__()
        self.item = item

    def on_mount(self) -> None:
        snippet = self.item.snippet or self.item.label
        if cell_len(self.item.label) > LABEL_MAX and snippet != self.item.label:
            snippet = f"{self.item.label}\n\n{snippet}"
        by = "sadie added this for who you named; " if self.item.added_by == "sadie" else ""
        self.tooltip = Text(f"{safe(snippet)}\n\n({by}delete or click removes it)")

    @property
    def cells(self) -> int:
        """The cells this chip takes in the bar, margin included, when it is not squeezed."""
        chrome = self.styles.padding.width + self.styles.margin.width
        return cell_len(chip_text(self.item).plain) + chrome

    def get_content_width(self, container: object, viewport: object) -> int:
        return cell_len(chip_text(self.item).plain)

    def render(self) -> Text:
        return chip_text(self.item, self.content_size.width or None)

    def action_remove(self) -> None:
        self.post_message(self.RemoveRequested(self.item))

    def action_step(self, direction: int) -> None:
        bar = self.parent
        if not isinstance(bar, ChipBar) or not bar.step(self, direction):
            raise SkipAction()  # past either end: tab and shift+tab move on as usual

    def on_click(self) -> None:
        self.post_message(self.RemoveRequested(self.item))


class ChipMore(Static):
    """A "‹ N more" / "N more ›" hint; a click brings in the next hidden chip that way."""

    def __init__(self, direction: int, *, id: str) -> None:
        super().__init__("", id=id, classes="chip-more", markup=False)
        self.direction = direction

    def on_click(self, event: events.Click) -> None:
        event.stop()
        bar = self.parent
        if isinstance(bar, ChipBar):
            bar.reveal(self.direction)


class ChipBar(Horizontal, can_focus=False):
    DEFAULT_CSS = """
    ChipBar {
        height: 1;
        width: 1fr;
        padding: 0 1;
        overflow: hidden hidden;
        #chip-hint {
            width: auto;
            color: $sadie-muted;
        }
        .chip-more {
            width: auto;
            margin: 0 1 0 0;
            color: $sadie-muted;
            text-style: italic;
            display: none;
            &:hover { color: $foreground; }
        }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[ChipItem] = []
        self.window = (0, 0)  # the chips shown: [start, stop)

    def compose(self):
        yield FittingLine(
            "no context attached · ctrl+t attaches notes, wiki, briefs, people",
            "no context · ctrl+t attaches some",
            id="chip-hint",
        )
        yield ChipMore(-1, id="chip-before")
        yield ChipMore(1, id="chip-after")

    @property
    def views(self) -> list[ChipView]:
        return list(self.query(ChipView))

    @property
    def pending(self) -> list[ChipItem]:
        """The chips held for a conversation not created yet (no chip id)."""
        return [item for item in self.items if item.chip_id is None]

    async def hold(self, item: ChipItem) -> None:
        """Hold ``item`` for the first message (once: the same note twice is one chip)."""
        if all(held.key != item.key for held in self.items):
            await self.set_items([*self.items, item])

    async def drop(self, item: ChipItem) -> None:
        """Let go of a held chip (nothing to tell the memory: it was never attached)."""
        await self.set_items([held for held in self.items if held.key != item.key])

    def remove_last(self) -> bool:
        """Ask for the last chip's removal, as a click on it would; False when there is none."""
        if not self.items:
            return False
        self.post_message(ChipView.RemoveRequested(self.items[-1]))
        return True

    async def set_items(self, items: list[ChipItem]) -> None:
        old = self.views
        focused = self.app.focused
        at = old.index(focused) if isinstance(focused, ChipView) and focused in old else None
        focused_key = old[at].item.key if at is not None else None
        self.items = list(items)
        await self.query(ChipView).remove()
        views = [ChipView(item) for item in self.items]
        await self.mount_all(views, before=self.query_one("#chip-after"))
        self.query_one("#chip-hint").display = not self.items
        # Once more after the new chips' first layout, in case their styles came late.
        self.call_after_refresh(self.reflow)
        if at is None:
            self.reflow()
            return
        # Keep the keyboard in the bar: the same chip, or the neighbour of a removed one.
        keys = [v.item.key for v in views]
        if not views:
            self.screen.focus_next()
            return
        target = keys.index(focused_key) if focused_key in keys else min(at, len(views) - 1)
        self.reflow(focus=target)
        views[target].focus()

    def reflow(self, focus: int | None = None) -> None:
        """Show the run of whole chips that fits (holding chip ``focus``, or the focused
        one; at rest the latest ones) and the hints for the rest."""
        views = self.views
        if focus is None and isinstance(self.app.focused, ChipView):
            focus = views.index(self.app.focused) if self.app.focused in views else None
        room = self.content_size.width
        if room <= 0:  # not laid out yet: on_resize comes back
            start, stop = 0, len(views)
        else:
            widths = [v.cells for v in views]
            start, stop = chip_window(widths, room, focus=focus, first=self.window[0])
        self.window = (start, stop)
        for i, view in enumerate(views):
            view.display = start <= i < stop
            if room > 0:
                view.styles.max_width = max(1, room - view.styles.margin.width)
        before = self.query_one("#chip-before", ChipMore)
        after = self.query_one("#chip-after", ChipMore)
        before.update(before_hint(start))
        before.display = start > 0
        after.update(after_hint(len(views) - stop))
        after.display = stop < len(views)

    def step(self, view: ChipView, direction: int) -> bool:
        """Focus the chip ``direction`` away from ``view``, sliding the run to it; False past
        either end."""
        views = self.views
        target = views.index(view) + direction
        if not 0 <= target < len(views):
            return False
        self.reflow(focus=target)
        views[target].focus()
        return True

    def reveal(self, direction: int) -> None:
        """Focus the first hidden chip on one side (a click on its hint)."""
        start, stop = self.window
        target = start - 1 if direction < 0 else stop
        views = self.views
        if 0 <= target < len(views):
            self.reflow(focus=target)
            views[target].focus()

    def on_resize(self) -> None:
        self.reflow()

    @on(events.DescendantFocus)
    def _focused(self) -> None:
        self.reflow()

    @on(events.DescendantBlur)
    def _blurred(self) -> None:
        # Focus has moved on by the time this is handled: back to rest if it left the bar.
        self.call_after_refresh(self._rest_unless_focused)

    def _rest_unless_focused(self) -> None:
        if not isinstance(self.app.focused, ChipView) or self.app.focused not in self.views:
            self.reflow()
