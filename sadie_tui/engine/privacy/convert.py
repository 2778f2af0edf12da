"""``sadie encrypt`` and ``sadie passphrase``: the memory rewritten whole into a new file under
a new key, then switched in (``store.switch``: a kill at any instant leaves the old memory or
the new one). The copy is checked table by table against the old file before the switch.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...paths import db_path
from ..errors import StorageError, UsageError
from ..store import episodes, soul_file
from ..store.copies import table_counts
from ..store.db import Database
from ..store.keycard import KeyCard, files_key, new_card, read_card, remember, unlocked
from ..store.switch import switching
from .unlock import drop_from_keyring, keep_in_keyring

#: ``(stage, done, total)``, as ingest's progress.
Progress = Callable[[str, int, int], None]
STEPS = ("checkpoint", "copying", "checking the copy", "switching")


def _quiet(stage: str, done: int, total: int) -> None:
    pass


def encrypt(
    home: Path, passphrase: str, *, progress: Progress | None = None, keyring: bool = True
) -> dict[str, int]:
    """Encrypt ``home``'s plain memory under ``passphrase``; the key is kept in the OS keyring
    when there is one (and ``keyring``). Returns the rows copied by table."""
    if read_card(home) is not None:
        raise UsageError(
            f"the memory at {home} is already encrypted", fix="`sadie passphrase` changes its key"
        )
    card, key = new_card(passphrase)
    counts = _rewrite(home, "encryption", None, card, key, progress or _quiet)
    if keyring:
        keep_in_keyring(home, key)
    return counts


def change_passphrase(
    home: Path, passphrase: str, *, progress: Progress | None = None, keyring: bool = True
) -> dict[str, int]:
    """Re-key ``home``'s encrypted memory (already unlocked) under a new ``passphrase``: every
    block is rewritten under the new key, so the old passphrase opens nothing afterwards."""
    old = unlocked(home)
    if read_card(home) is None or old is None:
        raise UsageError(f"the memory at {home} is not encrypted", fix="run `sadie encrypt`")
    card, key = new_card(passphrase)
    counts = _rewrite(home, "passphrase change", old, card, key, progress or _quiet)
    drop_from_keyring(home)
    if keyring:
        keep_in_keyring(home, key)
    return counts


def _rewrite(
    home: Path,
    what: str,
    old_key: bytes | None,
    card: KeyCard,
    key: bytes,
    progress: Progress,
) -> dict[str, int]:
    total = len(STEPS)
    source = Database.open(db_path(home), wait=0.3, key=old_key)
    try:
        with switching(home, what, card) as switch:
            progress(STEPS[0], 0, total)
            source.execute("CHECKPOINT")
            counts = table_counts(source)
            progress(STEPS[1], 1, total)
            source.copy_to(switch.staged, key=key)
            progress(STEPS[2], 2, total)
            with Database.open(switch.staged, key=key) as copy:
                # COPY FROM DATABASE drops the HNSW index's metric (as in ``Memory.compact``).
                episodes.rebuild_vector_index(copy)
                copied = table_counts(copy)
            if copied != counts:
                raise StorageError(f"the {what} copy does not match the memory: nothing changed")
            source.close()
            progress(STEPS[3], 3, total)
            switch.ready()
            switch.finish()
    finally:
        source.close()
    remember(home, key)
    # The soul summary the person wrote beside the memory: sealed (or re-sealed) too.
    if old_key is not None:
        text = soul_file.read(home, files_key(old_key))
        if text:
            soul_file.write(home, text, files_key(key))
    else:
        soul_file.seal_plain(home, files_key(key))
    progress("done", total, total)
    return counts
