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


# The same registers on a light theme's paper: each reads at 4.5:1 or more on sadie-light's
# panel, background and surface (the dark set's gold on the light bar was near invisible).
LIGHT_COLOURS: dict[str, str] = {
    "curious": "#1F5FA8",
    "encouraging": "#2F6B1E",
    "focused": "#8A4B00",
    "playful": "#A1286E",
    "serious": "#A32626",
    "reflective": "#6B3FA8",
    "celebrating": "#735200",
}


def colour(emotion: str, *, dark: bool = True) -> str | None:
    """The register's colour on a dark theme, or (``dark=False``) on a light one."""
    if not emotion:
        return None
    return (COLOURS if dark else LIGHT_COLOURS).get(emotion)


def meaning(emotion: str) -> str:
    """What the register means (``engine.emotions``, imported on first use: it loads numpy,
    not worth paying before the first frame)."""
    if not emotion:
        return ""
    # lazy: emotions loads numpy; the app's first paint does not need it
    from ..engine.emotions import MEANINGS

    return MEANINGS.get(emotion, "")
