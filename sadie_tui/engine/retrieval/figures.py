"""Figures asked for and figures given: how a question asks for a number, which numbers a
sentence gives, and which money words an amount answers.

Shared by the briefing's passage choice (``engine.passages``) and the offline reasoner's
picker, which sits below the reply's checks and so cannot reach ``passages``. Pure.
"""

from __future__ import annotations

import re

from .keyword.tokens import tokenize

__all__ = ["HOW_FIGURE", "asks_figure", "figures", "gives_asked", "money_words"]

# "how long", "how many"…: a question asking for a figure ("how well" asks for none).
HOW_FIGURE = r"\bhow\s+(?:long|much|many|often|far|old)\b"
# A question asking for a figure ("how many emails", "how much did I spend", "what was my
# halfway split"): a passage giving one answers it more than one that only names the topic.
_ASKS = re.compile(
    rf"{HOW_FIGURE}|\bwhat (?:was|is|were) (?:my|the) "
    r"\w*\s*(?:time|split|pace|score|price|cost|total|weight|distance|average|number)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?<![\w.,:])\d+(?:[.,:]\d+)*(?!\d|st\b|nd\b|rd\b|th\b)|[€$£¥]|"
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
    r"forty|fifty|sixty|hundred|thousand|half)\b",
    re.IGNORECASE,
)
# A list's own numbering ("2. Tomatoes: cherry") gives no figure, nor does an ordinal ("3rd").
_ENUMERATOR = re.compile(r"^\s*\d{1,2}[.)](?=\s|$)", re.MULTILINE)
# An amount of money: a currency sign, or a number with a currency's name.
_AMOUNT = re.compile(
    r"[€$£¥]\s?\d|\d\s?[€$£¥]|\d+(?:[.,]\d+)*\s?(?:euros?|eur|pounds?|gbp|dollars?|usd|yen)\b",
    re.IGNORECASE,
)
# What an amount of money answers: "how much did I spend / pay / did it cost" is answered by
# "€148.70", which holds none of those words.
_MONEY = frozenset(
    tokenize("spend spent spending cost costs paid pay paying price fee charged bought buy owed")
)


def asks_figure(question: str) -> bool:
    """The question asks for a figure: how long / much / many / often / far / old, or "what
    was my … time / split / cost …"."""
    return _ASKS.search(question) is not None


def figures(text: str) -> set[str]:
    """The numbers (digits, number words, currency signs) ``text`` gives, casefolded; a
    list's numbering is none."""
    return {m.group(0).casefold() for m in _NUMBER.finditer(_ENUMERATOR.sub(" ", text))}


def money_words(text: str) -> frozenset[str]:
    """The money words (stemmed) an amount of money in ``text`` answers; none without one."""
    return _MONEY if _AMOUNT.search(text) else frozenset()


_WORD = re.compile(r"\w+")
BIND_AFTER = 2  # "340 emails", "~200 cherries total", "a hundred and forty nervous foreigners"
BIND_BEFORE = 3  # "saved 420 euros", "paid €75", "the fee was €60"


def gives_asked(sentence: str, wanted: set[str], asked: set[str]) -> bool:
    """``sentence`` gives the figure a question asks for: a number the question does not hold
    (``asked``: the question's own figures) counting a word of the question (``wanted``:
    stems) right after it ("340 emails", "~200 cherries"), or an amount of money the
    question's money words ask for ("spend", "saved"), or one a word of the question comes
    right before ("saved 420 euros"). "Japan in three weeks" gives no figure of "how many
    emails … Japan": three counts weeks."""
    text = _ENUMERATOR.sub(" ", sentence)
    amounts = [m.span() for m in _AMOUNT.finditer(text)]
    if amounts and wanted & _MONEY:
        return True
    for match in _NUMBER.finditer(text):
        if match.group(0).casefold() in asked:
            continue
        after = _WORD.findall(text[match.end() :])[:BIND_AFTER]
        if wanted & set(tokenize(" ".join(after))):
            return True
        if any(lo <= match.start() < hi for lo, hi in amounts):
            before = _WORD.findall(text[: match.start()])[-BIND_BEFORE:]
            if wanted & set(tokenize(" ".join(before))):
                return True
    return False
