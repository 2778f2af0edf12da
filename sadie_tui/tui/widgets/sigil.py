"""The emotion sigil: one glyph and colour per register, a short fade-in when it changes, and
the register's meaning as its tooltip."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ..registers import colour, glyph, meaning

TRANSITION_SECONDS = 0.4


def sigil_text(emotion: str, *, with_name: bool = True) -> Text:
    """The glyph in its register's colour (and the name), as plain text — never markup."""
    mark = glyph(emotion)
    if mark is None:
        return Text("·", style="dim")
    text = Text(mark, style=Style(color=colour(emotion), bold=True))
    if with_name:
        text.append(f" {emotion}", style=Style(color=colour(emotion)))
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
        return sigil_text(self.emotion)

    def on_mount(self) -> None:
        self.tooltip = "sadie's register appears here after a reply (F1 explains them)"

    def watch_emotion(self, old: str, new: str) -> None:
        self.tooltip = Text(meaning(new))
        if new and new != old:
            self.styles.opacity = 0.2
            self.styles.animate("opacity", 1.0, duration=TRANSITION_SECONDS)
