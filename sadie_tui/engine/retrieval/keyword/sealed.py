"""The keyword index of an encrypted memory: its files in one sealed file beside the database.

The index's files (postings, vocabulary, titles, the embeddings copy) hold the notes' words, so
an encrypted memory keeps them in ``<home>/bm25.sealed``: every file packed together and sealed
with AES-256-GCM under a key derived from the memory's (``store.keycard.files_key``). GCM's tag
vouches for every byte, so a sealed index needs no manifest: one that does not open is damaged
and rebuilt from the database. Written beside, flushed, then renamed over: a kill leaves the
old index or the new one.
"""

from __future__ import annotations

import json
import os
import secrets
import struct
from collections.abc import Mapping
from pathlib import Path

from .manifest import DamagedIndex

SEALED_NAME = "bm25.sealed"
_MAGIC = b"sadie-bm25-sealed-1\n"
_NONCE = 12


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
    # lazy: cryptography loads only for an encrypted memory's index
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = secrets.token_bytes(_NONCE)
    sealed = AESGCM(key).encrypt(nonce, _pack(files), _MAGIC)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "wb") as out:
        out.write(_MAGIC + nonce + sealed)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def read_sealed(path: Path, key: bytes) -> dict[str, bytes] | None:
    """The files sealed in ``path``: None when there is none; ``DamagedIndex`` when it does not
    open with ``key`` (changed, truncated, or sealed under another key)."""
    # lazy: as in write_sealed
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DamagedIndex(f"it cannot be read ({exc.strerror or exc})") from exc
    if not blob.startswith(_MAGIC):
        raise DamagedIndex("it is not a sealed index")
    body = blob[len(_MAGIC) :]
    try:
        plain = AESGCM(key).decrypt(body[:_NONCE], body[_NONCE:], _MAGIC)
        return _unpack(plain)
    except InvalidTag as exc:
        raise DamagedIndex("it does not open with the memory's key") from exc
    except (ValueError, struct.error, UnicodeDecodeError) as exc:
        raise DamagedIndex("its contents are malformed") from exc
