"""The soul summary the person wrote or accepted, kept as a file in the home: ``soul.md`` for a
plain memory, ``soul.md.sealed`` for an encrypted one (a summary of who someone is never lies
in plain text beside an encrypted memory)."""

from __future__ import annotations

import os
from pathlib import Path

from ...paths import write_private
from .sealing import Unsealable, seal, unseal

SOUL_FILE = "soul.md"
SEALED_SOUL = "soul.md.sealed"
_LABEL = b"sadie-soul-sealed-1\n"


def read(home: Path, key: bytes | None) -> str:
    """The summary's text ("" when there is none, or it cannot be read)."""
    if key is not None and (Path(home) / SOUL_FILE).is_file():
        # A memory encrypted by a process killed before it sealed the summary: seal it now.
        seal_plain(home, key)
    try:
        if key is not None:
            data = unseal(Path(home) / SEALED_SOUL, key, _LABEL)
            return data.decode("utf-8").strip() if data else ""
        return (Path(home) / SOUL_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError, Unsealable):
        return ""


def write(home: Path, text: str, key: bytes | None) -> Path:
    """Write the summary, atomically and private (sealed under ``key`` when given)."""
    if key is not None:
        path = Path(home) / SEALED_SOUL
        seal(path, text.strip().encode("utf-8") + b"\n", key, _LABEL)
        (Path(home) / SOUL_FILE).unlink(missing_ok=True)
        return path
    path = Path(home) / SOUL_FILE
    tmp = path.with_suffix(".md.tmp")
    write_private(tmp, text.strip() + "\n")
    os.replace(tmp, path)
    return path


def seal_plain(home: Path, key: bytes) -> None:
    """A plain ``soul.md`` sealed, then removed (a memory that was just encrypted)."""
    plain = Path(home) / SOUL_FILE
    try:
        text = plain.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    write(home, text, key)
