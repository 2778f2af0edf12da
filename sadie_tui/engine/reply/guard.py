"""The reply guard: the second stage after the stream filter, against degenerate replies.

Small models do things no prompt forbids well enough, so the visible text (what the stream
filter let through) passes this guard before it reaches a screen:

* **Echoed provenance lines** — a line that is an excerpt header, ``episode <uuid> (…) …``,
  is never shown. While a line could still become one it is held back.
* **Echoed instructions** — a sentence of the standing instructions written back (the
  citation rule, the opinion rule, the system prompt) is never shown. At the start of each
  line or sentence, text is held back while it is still a prefix of one of those sentences;
  a complete echoed sentence is dropped, a prefix that turns into something else is shown.
* **Loops** — when a line or sentence of at least ``MIN_REPEAT`` characters comes a third
  time, the reply is cut before it (``stopped == "repetition"``).
* **Length** — past ``max_chars`` of shown text the reply is cut (``stopped == "length"``).

Every decision waits for at most one line or instruction sentence and reads a bounded
stretch of text (one segment: a line or a sentence, or an instruction sentence wrapped over
a few lines), so the guard adds no more than that much delay and stays linear in the reply's
length, fed piece by piece or all at once: undecided text is read through an offset instead
of being copied, whitespace that decides nothing is set aside in pieces, and the instruction
sentences and repeated segments are asked about in one walk of a prefix tree, however many
there are. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeAlias

__all__ = ["ReplyGuard", "instruction_sentences"]

MIN_REPEAT = 20
MIN_ECHO = 24  # a shorter instruction sentence is ordinary text ("Write [] if …" is kept)
MAX_HEADER_LINE = 400  # a header line is waited for up to this many characters
NORM_LIMIT = 600  # characters of a segment compared with the instructions and repeats
WINDOW = 4 * NORM_LIMIT  # raw characters read at a segment start (whitespace squashes)
MAX_WRAPS = 4  # line breaks an echoed instruction sentence may be wrapped over

# An excerpt's provenance line, also with the id mangled (a small model dropped a digit of
# its last group: "episode e1b7d7e7-6c69-5a1f-8c56-544d6f15b06 (2026-07-17) …", or of its
# first: "episode 153947a-b2e0-5f6c-8d9f-3a6e2284980b (2026-06-08) …").
# The briefing names an episode by a short prefix of its id ("episode 3f7f7a68 (2026-03-14) …"):
# such a line is a header too when a date follows.
_HEADER = re.compile(
    r"episode\s+[0-9a-f]{6,8}(?:(?:-?[0-9a-f]{2,12}){1,4}|(?=[0-9a-f-]*\s+\(\d{4}-\d\d-\d\d\)))"
    r"[0-9a-f-]*(?![0-9a-z])",
    re.IGNORECASE,
)
# What a header line may look like before its uuid is complete.
_HEADER_PREFIX = re.compile(
    r"^[\s>*_#-]*(?:e(?:p(?:i(?:s(?:o(?:d(?:e(?:\s+[0-9a-f-]*)?)?)?)?)?)?)?)?$", re.I
)
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+|\n")
_WS = re.compile(r"\s+")
_NON_SPACE = re.compile(r"\S")
_END = ""  # marks the end of an item in a _Prefixes tree (no character is "")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip().casefold()


def instruction_sentences(texts: Iterable[str]) -> list[str]:
    """What counts as an echo of the standing instructions: each sentence, and each run of
    sentences to the end of its line (up to NORM_LIMIT characters: a longer one could only be
    waited for), of at least MIN_ECHO characters. A line of short sentences (a persona's
    voice, "Warm, brief, curious. No lists unless asked.") is an echo written back whole or
    from any sentence on, though no sentence of it is one alone."""
    found: set[str] = set()
    for text in texts:
        for line in text.splitlines():
            starts = [0, *(m.end() for m in _SENTENCE_END.finditer(line))]
            for at, start in enumerate(starts):
                end = starts[at + 1] if at + 1 < len(starts) else len(line)
                pieces = [line[start:end]]
                if end < len(line) and len(line) - start <= NORM_LIMIT:
                    pieces.append(line[start:])
                for piece in pieces:
                    n = _norm(piece)
                    if len(n) >= MIN_ECHO:
                        found.add(n)
    return sorted(found)


#: A node of the sentence tree: each next character, and ``_END`` where a sentence ends.
_Node: TypeAlias = dict[str, "_Node"]


class _Prefixes:
    """Normalised sentences, asked about one text at a time in a single walk of a tree."""

    def __init__(self, items: Iterable[str] = ()) -> None:
        self._root: _Node = {}
        for item in items:
            self.add(item)

    def add(self, item: str) -> None:
        # Texts are compared up to NORM_LIMIT characters: a longer item can only be waited for.
        node = self._root
        for ch in item[: NORM_LIMIT + 1]:
            node = node.setdefault(ch, {})
        if len(item) <= NORM_LIMIT:
            node[_END] = {}

    def match(self, norm: str) -> tuple[int, bool]:
        """The length of the longest item ``norm`` starts with and that ends a word there (0
        when none does), and whether ``norm`` is the start of an item."""
        node = self._root
        best = 0
        for i, ch in enumerate(norm):
            if i and _END in node and not ch.isalnum():
                best = i
            child = node.get(ch)
            if child is None:
                return best, False
            node = child
        if _END in node:
            best = len(norm)
        return best, True


class ReplyGuard:
    """Feed it the stream filter's visible text; show what it returns; then ``finish``."""

    def __init__(self, instructions: Iterable[str] = (), *, max_chars: int = 0) -> None:
        self._sentences = _Prefixes(instruction_sentences(instructions))
        self._max_chars = max_chars
        self._held = ""  # text not yet shown or dropped is self._held[self._pos:] ...
        self._pos = 0
        self._lead: list[str] = []  # ... after this whitespace, set aside at a segment start
        self._at_start = True  # the held text starts a line or a sentence
        self._line_start = True  # ... and a line
        self._segment: list[str] = []  # the current segment's shown text (for loop detection)
        self._counts: dict[str, int] = {}
        self._repeated = _Prefixes()  # segments already shown twice
        self._shown = 0
        self._skip_ws = False
        self._ws: list[str] = []  # trailing whitespace not shown yet
        self._last = "\n"  # the last character shown or pending
        self._dropped: list[str] = []
        self.stopped: str | None = None

    @property
    def dropped(self) -> list[str]:
        """What was kept from the screen, in order (echoed headers and instructions)."""
        return list(self._dropped)

    # -- public ------------------------------------------------------------------
    def feed(self, text: str) -> str:
        if self.stopped or not text:
            return ""
        out: list[str] = []
        held = self._held[self._pos :] if self._pos else self._held
        self._held, self._pos = held + text, 0
        self._drain(out, final=False)
        return "".join(out)

    def finish(self) -> str:
        if self.stopped:
            return ""
        out: list[str] = []
        self._drain(out, final=True)
        rest = "".join(self._lead) + self._held[self._pos :]
        if rest.strip() and not self.stopped:
            self._show(rest, out)
        self._held, self._pos, self._lead = "", 0, []
        if not self.stopped:
            self._close_segment()
        return "".join(out)

    # -- internals -----------------------------------------------------------------
    def _drain(self, out: list[str], *, final: bool) -> None:
        while self._pos < len(self._held) and not self.stopped:
            if self._at_start:
                if not self._decide_start(final):
                    return
            else:
                self._pass_through(out)

    def _decide_start(self, final: bool) -> bool:
        """At a segment start: wait, drop an echo, stop a loop, or go on showing.

        Returns False when it must wait for more text."""
        held = self._held
        found = _NON_SPACE.search(held, self._pos)
        if found is None:
            self._park(len(held))
            return False  # whitespace alone decides nothing (it may lead a header line)
        start = found.start()
        if self._line_start:
            verdict = self._decide_header(start, final)
            if verdict is not None:
                return verdict
        # The segment: up to its end (a space stands for the boundary, for the word-end
        # check), or as much as the window holds while it has no end yet. An instruction
        # sentence the model wrapped onto the next lines is still one (up to MAX_WRAPS).
        window = min(len(held), start + WINDOW)
        end, wraps = start, 0
        while True:
            boundary = _SENTENCE_END.search(held, end, window)
            if boundary is not None:
                head = held[start : boundary.start()] + " "
            else:
                head = held[start:window]
            norm, positions = _norm_with_positions(head, NORM_LIMIT)
            echo, echo_ahead = self._sentences.match(norm)
            if boundary is None or echo or not echo_ahead or wraps == MAX_WRAPS:
                break
            end, wraps = boundary.end(), wraps + 1
        open_ended = boundary is None and window == len(held)
        if echo:
            self._drop(start + positions[echo - 1] + 1)
            return True
        loop, loop_ahead = self._repeated.match(norm)
        if loop and (len(norm) > loop or final):
            self.stopped = "repetition"
            return True
        undecided = open_ended and len(norm) < NORM_LIMIT
        if undecided and echo_ahead:
            if not final:
                self._park(start)
                return False
            if len(norm) >= MIN_ECHO or self._dropped:
                # The stream ended inside an echoed instruction (a marker in it cut it off,
                # or the token cap: after other echoes, even a short start is one).
                self._drop(len(held))
                return True
        if undecided and not final and loop_ahead:
            self._park(start)
            return False
        self._resume()
        return True

    def _decide_header(self, start: int, final: bool) -> bool | None:
        """At a line start: wait for or drop an excerpt header line; ``None`` when the line
        is not one."""
        held = self._held
        limit = min(len(held), start + MAX_HEADER_LINE)
        line_end = held.find("\n", start, limit)
        line = held[start : line_end if line_end >= 0 else limit]
        short = line_end < 0 and len(held) - start < MAX_HEADER_LINE
        if _HEADER.match(line.lstrip(">*_#- \t")):
            if short and not final:
                self._park(start)
                return False  # the whole header line goes once it is complete
            end = held.find("\n", start)
            self._drop(len(held) if end < 0 else end + 1)
            return True
        if short and not final and _HEADER_PREFIX.match(line):
            self._park(start)
            return False
        return None

    def _park(self, upto: int) -> None:
        """Set the held whitespace before ``upto`` aside while the segment start waits."""
        if upto > self._pos:
            self._lead.append(self._held[self._pos : upto])
        if upto >= len(self._held):
            self._held, self._pos = "", 0
        else:
            self._pos = upto

    def _resume(self) -> None:
        """The segment is ordinary text: show it, with the whitespace set aside before it."""
        self._at_start = False
        if self._lead:
            self._held = "".join(self._lead) + self._held[self._pos :]
            self._pos, self._lead = 0, []

    def _pass_through(self, out: list[str]) -> None:
        """Inside a segment: show up to and including the next segment boundary."""
        held, pos = self._held, self._pos
        found = self._boundary(held, pos)
        if found is None:
            self._show(held[pos:], out)
            self._held, self._pos = "", 0
            return
        end, line = found
        self._show(held[pos:end], out)
        self._pos = end
        self._close_segment()
        self._line_start = line
        self._at_start = True

    def _boundary(self, held: str, pos: int) -> tuple[int, bool] | None:
        """Where the next segment boundary at or after ``pos`` ends, and whether it holds a
        line break. A sentence end looks back at the last character shown, which after a
        drop (or in a new piece) is not the character before ``pos``."""
        after_end = self._last in ".!?:"
        if pos == 0 or (held[pos - 1] in ".!?:") != after_end:
            ch = held[pos]
            if after_end and ch.isspace():
                run = _WS.match(held, pos)
                assert run is not None
                return run.end(), "\n" in run.group(0)
            if ch == "\n":
                return pos + 1, True
            m = _SENTENCE_END.search(held, pos + 1)
        else:
            m = _SENTENCE_END.search(held, pos)
        if m is None:
            return None
        return m.end(), "\n" in m.group(0)

    def _close_segment(self) -> None:
        n = _norm("".join(self._segment))
        self._segment = []
        if len(n) < MIN_REPEAT:
            return
        self._counts[n] = self._counts.get(n, 0) + 1
        if self._counts[n] == 2:
            self._repeated.add(n)

    def _show(self, text: str, out: list[str]) -> None:
        if self._skip_ws or not self._shown:
            # Nothing shown yet, or right after dropped text: no whitespace of its own.
            text = text.lstrip()
            if not text:
                return
            self._skip_ws = False
        # Trailing whitespace waits for more text, so a reply never ends in it.
        body = text.rstrip()
        ws = text[len(body) :]
        if not body:
            self._ws.append(ws)
            self._last = ws[-1:]
            return
        text = "".join(self._ws) + body if self._ws else body
        self._ws = [ws] if ws else []
        if self._max_chars and self._shown + len(text) > self._max_chars:
            room = max(0, self._max_chars - self._shown)
            cut = text[:room]
            space = cut.rfind(" ")
            if space >= 0 and space > room - 80:  # end on a word boundary when one is near
                cut = cut[:space]
            text = cut
            self.stopped = "length"
        if text:
            out.append(text)
            self._shown += len(text)
            self._segment.append(text)
        self._last = ws[-1:] if ws else (text[-1:] or self._last)

    def _drop(self, end: int) -> None:
        """Keep the set-aside whitespace and the held text before ``end`` from the screen."""
        text = "".join(self._lead) + self._held[self._pos : end]
        self._lead = []
        self._pos = end
        self._dropped.append(text)
        self._skip_ws = True
        self._line_start = text.endswith("\n") or (self._line_start and "\n" not in text)
        self._at_start = True


def _norm_with_positions(text: str, limit: int) -> tuple[str, list[int]]:
    """``_norm(text)`` (up to ``limit`` characters) and where each character came from."""
    chars: list[str] = []
    positions: list[int] = []
    space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if space or not chars:
                continue
            chars.append(" ")
            space = True
        else:
            chars.extend(ch.casefold())
            space = False
        while len(positions) < len(chars):
            positions.append(i)
        if len(chars) >= limit:
            break
    return "".join(chars), positions
