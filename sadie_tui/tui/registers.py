"""The emotion registers as the screen draws them, read from the engine on first use
(``engine.emotions`` imports numpy: not worth paying before the first frame)."""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def _emotions() -> Any:
    from ..engine import emotions

    return emotions


def glyph(emotion: str) -> str | None:
    return _emotions().GLYPHS.get(emotion) if emotion else None


def colour(emotion: str) -> str | None:
    return _emotions().COLOURS.get(emotion) if emotion else None


def meaning(emotion: str) -> str:
    return _emotions().MEANINGS.get(emotion, "") if emotion else ""
