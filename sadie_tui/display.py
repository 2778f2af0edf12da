"""The one place that makes text safe to show in a terminal.

Notes, replies, titles, file names and messages may hold control characters and escape
sequences (CSI colours, OSC window titles and hyperlinks, DCS, 8-bit C1 controls) or Unicode
direction overrides. Shown raw they recolour the screen, rename the terminal's title, or hide
later output behind an unterminated OSC. Every face shows text through ``safe``: each such
character becomes a visible stand-in (ESC ``␛``, the other C0 controls their control
pictures, DEL ``␡``, C1 and direction overrides ``⟨U+009B⟩``), so an escape sequence reads
as harmless text such as ``␛[31m``. A byte that was not UTF-8 (a file name, an argument:
Python carries it as a lone surrogate, which a terminal would get raw) reads ``\\x9b``; any
other lone surrogate ``⟨U+D800⟩``. Tabs and newlines stay; ``\\r\\n`` becomes ``\\n``. The
stored data keeps what came in; only what is shown changes. One ``str.translate``: linear.
"""

from __future__ import annotations

import json

_KEEP = {0x09, 0x0A}  # tab, newline
_DIRECTION = [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C]


def _table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x20):
        if code not in _KEEP:
            table[code] = chr(0x2400 + code)  # ␀ … ␟ (ESC is ␛)
    table[0x7F] = "\u2421"  # ␡
    for code in [*range(0x80, 0xA0), *_DIRECTION, *range(0xD800, 0xE000)]:
        table[code] = f"⟨U+{code:04X}⟩"
    for code in range(0xDC80, 0xDD00):  # surrogateescape: the byte 0x80–0xFF it stood for
        table[code] = f"\\x{code - 0xDC00:02x}"
    return table


TABLE = _table()
_JSON_TABLE = {code: f"\\u{code:04x}" for code in TABLE if code >= 0x7F}


def safe(text: str) -> str:
    """``text`` with every control, escape and direction override made visible."""
    return text.replace("\r\n", "\n").translate(TABLE)


_LINE_TABLE = {**TABLE, 0x09: "\u2409", 0x0A: "\u240a", 0x0D: "\u240d"}


def safe_line(text: str) -> str:
    """``safe``, and tabs and line breaks made visible too (``␉``, ``␊``, ``␍``): for a name
    shown inside one line (a file name in a report line, a title in a table cell), where a
    newline would start a line that looks like sadie's own."""
    return text.translate(_LINE_TABLE)


def is_safe(text: str) -> bool:
    return not any(ord(ch) in TABLE for ch in text)


def safe_json(data: object, *, indent: int | None = None) -> str:
    """``json.dumps`` whose output is safe to print: JSON already escapes C0 controls; DEL,
    C1 and direction overrides are escaped too (``\\u009b``), which is the same JSON."""
    return json.dumps(data, ensure_ascii=False, default=str, indent=indent).translate(_JSON_TABLE)
