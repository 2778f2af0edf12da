"""Conversation titles: a short, single-line title made from the first message.

This module owns turning arbitrary text (pasted logs, newlines, control
characters, emoji, CJK) into a title that fits a list row: whitespace collapsed,
control and bidirectional-override characters removed, at most ``limit``
characters including the "…" added when it had to cut. It is pure.
"""

from __future__ import annotations

import unicodedata

DEFAULT_TITLE = "New conversation"
ELLIPSIS = "…"

# Characters dropped from titles: bidi embeddings/overrides/isolates could
# reorder the rest of the terminal line.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Trailing characters that read badly right before the ellipsis.
_TRAILING_PUNCT = " ,;:.!?-/\\|&([{<'\"\u2013\u2014\u201c\u2018\u00ab"
_ZWJ = "\u200d"


def _clean(text: str) -> str:
    kept = []
    for ch in text:
        if ch.isspace():
            kept.append(" ")
        elif unicodedata.category(ch) in ("Cc", "Cs") or ch in _BIDI_CONTROLS:
            continue
        else:
            kept.append(ch)
    return " ".join("".join(kept).split())


def _visible(text: str) -> bool:
    return any(unicodedata.category(ch)[0] in "LNPS" for ch in text)


def _extends(ch: str) -> bool:
    """True for characters that belong to the character before them (one glyph)."""
    if ch == _ZWJ or "\ufe00" <= ch <= "\ufe0f" or "\U0001f3fb" <= ch <= "\U0001f3ff":
        return True
    if "\U000e0020" <= ch <= "\U000e007f":  # emoji tag sequences
        return True
    return unicodedata.category(ch) in ("Mn", "Me", "Mc")


def _safe_cut(text: str, cut: int) -> int:
    """Move ``cut`` back so it does not split a combining sequence or emoji."""
    while 0 < cut < len(text) and (_extends(text[cut]) or text[cut - 1] == _ZWJ):
        cut -= 1
    return cut


def make_title(text: str, limit: int = 60) -> str:
    """A single-line title of at most ``limit`` characters from ``text``.

    A message that fits (after collapsing whitespace) is returned as it is.
    Otherwise it is cut at the last word boundary that leaves room for "…"
    (hard-cut when the first word alone is too long), trailing punctuation
    such as "," or ":" is dropped, and "…" is appended. Empty or
    whitespace-only text gives "New conversation" (itself shortened if
    ``limit`` is tiny).
    """
    if limit < 1:
        raise ValueError("limit must be at least 1")
    cleaned = _clean(text or "")
    if not _visible(cleaned):
        cleaned = DEFAULT_TITLE
    if len(cleaned) <= limit:
        return cleaned

    budget = limit - len(ELLIPSIS)
    if budget <= 0:
        return ELLIPSIS[:limit]
    space = cleaned.rfind(" ", 0, budget + 1)
    head = cleaned[:space] if space > 0 else cleaned[: _safe_cut(cleaned, budget)]
    head = head.rstrip(_TRAILING_PUNCT)
    if not head:  # nothing but punctuation before the cut
        head = cleaned[:budget].rstrip() or cleaned[:budget]
    return head + ELLIPSIS
