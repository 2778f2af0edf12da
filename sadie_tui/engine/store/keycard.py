"""The key of an encrypted memory: its key card beside the file, and the keys this process has
unlocked.

The key card (``sadie.keycard.json`` in the home) is what a memory needs outside its own
encryption: the scrypt parameters and salt that stretch a passphrase into the 32-byte key, and
a check value (an HMAC of a fixed label under the key) that says whether a key is the right one
before DuckDB is asked to open anything, so a wrong key writes nothing. Its presence is what
marks a memory as encrypted. It holds nothing personal and never the passphrase.

The key itself lives only in this process (``unlocked``), put there by whoever asked for it
(``engine.privacy.unlock``: the OS keyring, ``SADIE_PASSPHRASE``, a prompt or a dialog).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

from ...paths import DB_NAME
from ..errors import KeyNeededError

CARD_NAME = "sadie.keycard.json"
FORMAT = 1
# scrypt at N=2^15, r=8: 32 MiB and ~0.2 s a try here (the card records N, so it can grow).
SCRYPT_N = 2**15
SCRYPT_R = 8
SCRYPT_P = 1
_CHECK_LABEL = b"sadie: key check"
_FILES_LABEL = b"sadie: files beside the database"

_unlocked: dict[str, bytes] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class KeyCard:
    salt: bytes
    check: str
    n: int = SCRYPT_N
    r: int = SCRYPT_R
    p: int = SCRYPT_P

    def derive(self, passphrase: str) -> bytes:
        """The 32-byte key ``passphrase`` stretches to under this card's salt."""
        return hashlib.scrypt(
            passphrase.encode("utf-8"),
            salt=self.salt,
            n=self.n,
            r=self.r,
            p=self.p,
            maxmem=256 * self.n * self.r + (1 << 20),
            dklen=32,
        )

    def fits(self, key: bytes) -> bool:
        return hmac.compare_digest(check_value(key), self.check)

    def to_json(self) -> str:
        body = {
            "format": FORMAT,
            "kdf": "scrypt",
            "n": self.n,
            "r": self.r,
            "p": self.p,
            "salt": self.salt.hex(),
            "check": self.check,
        }
        return json.dumps(body, indent=1)

    @classmethod
    def from_json(cls, text: str) -> KeyCard:
        body = json.loads(text)
        if not isinstance(body, dict) or body.get("kdf") != "scrypt":
            raise ValueError("not a sadie key card")
        return cls(
            bytes.fromhex(str(body["salt"])),
            str(body["check"]),
            int(body["n"]),
            int(body["r"]),
            int(body["p"]),
        )


def check_value(key: bytes) -> str:
    return hmac.new(key, _CHECK_LABEL, hashlib.sha256).hexdigest()


def new_card(passphrase: str) -> tuple[KeyCard, bytes]:
    """A card with a fresh salt, and the key ``passphrase`` gives under it."""
    salt = secrets.token_bytes(16)
    draft = KeyCard(salt, "")
    key = draft.derive(passphrase)
    return KeyCard(salt, check_value(key)), key


def card_path(home: Path) -> Path:
    return Path(home) / CARD_NAME


def read_card(home: Path) -> KeyCard | None:
    """The home's key card, or None for a plain memory."""
    path = card_path(home)
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None  # no card (or no home yet, where a file is in the way: opening says so)
    except OSError as exc:
        raise KeyNeededError(f"cannot read the memory's key card {path}: {exc}") from exc
    try:
        return KeyCard.from_json(text)
    except (ValueError, KeyError, TypeError) as exc:
        raise KeyNeededError(f"the memory's key card {path} is damaged") from exc


def write_card(path: Path, card: KeyCard) -> None:
    """``card`` into ``path`` (0600), flushed to the disk before it returns."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w", encoding="utf-8") as out:
        out.write(card.to_json())
        out.flush()
        os.fsync(out.fileno())


def _slot(home: Path) -> str:
    return str(Path(home).resolve())


def remember(home: Path, key: bytes) -> None:
    """``key`` opens ``home``'s memory for the rest of this process."""
    with _lock:
        _unlocked[_slot(home)] = key


def forget(home: Path) -> None:
    with _lock:
        _unlocked.pop(_slot(home), None)


def unlocked(home: Path) -> bytes | None:
    with _lock:
        return _unlocked.get(_slot(home))


def key_for_file(path: Path) -> bytes | None:
    """The key that opens the memory file ``path``: None for a plain memory; the unlocked key
    of an encrypted one, checked against its card; ``KeyNeededError`` when none is unlocked."""
    path = Path(path)
    if path.name != DB_NAME:
        return None  # a scratch copy (compaction, conversion) is opened with an explicit key
    card = read_card(path.parent)
    if card is None:
        return None
    key = unlocked(path.parent)
    if key is None:
        raise KeyNeededError(f"the memory at {path.parent} is encrypted and no key was given")
    if not card.fits(key):
        raise KeyNeededError(f"the key given for the memory at {path.parent} is not its key")
    return key


def duckdb_key(key: bytes) -> str:
    """The key as DuckDB's ``ENCRYPTION_KEY`` takes it (a string)."""
    return key.hex()


def files_key(key: bytes) -> bytes:
    """The key of the files sadie keeps beside the database (the keyword index): derived, so
    one leaked file key never opens the database."""
    return hmac.new(key, _FILES_LABEL, hashlib.sha256).digest()


def home_files_key(home: Path) -> bytes | None:
    """The key of the files beside ``home``'s memory: None for a plain memory; a
    ``KeyNeededError`` when it is encrypted and this process has not unlocked it."""
    if read_card(home) is None:
        return None
    key = unlocked(home)
    if key is None:
        raise KeyNeededError(f"the memory at {home} is encrypted and no key was given")
    return files_key(key)
