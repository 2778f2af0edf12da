"""The emotion sigil: one glyph and colour per register, a short fade-in when it changes, and
the register's meaning as its tooltip."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ..registers import colour, glyph, meaning

TRANSITION_SECONDS = 0.4


def sigil_text(emotion: str, *, with_name: bool = True, dark: bool = True) -> Text:
    """The glyph in its register's colour for a dark or light theme (and the name), as plain
    text — never markup, never wrapped."""
    mark = glyph(emotion)
    if mark is None:
        return Text("·", style="dim")
    ink = colour(emotion, dark=dark)
    text = Text(mark, style=Style(color=ink, bold=True), no_wrap=True)
    if with_name:
        text.append(f" {emotion}", style=Style(color=ink))
    return text


class EmotionSigil(Widget):
    """Shows sadie's current register; ``emotion`` is "" before the first reply."""

    DEFAULT_CSS = """
    EmotionSigil {
        width: auto;
        height: 1;
        padding: 0 1;
    }
    """

    emotion: reactive[str] = reactive("", init=False)

    def render(self) -> Text:
        return sigil_text(self.emotion, dark=self.app.current_theme.dark)

    def on_mount(self) -> None:
        self.tooltip = "sadie's register appears here after a reply (F1 explains them)"

    def watch_emotion(self, old: str, new: str) -> None:
        # The name's width changes with it ("curious" → "encouraging"): Textual keeps the
        # last width it measured, which cut the new name off its one line.
        self.clear_cached_dimensions()
        self.refresh(layout=True)
        self.tooltip = Text(meaning(new))
        if new and new != old:
            self.styles.opacity = 0.2
            self.styles.animate("opacity", 1.0, duration=TRANSITION_SECONDS)
