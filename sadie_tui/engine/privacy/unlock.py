"""Where an encrypted memory's key comes from, in order: this process (already unlocked), the OS
keyring (Secret Service, Keychain, Windows Credential Locker, through ``keyring``), the
``SADIE_PASSPHRASE`` variable (for scripts and tests: weaker, any process of the same user
that can read the environment sees it), then the face's own question (the CLI's prompt, the
app's dialog). A passphrase is stretched with the key card's scrypt and checked against the
card before anything is opened: a wrong or missing one is a ``KeyNeededError`` (exit 7) and
nothing is written.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ...paths import db_path, make_private_folder
from ..errors import KeyNeededError
from ..store.keycard import (
    KeyCard,
    card_path,
    new_card,
    read_card,
    remember,
    unlocked,
    write_card,
)

PASSPHRASE_ENV = "SADIE_PASSPHRASE"
SERVICE = "sadie"
#: The face's question for a passphrase: the prompt's words and whether it is a new one (to be
#: typed twice) in, the passphrase (or None when the person declines) out.
Ask = Callable[[str, bool], str | None]


def is_encrypted(home: Path) -> bool:
    return read_card(home) is not None


def needs_key(home: Path) -> bool:
    """Whether opening ``home`` needs a key this process does not have yet."""
    return is_encrypted(home) and unlocked(home) is None


def _account(home: Path) -> str:
    return str(Path(home).resolve())


def keyring_key(home: Path) -> bytes | None:
    """The key the OS keyring keeps for ``home``, if there is a keyring and it has one."""
    try:
        # lazy: keyring (and its backends' D-Bus or Keychain bindings) loads only here
        import keyring
        from keyring.errors import KeyringError
    except ImportError:
        return None
    try:
        saved = keyring.get_password(SERVICE, _account(home))
    except (KeyringError, RuntimeError, OSError):
        return None  # no keyring on this machine (a server, a container): ask instead
    try:
        return bytes.fromhex(saved) if saved else None
    except ValueError:
        return None


def keep_in_keyring(home: Path, key: bytes) -> bool:
    """Keep ``key`` in the OS keyring for ``home``; False when there is no usable keyring."""
    try:
        # lazy: as in keyring_key
        import keyring
        from keyring.errors import KeyringError
    except ImportError:
        return False
    try:
        keyring.set_password(SERVICE, _account(home), key.hex())
    except (KeyringError, RuntimeError, OSError):
        return False
    return True


def drop_from_keyring(home: Path) -> None:
    try:
        # lazy: as in keyring_key
        import keyring
        from keyring.errors import KeyringError
    except ImportError:
        return
    try:
        keyring.delete_password(SERVICE, _account(home))
    except (KeyringError, RuntimeError, OSError):
        pass  # nothing kept there, or no keyring: nothing to drop


def unlock(home: Path, ask: Ask | None = None) -> bytes | None:
    """The key of ``home``'s memory, unlocked for this process (None for a plain memory)."""
    card = read_card(home)
    if card is None:
        return None
    key = unlock_card(card, home, ask)
    remember(home, key)
    return key


def unlock_card(card: KeyCard, home: Path, ask: Ask | None = None) -> bytes:
    """The key that fits ``card`` (``home``'s, or a backup's being restored into it), from
    this process, the keyring, ``SADIE_PASSPHRASE`` or ``ask``, in that order."""
    for key in (unlocked(home), keyring_key(home)):
        if key is not None and card.fits(key):
            return key
    passphrase = os.environ.get(PASSPHRASE_ENV)
    source = PASSPHRASE_ENV
    if not passphrase and ask is not None:
        passphrase = ask(f"Passphrase for the memory at {home}", False)
        source = "the passphrase"
    if not passphrase:
        raise KeyNeededError(
            f"the memory at {home} is encrypted and no key was given",
            fix=f"run it in a terminal to be asked, or set {PASSPHRASE_ENV}",
        )
    key = card.derive(passphrase)
    if not card.fits(key):
        raise KeyNeededError(f"{source} does not open the memory at {home}")
    return key


def new_passphrase(home: Path, ask: Ask | None, what: str = "New passphrase") -> str:
    """A new passphrase: ``SADIE_PASSPHRASE``, else asked (twice, by the face)."""
    passphrase = os.environ.get(PASSPHRASE_ENV)
    if not passphrase and ask is not None:
        passphrase = ask(f"{what} for the memory at {home}", True)
    if not passphrase:
        raise KeyNeededError(
            f"no passphrase was given for the memory at {home}",
            fix=f"run it in a terminal to be asked, or set {PASSPHRASE_ENV}",
        )
    return passphrase


def start_encrypted(home: Path, passphrase: str, *, keyring: bool = True) -> bytes:
    """Make ``home`` (with no memory yet) an encrypted one: its key card now, so the database
    file is born encrypted when it is first opened."""
    card, key = new_card(passphrase)
    make_private_folder(Path(home))
    write_card(card_path(home), card)
    remember(home, key)
    if keyring:
        keep_in_keyring(home, key)
    return key


def is_new(home: Path) -> bool:
    """No memory in ``home`` yet (and no key card): the first open will create one."""
    return not db_path(home).exists() and read_card(home) is None
