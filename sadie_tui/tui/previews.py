"""What the conversation browser shows under each title: the summary as plain text (no
Markdown marks, no offline banner) or, while searching, a snippet around the match.

All of it is pure except ``describe``, which may read a bounded number of conversations'
messages through the callable it is given (the browser runs it in a worker thread).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from ..engine.conversations import Conversation, Message

#: How the engine joins the person's words and sadie's in a summary
#: (``conversations.summary_from_first_exchange``).
JOINER = " → "
#: How the offline reasoner opens every answer (``reasoners.offline.compose``).
OFFLINE_OPENING = "No language model is reachable right now"
#: The most conversations whose messages one listing reads (for snippets and offline
#: previews); the rest show their summary.
MESSAGE_LOOKUPS = 40
#: The width a snippet is made for when the row's is not known yet.
ROOM = 72
#: Characters after a match a snippet keeps in view (when the text has them).
AFTER = 20

# The banner up to its colon ("…that comes closest:"), its end, or the "…" of a cut
# summary; a parenthesised reason may hold colons of its own (a URL).
_BANNER = re.compile(re.escape(OFFLINE_OPENING) + r"(?:\s*\([^)]*\)?)?[^:…\n]*[:…]?")

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s+|$)")
_QUOTE = re.compile(r"^\s{0,3}(?:>\s?)+")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_RULE = re.compile(r"^\s{0,3}(?:([-*_])\s*){3,}$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_INLINE = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # images: their alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # links: their text
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),  # reference links
    (re.compile(r"<((?:https?|mailto):[^>\s]+)>"), r"\1"),  # autolinks
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),
    (re.compile(r"(?<![*\w])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![*\w])"), r"\1"),
    (re.compile(r"(?<![_\w])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![_\w])"), r"\1"),
]
# Backslash escapes stand for themselves: hidden from the patterns above as private-use
# characters, put back after.
_ESCAPABLE = "\\`*_{}[]()#+-.!>~|"
_ESCAPE = re.compile(r"\\([" + re.escape(_ESCAPABLE) + r"])")
_HIDDEN = {chr(0xE000 + i): ch for i, ch in enumerate(_ESCAPABLE)}
_HIDE = {ch: hidden for hidden, ch in _HIDDEN.items()}
_UNHIDE = str.maketrans(_HIDDEN)
# In a summary the reply's lines are already joined: its list markers and headings are inline.
_INLINE_BULLET = re.compile(r"(?<=[^\s\d]) +[-*+•] +(?=[^\s\d])")
_INLINE_HEADING = re.compile(r"(?<=\s)#{1,6} +")


def _inline(text: str) -> str:
    """Inline marks removed; code spans keep their content untouched."""
    out: list[str] = []
    last = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_marks(text[last : match.start()]))
        out.append(match.group(2).strip())
        last = match.end()
    out.append(_marks(text[last:]))
    return "".join(out)


def _marks(text: str) -> str:
    text = _ESCAPE.sub(lambda m: _HIDE[m.group(1)], text)
    for pattern, replacement in _INLINE:
        text = pattern.sub(replacement, text)
    return text.translate(_UNHIDE)


def plain_lines(markdown: str) -> list[str]:
    """``markdown`` as its non-empty lines of plain text: headings, quote marks, list
    markers, rules and code fences dropped (code kept), emphasis, links and images reduced
    to their text, whitespace collapsed."""
    lines: list[str] = []
    in_code = False
    for raw in (markdown or "").splitlines():
        if _FENCE.match(raw):
            in_code = not in_code
            continue
        if in_code:
            line = raw
        elif _RULE.match(raw) or _TABLE_RULE.match(raw):
            continue
        else:
            line = _QUOTE.sub("", raw)
            line = _HEADING.sub("", line)
            line = _BULLET.sub("", line)
            line = _inline(line)
        line = " ".join(line.split())
        if line:
            lines.append(line)
    return lines


def plain_text(markdown: str) -> str:
    """``markdown`` on one line of plain text (see ``plain_lines``)."""
    return " ".join(plain_lines(markdown))


def without_banner(text: str) -> str:
    """``text`` without the offline reasoner's opening sentence, if it starts with it."""
    stripped = (text or "").lstrip()
    if not stripped.startswith(OFFLINE_OPENING):
        return text
    return _BANNER.sub("", stripped, count=1)


def is_offline(text: str) -> bool:
    return (text or "").lstrip().startswith(OFFLINE_OPENING)


def split_summary(summary: str) -> tuple[str, str]:
    """The person's words and sadie's, as the engine joined them in a summary."""
    question, joiner, answer = (summary or "").partition(JOINER)
    if not joiner and is_offline(question):
        return "", question
    return question, answer


def join(question: str, answer: str) -> str:
    return f"{question}{JOINER}{answer}" if question and answer else question or answer


def one_line_plain(text: str) -> str:
    """Markdown already joined on one line (as in a summary) as plain text: list markers
    between items read as " · ", inline heading marks go."""
    text = plain_text(text)
    return _INLINE_BULLET.sub(" · ", _INLINE_HEADING.sub("", text))


def summary_preview(summary: str) -> str:
    """A summary in plain text; an answer that was only the offline banner is left out."""
    question, answer = split_summary(summary)
    return join(one_line_plain(question), one_line_plain(without_banner(answer)))


def offline_reply_line(reply: str) -> str:
    """The first real line of an offline reply: the first quote after the banner."""
    lines = plain_lines(without_banner(reply))
    return lines[0] if lines else ""


def find(text: str, needle: str) -> tuple[int, int] | None:
    """Where ``needle`` first occurs in ``text`` (case-insensitive), else the first of its
    words that does; None if none does."""
    needle = " ".join((needle or "").split())
    if not needle:
        return None
    words = [needle] + [w for w in needle.split(" ") if len(w) > 1 and w != needle]
    for word in words:
        match = re.search(re.escape(word), text, re.IGNORECASE)
        if match:
            return match.span()
    return None


@dataclass(frozen=True)
class Preview:
    """The line under a title; ``span`` marks the search match in ``text`` (if any)."""

    text: str
    span: tuple[int, int] | None = None


def clip(text: str, room: int = ROOM) -> str:
    """``text`` in at most ``room`` characters: cut at a word boundary, with "…", when longer
    (the list wraps a row's lines; a snippet keeps to one)."""
    if len(text) <= room:
        return text
    cut = text[: room - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > room // 2 else cut).rstrip() + "…"


def snippet(text: str, span: tuple[int, int], room: int = ROOM) -> Preview:
    """``text`` shown so that the match and a little after it fit in ``room`` characters:
    cut (with "…") at a word boundary ahead of the match when it would not, and after it
    to fit ``room`` (a 5,000-character message is one line, not thirty)."""
    end = span[1] + min(AFTER, len(text) - span[1])
    if end > room:
        start = min(end - room + 1, span[0])
        space = text.find(" ", start, span[0])
        start = space + 1 if space != -1 else start
        shift = 1 - start
        text, span = "…" + text[start:], (span[0] + shift, span[1] + shift)
    return Preview(clip(text, max(room, span[1] + 1)), span)  # the match always shows


Messages: TypeAlias = "Callable[[str], Sequence[Message]]"

WHO = {"user": "you", "assistant": "sadie"}


def describe(
    conversations: Iterable[Conversation],
    search: str,
    messages: Messages,
    *,
    lookups: int = MESSAGE_LOOKUPS,
    room: int = ROOM,
    cancelled: Callable[[], bool] = lambda: False,
) -> dict[str, Preview]:
    """The preview of each conversation, by id. While searching, one whose title and summary
    do not hold the match shows the first message that does; one whose summary is only the
    offline banner shows the question and the first quote of its first reply. Only
    ``lookups`` conversations' messages are read; the rest show their summary. Snippets are
    made to show their match within ``room`` characters."""
    needle = " ".join((search or "").split())
    previews: dict[str, Preview] = {}
    left = lookups
    for c in conversations:
        if cancelled():
            break
        question, answer = split_summary(c.summary)
        base = summary_preview(c.summary)
        read: Sequence[Message] | None = None

        def read_messages(cid: str = c.id) -> Sequence[Message] | None:
            nonlocal read, left
            if read is None and left > 0:
                left -= 1
                read = messages(cid)
            return read

        if is_offline(answer) and (found := read_messages()) is not None:
            reply = next((m.content for m in found if m.role == "assistant"), "")
            base = join(one_line_plain(question), offline_reply_line(reply))
        previews[c.id] = (
            _searched(c, base, needle, read_messages, room) if needle else Preview(base)
        )
    return previews


def _searched(
    c: Conversation,
    base: str,
    needle: str,
    read_messages: Callable[[], Sequence[Message] | None],
    room: int,
) -> Preview:
    if (span := find(base, needle)) is not None:
        return snippet(base, span, room)
    if find(c.title, needle) is not None:
        return Preview(base)  # the title shows the match
    for m in read_messages() or ():
        text = plain_text(without_banner(m.content))
        if (span := find(text, needle)) is not None:
            who = f"{WHO.get(m.role, m.role)}: "
            found = snippet(text, span, room - len(who))
            assert found.span is not None
            return Preview(who + found.text, (found.span[0] + len(who), found.span[1] + len(who)))
    return Preview(base)
