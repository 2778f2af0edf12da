"""Files an encrypted memory keeps beside its database, sealed: AES-256-GCM under the key
derived for them (``keycard.files_key``), written beside, flushed and renamed, so a kill leaves
the old file or the new one. GCM's tag vouches for every byte: a file that does not open was
changed, cut short or sealed under another key (``Unsealable``)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

_NONCE = 12


class Unsealable(Exception):
    """A sealed file that does not open; the message says why."""


def seal(path: Path, data: bytes, key: bytes, label: bytes) -> None:
    """``data`` sealed into ``path`` (0600); ``label`` names what it is (checked on opening)."""
    # lazy: cryptography loads only for an encrypted memory
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = secrets.token_bytes(_NONCE)
    sealed = AESGCM(key).encrypt(nonce, data, label)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "wb") as out:
        out.write(label + nonce + sealed)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def unseal(path: Path, key: bytes, label: bytes) -> bytes | None:
    """What ``path`` holds, or None when there is no such file."""
    # lazy: as in seal
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Unsealable(f"it cannot be read ({exc.strerror or exc})") from exc
    if not blob.startswith(label):
        raise Unsealable("it is not what its name says")
    body = blob[len(label) :]
    try:
        return AESGCM(key).decrypt(body[:_NONCE], body[_NONCE:], label)
    except InvalidTag as exc:
        raise Unsealable("it does not open with the memory's key") from exc
