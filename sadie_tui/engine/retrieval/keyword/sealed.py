"""The keyword index of an encrypted memory: its files in one sealed file beside the database.

The index's files (postings, vocabulary, titles, the embeddings copy) hold the notes' words, so
an encrypted memory keeps them in ``<home>/bm25.sealed``: every file packed together and sealed
with AES-256-GCM (``store.sealing``) under a key derived from the memory's. GCM's tag vouches
for every byte, so a sealed index needs no manifest: one that does not open is damaged and
rebuilt from the database.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from pathlib import Path

from ...store.sealing import Unsealable, seal, unseal
from .manifest import DamagedIndex

SEALED_NAME = "bm25.sealed"
_MAGIC = b"sadie-bm25-sealed-1\n"


def sealed_path(home: Path) -> Path:
    return Path(home) / SEALED_NAME


def _pack(files: Mapping[str, bytes]) -> bytes:
    header = json.dumps({name: len(data) for name, data in files.items()}).encode("utf-8")
    return struct.pack(">I", len(header)) + header + b"".join(files.values())


def _unpack(blob: bytes) -> dict[str, bytes]:
    (length,) = struct.unpack(">I", blob[:4])
    sizes = json.loads(blob[4 : 4 + length].decode("utf-8"))
    files, at = {}, 4 + length
    for name, size in sizes.items():
        files[str(name)] = blob[at : at + int(size)]
        at += int(size)
    if at != len(blob):
        raise ValueError("the sealed index's sizes do not add up")
    return files


def write_sealed(path: Path, files: Mapping[str, bytes], key: bytes) -> None:
    """Seal ``files`` (bytes by name) into ``path`` with ``key``; 0600, flushed, renamed."""
    seal(path, _pack(files), key, _MAGIC)


def read_sealed(path: Path, key: bytes) -> dict[str, bytes] | None:
    """The files sealed in ``path``: None when there is none; ``DamagedIndex`` when it does not
    open with ``key`` (changed, truncated, or sealed under another key)."""
    try:
        plain = unseal(path, key, _MAGIC)
    except Unsealable as exc:
        raise DamagedIndex(str(exc)) from exc
    if plain is None:
        return None
    try:
        return _unpack(plain)
    except (ValueError, struct.error, UnicodeDecodeError) as exc:
        raise DamagedIndex("its contents are malformed") from exc
