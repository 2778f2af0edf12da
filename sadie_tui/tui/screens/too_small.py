"""Shown instead of a broken layout when the terminal is below the minimum size."""

from __future__ import annotations

from rich.text import Text
from textual.screen import ModalScreen
from textual.widgets import Static


class TooSmallScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    TooSmallScreen {
        align: center middle;
        background: $background;
        #too-small { width: auto; height: auto; content-align: center middle; text-align: center; }
    }
    """

    def __init__(self, minimum: tuple[int, int]) -> None:
        super().__init__()
        self.minimum = minimum

    def compose(self):
        width, height = self.minimum
        yield Static(
            Text(f"terminal too small\nsadie needs at least {width}×{height}\nctrl+q quits"),
            id="too-small",
        )
