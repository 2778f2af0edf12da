"""The stream filter: the state machine between the model's token stream and the screen.

It owns three decisions about every character the reasoner streams, whatever the
cut points of the pieces:

* **Thinking is dropped.** ``<think>…</think>`` blocks vanish (any number of them);
  an unclosed ``<think>`` drops the rest of the reply. A lone ``</think>`` (the
  reasoning went to a separate field and only the closer leaked) is dropped
  together with the whitespace right after it.
* **Citations are diverted.** From the citations marker on, everything goes to
  :attr:`StreamFilter.tail` and never to the screen. Accepted marker forms:

  - ``@@CITATIONS`` anywhere, with ``CITATIONS`` in any letter case and an
    optional closing ``@@`` (so ``@@CITATIONS@@`` and ``@@citations@@`` too);
    the closing ``@`` characters are not part of the tail;
  - ``CITATIONS@@`` anywhere, uppercase only;
  - at the start of a line (optionally indented with spaces/tabs), uppercase
    only: ``CITATIONS:``, or a line consisting of ``CITATIONS`` (trailing
    spaces/tabs allowed; the line break belongs to the marker; at the very end
    of the stream the line break may be missing).

  The start of the reply counts as the start of a line, and so does the point
  after a lone ``</think>`` whose dropped whitespace held a line break.
* **Whitespace at the edges is dropped.** Leading whitespace of the visible reply
  and whitespace right before the marker (or at the end of the reply) never
  reach the screen; whitespace inside the text is kept exactly.

Anything that could still turn into ``<think>``, ``</think>`` or a marker, and any
trailing whitespace, is held back until enough has arrived to decide, so the
visible text at every step is a prefix of the final visible text. At
:meth:`StreamFilter.finish`, held-back text that never completed a marker or tag
is ordinary visible text (``a <`` shows the ``<``).

Pure: no I/O and no UI imports.
"""

from __future__ import annotations

import re

__all__ = ["CITATIONS_MARKER", "StreamFilter"]

CITATIONS_MARKER = "@@CITATIONS@@"

_CLOSE = "</think>"

_VISIBLE, _THINK, _TAIL = 0, 1, 2

# One leftmost search finds the next complete tag/marker or, failing that, the
# earliest suffix that is still an unfinished one (the alternatives anchored at
# \Z), so each feed costs one C-level scan of held-back text plus the new piece.
_SCAN = re.compile(
    r"""
      (?P<open><think>)
    | (?P<close></think>)
    | (?P<at>@@(?i:citations))
    | (?P<cat>CITATIONS@@)
    | (?<=\n)[ \t]*(?P<line>CITATIONS(?::|[ \t]*\r?\n))
    | (?P<partial>
          <(?:/(?:t(?:h(?:i(?:nk?)?)?)?)?|t(?:h(?:i(?:nk?)?)?)?)?\Z
        | @(?:@(?i:c(?:i(?:t(?:a(?:t(?:i(?:on?)?)?)?)?)?)?)?)?\Z
        | C(?:I(?:T(?:A(?:T(?:I(?:O(?:N(?:S@?)?)?)?)?)?)?)?)?\Z
        | (?<=\n)[ \t]*CITATIONS[ \t]*\r?\Z
      )
    """,
    re.VERBOSE,
)

# A line consisting of CITATIONS that the stream ended on.
_FINAL_LINE = re.compile(r"(?<=\n)[ \t]*CITATIONS[ \t]*\r?\Z")

# Pieces without any of these can be shown at once (the common case), because
# every tag and marker starts with '<', '@' or 'C' or needs a line break.
_SLOW = re.compile(r"[<@C\n]|\s\Z")


# A held-back "CITATIONS" line partial already padded with spaces or tabs: more of them keep
# it undecided, so such pieces are set aside instead of rescanning the line each time.
_PADDED_LINE = re.compile(r"CITATIONS[ \t]+\Z")


class StreamFilter:
    """Incremental filter; feed it pieces, show what it returns, then call finish()."""

    __slots__ = (
        "_ctx",
        "_emitted",
        "_finished",
        "_held",
        "_mode",
        "_pad",
        "_parts",
        "_saw_thinking",
        "_skip_ws",
        "_tail_parts",
        "_tail_strip_at",
        "_think_buf",
        "_visible_cache",
        "_ws",
        "_ws_clean",
        "_ws_nl",
    )

    def __init__(self) -> None:
        self._mode = _VISIBLE
        # Undecided visible text comes in two parts. First whitespace, shown only if visible
        # text follows it (dropped before a marker and at the end); it is kept as a list of
        # pieces and never rescanned, so a long run of it costs nothing per piece.
        self._ws: list[str] = []
        self._ws_nl = False  # the pending whitespace holds a line break ...
        self._ws_clean = True  # ... and after its last one (or all of it) only spaces/tabs
        # Then a possible tag or marker start: a few characters, or a "CITATIONS" line
        # whose trailing spaces or tabs are set aside in _pad.
        self._held = ""
        self._pad: list[str] = []
        # Inside a think block: a suffix that may be the start of </think>.
        self._think_buf = ""
        # Context for line-start markers: the last emitted character, or "\n"
        # before anything is shown (the reply starts a line).
        self._ctx = "\n"
        self._emitted = False
        self._skip_ws = False
        self._parts: list[str] = []
        self._visible_cache: str | None = ""
        self._tail_parts: list[str] = []
        self._tail_strip_at = False
        self._saw_thinking = False
        self._finished = False

    # -- public -----------------------------------------------------------------

    @property
    def thinking(self) -> bool:
        return self._mode == _THINK

    @property
    def saw_thinking(self) -> bool:
        """True once any <think> block opened or a lone </think> was seen."""
        return self._saw_thinking

    @property
    def diverted(self) -> bool:
        """True once a citations marker was seen (whatever followed it)."""
        return self._mode == _TAIL

    @property
    def tail(self) -> str:
        tail = "".join(self._tail_parts)
        if self._tail_strip_at:
            tail = tail.lstrip("@")
        return tail

    @property
    def visible(self) -> str:
        if self._visible_cache is None:
            self._visible_cache = "".join(self._parts)
        return self._visible_cache

    def feed(self, piece: str) -> str:
        """Take the next piece of the stream; return the text that may be shown now."""
        if self._finished or not piece:
            return ""
        if self._mode == _VISIBLE:
            if (
                self._emitted
                and not self._skip_ws
                and not self._held
                and _SLOW.search(piece) is None
            ):
                return self._emit(piece)
            if not piece.strip(" \t") and (self._pad or _PADDED_LINE.match(self._held)):
                self._pad.append(piece)
                return ""
        out: list[str] = []
        text = piece
        while text:
            if self._mode == _VISIBLE:
                text = self._feed_visible(text, out)
            elif self._mode == _THINK:
                text = self._feed_think(text)
            else:
                self._tail_parts.append(text)
                text = ""
        return "".join(out)

    def finish(self) -> str:
        """End of stream: return held-back text that turned out to be visible."""
        if self._finished:
            return ""
        self._finished = True
        out: list[str] = []
        if self._mode == _VISIBLE and self._held:
            s = self._context() + self._take_held()
            m = _FINAL_LINE.search(s, 1)
            if m is not None:
                self._settle(s, m.start(), out)
                self._mode = _TAIL
            else:
                self._settle(s, len(s), out)
        self._held = ""
        self._pad = []
        self._drop_ws()
        self._think_buf = ""
        return "".join(out)

    # -- internals --------------------------------------------------------------

    def _context(self) -> str:
        """The character a scan starts after: "\\n" where a line-start marker may begin."""
        line = (self._ws_nl or self._ctx == "\n") and self._ws_clean
        return "\n" if line else " "

    def _take_held(self) -> str:
        held = self._held
        if self._pad:
            held += "".join(self._pad)
            self._pad = []
        self._held = ""
        return held

    def _keep_ws(self, ws: str) -> None:
        """Add whitespace to the pending run."""
        self._ws.append(ws)
        nl = ws.rfind("\n")
        if nl >= 0:
            self._ws_nl = True
            self._ws_clean = not ws[nl + 1 :].strip(" \t")
        elif self._ws_clean:
            self._ws_clean = not ws.strip(" \t")

    def _drop_ws(self) -> None:
        self._ws = []
        self._ws_nl = False
        self._ws_clean = True

    def _emit(self, body: str) -> str:
        """Show the pending whitespace then ``body`` (which ends in visible text)."""
        if not self._emitted:
            text = body.lstrip()  # the reply's leading whitespace never shows
        else:
            text = "".join(self._ws) + body if self._ws else body
        self._drop_ws()
        self._parts.append(text)
        self._visible_cache = None
        self._ctx = text[-1]
        self._emitted = True
        return text

    def _settle(self, s: str, end: int, out: list[str]) -> None:
        """Emit s[1:end] less its trailing whitespace, which joins the pending run."""
        body = s[1:end]
        stripped = body.rstrip()
        if stripped:
            out.append(self._emit(stripped))
        if len(stripped) < len(body):
            self._keep_ws(body[len(stripped) :])

    def _hold(self, partial: str) -> None:
        """Hold back a possible tag or marker start; a marker line's indentation is pending
        whitespace like any other."""
        start = len(partial) - len(partial.lstrip(" \t"))
        if start:
            self._keep_ws(partial[:start])
        self._held = partial[start:]

    def _feed_visible(self, text: str, out: list[str]) -> str:
        """Consume text in visible mode; return what is left for the next mode."""
        if self._skip_ws:
            stripped = text.lstrip()
            if "\n" in text[: len(text) - len(stripped)]:
                # The dropped line break still starts a line, so a marker line
                # right after a lone </think> is recognised.
                self._ctx = "\n"
            text = stripped
            if not text:
                return ""
            self._skip_ws = False
        s = self._context() + self._take_held() + text
        m = _SCAN.search(s, 1)
        if m is None or m.lastgroup == "partial":
            end = len(s) if m is None else m.start()
            self._settle(s, end, out)
            self._hold(s[end:])
            return ""
        kind = m.lastgroup
        self._settle(s, m.start(), out)
        rest = s[m.end() :]
        if kind == "open":
            # Whitespace before a think block stays pending: it shows only if
            # visible text follows the block.
            self._mode = _THINK
            self._saw_thinking = True
        elif kind == "close":
            self._skip_ws = True
            self._saw_thinking = True
        else:
            self._drop_ws()
            self._mode = _TAIL
            self._tail_strip_at = kind == "at"
        return rest

    def _feed_think(self, text: str) -> str:
        buf = self._think_buf + text if self._think_buf else text
        i = buf.find(_CLOSE)
        if i >= 0:
            self._think_buf = ""
            self._mode = _VISIBLE
            return buf[i + len(_CLOSE) :]
        # Every proper prefix of </think> has its only '<' first, so the one
        # candidate suffix starts at the last '<' among the final 7 characters.
        k = buf.rfind("<", max(0, len(buf) - len(_CLOSE) + 1))
        self._think_buf = buf[k:] if k >= 0 and _CLOSE.startswith(buf[k:]) else ""
        return ""
