"""``sadie backup`` and ``sadie restore``: the whole memory as one file, and back.

A backup is a tar of three members: ``sadie.duckdb`` (the database file as it is right after a
checkpoint, taken under the database's lock so no statement runs meanwhile: encrypted when the
memory is), ``sadie.keycard.json`` (for an encrypted memory: the salt its passphrase needs) and
``manifest.json`` (rows by table, the schema's migrations, the file's size and sha256). It is
written beside its destination, flushed and renamed, so a kill leaves no half backup under the
name. The keyword index is not in it: it is rebuilt from the database on the first search.

A restore checks the manifest (a newer schema, a size or checksum that does not match), stages
the database beside the memory, opens it (with the passphrase, for an encrypted backup) and
compares its rows with the manifest's, then switches it in (``store.switch``).
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ... import __version__
from ...paths import DB_NAME, db_path, write_private
from ..errors import StorageError, UsageError
from ..store.copies import table_counts
from ..store.db import Database
from ..store.keycard import CARD_NAME, KeyCard, remember
from ..store.migrations import MIGRATIONS, applied
from ..store.switch import fsync_file, switching
from .unlock import Ask, unlock_card

FORMAT = 1
MANIFEST = "manifest.json"
LAST_BACKUP = "backup.json"  # in the home: when the last backup was made (doctor says it)
_BLOCK = 1 << 20


@dataclass(frozen=True)
class BackupReport:
    path: str
    made: str  # ISO time
    encrypted: bool
    bytes: int
    counts: dict[str, int]


def _digest(path: Path) -> tuple[str, int]:
    sha, size = hashlib.sha256(), 0
    with path.open("rb") as source:
        while block := source.read(_BLOCK):
            sha.update(block)
            size += len(block)
    return sha.hexdigest(), size


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    tar.addfile(info, io.BytesIO(data))


def backup(db: Database, home: Path, target: Path) -> BackupReport:
    """Write the memory ``db`` (of ``home``) to ``target`` whole (see the module)."""
    target = Path(target).absolute()
    if target.is_dir():
        raise UsageError(f"{target} is a folder", fix="give the backup file's name")
    part = target.with_name(target.name + ".part")
    made = datetime.now().astimezone().isoformat(timespec="seconds")
    card = (home / CARD_NAME).read_bytes() if db.encrypted else None
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with open(fd, "wb") as out, db.lock:
            db.execute("CHECKPOINT")  # everything in the file, nothing left in the log
            counts = table_counts(db)
            schema = applied(db)
            digest, size = _digest(db.path)
            with tarfile.open(fileobj=out, mode="w") as tar:
                info = tar.gettarinfo(str(db.path), arcname=DB_NAME)
                info.mode, info.uid, info.gid, info.uname, info.gname = 0o600, 0, 0, "", ""
                with db.path.open("rb") as source:
                    tar.addfile(info, source)
                if card is not None:
                    _add(tar, CARD_NAME, card)
                manifest = {
                    "format": FORMAT,
                    "sadie": __version__,
                    "made": made,
                    "encrypted": db.encrypted,
                    "schema": schema,
                    "counts": counts,
                    "bytes": size,
                    "sha256": digest,
                }
                _add(tar, MANIFEST, json.dumps(manifest, indent=1).encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(part, target)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    write_private(home / LAST_BACKUP, json.dumps({"made": made, "bytes": size}))
    return BackupReport(str(target), made, db.encrypted, size, counts)


def last_backup(home: Path) -> str | None:
    """When the last backup of ``home`` was made (ISO time), or None."""
    try:
        made = json.loads((Path(home) / LAST_BACKUP).read_text(encoding="utf-8")).get("made")
    except (OSError, ValueError, AttributeError):
        return None
    return str(made) if made else None


# --------------------------------------------------------------------------- restore


@dataclass(frozen=True)
class Manifest:
    made: str
    encrypted: bool
    schema: list[str]
    counts: dict[str, int]
    bytes: int
    sha256: str


def _manifest(tar: tarfile.TarFile, file: Path) -> Manifest:
    try:
        member = tar.extractfile(MANIFEST)
        body = json.loads(member.read().decode("utf-8")) if member else None
        if not isinstance(body, dict) or body.get("format") != FORMAT:
            raise ValueError("not a sadie backup")
        return Manifest(
            str(body["made"]),
            bool(body["encrypted"]),
            [str(name) for name in body["schema"]],
            {str(k): int(v) for k, v in body["counts"].items()},
            int(body["bytes"]),
            str(body["sha256"]),
        )
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise UsageError(f"{file} is not a sadie backup (its manifest: {exc})") from exc


def in_use(home: Path) -> bool:
    """Whether another process has the memory file open for writing (DuckDB's lock on it)."""
    path = db_path(home)
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # releases the probe's own lock at once
    return False


def has_memory(home: Path) -> bool:
    return db_path(home).exists()


def restore(home: Path, file: Path, *, replace: bool = False, ask: Ask | None = None) -> Manifest:
    """Restore the backup ``file`` into ``home``: an empty one, or (``replace``) over its memory,
    which must not be in use. Nothing changes unless the backup checks out whole."""
    home, file = Path(home), Path(file)
    if has_memory(home) and not replace:
        raise UsageError(
            f"there is already a memory at {home}", fix="`sadie restore --replace` replaces it"
        )
    if in_use(home):
        raise StorageError(f"the memory at {home} is in use", fix="close the other sadie first")
    try:
        tar = tarfile.open(file, mode="r:")
    except (OSError, tarfile.TarError) as exc:
        raise UsageError(f"cannot read the backup {file}: {exc}") from exc
    with tar:
        manifest = _manifest(tar, file)
        newer = [name for name in manifest.schema if name not in {n for n, _ in MIGRATIONS}]
        if newer:
            raise UsageError(
                f"{file} was made by a newer sadie (schema step {newer[0]})",
                fix="upgrade sadie first",
            )
        card = _card(tar, file) if manifest.encrypted else None
        key = unlock_card(card, home, ask) if card is not None else None
        home.mkdir(parents=True, exist_ok=True)
        with switching(home, "restore", card) as switch:
            _extract(tar, file, switch.staged, manifest)
            with Database.open(switch.staged, key=key) as copy:
                found = table_counts(copy)
            wanted = {name: n for name, n in manifest.counts.items() if name in found}
            if {name: found[name] for name in wanted} != wanted:
                raise StorageError(f"{file} does not hold the rows its manifest lists")
            switch.ready()
            switch.finish()
    if key is not None:
        remember(home, key)
    return manifest


def _card(tar: tarfile.TarFile, file: Path) -> KeyCard:
    try:
        member = tar.extractfile(CARD_NAME)
        if member is None:
            raise KeyError(CARD_NAME)
        return KeyCard.from_json(member.read().decode("utf-8"))
    except (KeyError, ValueError, TypeError) as exc:
        raise UsageError(f"{file} is an encrypted backup without its key card") from exc


def _extract(tar: tarfile.TarFile, file: Path, staged: Path, manifest: Manifest) -> None:
    """The backup's database into ``staged``, checked against the manifest's size and sha256."""
    try:
        member = tar.extractfile(DB_NAME)
    except KeyError as exc:
        raise UsageError(f"{file} holds no database") from exc
    if member is None:
        raise UsageError(f"{file} holds no database")
    sha, size = hashlib.sha256(), 0
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "wb") as out:
        while block := member.read(_BLOCK):
            sha.update(block)
            size += len(block)
            out.write(block)
        out.flush()
        os.fsync(out.fileno())
    if size != manifest.bytes or sha.hexdigest() != manifest.sha256:
        raise StorageError(f"{file} is damaged: its database does not match its checksum")
    fsync_file(staged)
