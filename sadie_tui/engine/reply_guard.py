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

Every decision waits for at most one line or instruction sentence, so the guard adds no
more than that much delay and stays linear in the reply's length. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["ReplyGuard", "instruction_sentences"]

MIN_REPEAT = 20
MIN_ECHO = 24  # a shorter instruction sentence is ordinary text ("Write [] if …" is kept)
MAX_HEADER_LINE = 400

# An excerpt's provenance line, also with the id mangled (a small model dropped a digit of
# its last group: "episode e1b7d7e7-6c69-5a1f-8c56-544d6f15b06 (2026-07-17) …").
_HEADER = re.compile(r"episode\s+[0-9a-f]{8}(?:-?[0-9a-f]{2,12}){1,4}(?![0-9a-z])", re.IGNORECASE)
# What a header line may look like before its uuid is complete.
_HEADER_PREFIX = re.compile(r"^[\s>*_#-]*(?:e(?:p(?:i(?:s(?:o(?:d(?:e(?:\s+[0-9a-f-]*)?)?)?)?)?)?)?)?$", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+|\n")
_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip().casefold()


def instruction_sentences(texts: Iterable[str]) -> list[str]:
    """The sentences (and lines) of the standing instructions that count as an echo."""
    found: set[str] = set()
    for text in texts:
        for line in text.splitlines():
            for sentence in _SENTENCE_END.split(line):
                n = _norm(sentence)
                if len(n) >= MIN_ECHO:
                    found.add(n)
    return sorted(found)


class ReplyGuard:
    """Feed it the stream filter's visible text; show what it returns; then ``finish``."""

    def __init__(self, instructions: Iterable[str] = (), *, max_chars: int = 0) -> None:
        self._sentences = instruction_sentences(instructions)
        self._max_chars = max_chars
        self._held = ""  # text not yet shown or dropped
        self._at_start = True  # the held text starts a line or a sentence
        self._line_start = True  # ... and a line
        self._segment = ""  # the current segment's shown text (for loop detection)
        self._counts: dict[str, int] = {}
        self._repeated: set[str] = set()  # segments already shown twice
        self._shown = 0
        self._skip_ws = False
        self._ws = ""  # trailing whitespace not shown yet
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
        self._held += text
        self._drain(out, final=False)
        return "".join(out)

    def finish(self) -> str:
        if self.stopped:
            return ""
        out: list[str] = []
        self._drain(out, final=True)
        if self._held.strip() and not self.stopped:
            self._show(self._held, out)
        self._held = ""
        if not self.stopped:
            self._close_segment()
        return "".join(out)

    # -- internals -----------------------------------------------------------------
    def _drain(self, out: list[str], *, final: bool) -> None:
        while self._held and not self.stopped:
            if self._at_start:
                if not self._decide_start(final):
                    return
            else:
                self._pass_through(out)

    def _decide_start(self, final: bool) -> bool:
        """At a segment start: wait, drop an echo, stop a loop, or go on showing.

        Returns False when it must wait for more text."""
        held = self._held
        stripped = held.lstrip()
        if not stripped:
            return False  # whitespace alone decides nothing (it may lead a header line)
        lead = len(held) - len(stripped)
        line_end = held.find("\n", lead)
        line = held[lead:] if line_end < 0 else held[lead:line_end]
        if self._line_start and _HEADER.match(line.lstrip(">*_#- \t")):
            if line_end < 0 and not final and len(line) < MAX_HEADER_LINE:
                return False  # the whole header line goes once it is complete
            self._drop(held if line_end < 0 else held[: line_end + 1])
            return True
        if self._line_start and line_end < 0 and not final and _HEADER_PREFIX.match(line):
            return False
        norm, positions = _norm_with_positions(stripped, 600)
        echo = _longest_prefix(norm, self._sentences)
        if echo:
            self._drop(held[: lead + positions[echo - 1] + 1])
            return True
        loop = _longest_prefix(norm, self._repeated)
        if loop and (len(norm) > loop or final):
            self.stopped = "repetition"
            return True
        if len(norm) < 600 and any(s.startswith(norm) for s in self._sentences):
            if not final:
                return False
            if len(norm) >= MIN_ECHO:
                # The stream ended inside an echoed instruction (a marker in it cut it off).
                self._drop(held)
                return True
        if not final and len(norm) < 600 and any(s.startswith(norm) for s in self._repeated):
            return False
        self._at_start = False
        return True

    def _pass_through(self, out: list[str]) -> None:
        """Inside a segment: show up to and including the next segment boundary."""
        held = self._held
        # The last character shown counts for a boundary split between two pieces ("r." | " ").
        s = self._last + held
        m = _SENTENCE_END.search(s, 1)
        if m is None:
            self._show(held, out)
            self._held = ""
            return
        chunk, self._held = held[: m.end() - 1], held[m.end() - 1 :]
        self._show(chunk, out)
        self._close_segment()
        self._line_start = "\n" in m.group(0)
        self._at_start = True

    def _close_segment(self) -> None:
        n = _norm(self._segment)
        self._segment = ""
        if len(n) < MIN_REPEAT:
            return
        self._counts[n] = self._counts.get(n, 0) + 1
        if self._counts[n] >= 2:
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
            self._ws += ws
            self._last = ws[-1:]
            return
        text, self._ws = self._ws + body, ws
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
            self._segment += text
        self._last = (text + self._ws)[-1:] or self._last

    def _drop(self, text: str) -> None:
        self._dropped.append(text)
        self._skip_ws = True
        self._held = self._held[len(text) :]
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


def _longest_prefix(norm: str, sentences: Iterable[str]) -> int:
    """Length of the longest of ``sentences`` that ``norm`` starts with (at a word end)."""
    best = 0
    for s in sentences:
        if len(s) > best and norm.startswith(s) and (len(norm) == len(s) or not norm[len(s)].isalnum()):
            best = len(s)
    return best
