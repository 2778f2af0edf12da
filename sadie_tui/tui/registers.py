"""The emotion registers as the screen draws them: a one-cell glyph and a colour each (the
engine knows the registers and what they mean; how they look is the TUI's)."""

from __future__ import annotations

# Each glyph is one terminal cell: East Asian width "N"/"Na" (never ambiguous, so CJK
# locales do not widen it) and without emoji presentation.
GLYPHS: dict[str, str] = {
    "curious": "?",
    "encouraging": "⇡",
    "focused": "◉",
    "playful": "~",
    "serious": "▮",
    "reflective": "◒",
    "celebrating": "✦",
}

COLOURS: dict[str, str] = {
    "curious": "#5fafff",
    "encouraging": "#87d75f",
    "focused": "#ffaf5f",
    "playful": "#ff87d7",
    "serious": "#d75f5f",
    "reflective": "#af87ff",
    "celebrating": "#ffd700",
}


def glyph(emotion: str) -> str | None:
    return GLYPHS.get(emotion) if emotion else None


def colour(emotion: str) -> str | None:
    return COLOURS.get(emotion) if emotion else None


def meaning(emotion: str) -> str:
    """What the register means (``engine.emotions``, imported on first use: it loads numpy,
    not worth paying before the first frame)."""
    if not emotion:
        return ""
    # lazy: emotions loads numpy; the app's first paint does not need it
    from ..engine.emotions import MEANINGS

    return MEANINGS.get(emotion, "")
