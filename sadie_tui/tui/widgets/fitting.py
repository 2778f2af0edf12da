"""Pieces of text that fit a narrow terminal: a footer that never cuts a key in half, and a
line with a long and a short wording that shows whichever fits.

At 100 columns and more the footer is as Textual draws it; below, shorter words, and what
still does not fit is left out whole (F1 lists every key), fitted again at every width.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.geometry import Size
from textual.widgets import Footer, Static
from textual.widgets._footer import FooterKey

#: Below this many columns the app is narrow (the chat's sidebar becomes an overlay).
NARROW = 100

#: Shorter footer words for a narrow screen.
SHORT = {"Conversations": "Chats", "New line": "Line", "Archived": "Archive tab"}

#: Keys a narrow footer leaves out first: the message box's placeholder names them.
FIRST_LEFT_OUT = ("submit", "newline")


def key_width(key: FooterKey) -> int:
    """Cells a (non-compact) footer key takes: " key " then "description "."""
    return cell_len(key.key_display) + 2 + (cell_len(key.description) + 1 if key.description else 0)


class FittingFooter(Footer):
    """Textual's footer; on a narrow screen it has no command-palette key (ctrl+p still
    works), uses shorter words, and leaves out whole keys that do not fit, F1 last of all."""

    def __init__(self) -> None:
        super().__init__()
        self._narrow: bool | None = None
        self._width = 0  # the width the narrow keys were fitted to

    def compose(self) -> ComposeResult:
        width = self.app.size.width
        if width >= NARROW:
            yield from super().compose()
            return
        self.show_command_palette = False
        keys = [k for k in super().compose() if isinstance(k, FooterKey)]
        for key in keys:
            key.description = SHORT.get(key.description, key.description)
        room = width - 2

        def total() -> int:
            return sum(key_width(k) for k in keys)

        for action in FIRST_LEFT_OUT:
            if total() > room:
                keys = [k for k in keys if k.action != action]
        helps = [k for k in keys if k.action == "app.help" or k.action == "help"]
        while total() > room and len(keys) > len(helps):
            drop = next(k for k in reversed(keys) if k not in helps)
            keys.remove(drop)
        self.styles.grid_size_columns = len(keys)
        yield from keys

    def on_resize(self) -> None:
        width = self.app.size.width
        narrow = width < NARROW
        # Narrow to narrower (80 → 60 columns) fits the keys again too, or a key is cut.
        if narrow != self._narrow or (narrow and width != self._width):
            self._narrow, self._width = narrow, width
            if not narrow:
                self.show_command_palette = True
            self.call_after_refresh(self.recompose)


class FittingLine(Static):
    """One line of text in its long wording, or its short one where the long does not fit
    (at any screen width: beside the sidebar at 100 columns the line is narrow too)."""

    def __init__(self, long: str, short: str, *, id: str | None = None) -> None:
        super().__init__(Text(long), id=id, markup=False)
        self.long, self.short = long, short

    def _wording(self, width: int) -> str:
        return self.long if cell_len(self.long) <= width else self.short

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return cell_len(self._wording(container.width))

    def render(self) -> Text:
        return Text(self._wording(self.size.width or cell_len(self.long)))
