"""The holder's Unix socket, ``<home>/sadie.sock``: while ``sadie serve`` holds the memory, a
second sadie on the same home reaches it here (``serve.remote``) instead of meeting the lock.

The file is made with mode 0600, so only the person's own processes may connect: that is the
socket's authentication, and the guard lets its requests through. A file nothing accepts on
(left by a crash) is replaced; a live one belongs to another holder and is left alone.
"""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass
from pathlib import Path

NAME = "sadie.sock"
CONNECT_SECONDS = 1.0


def socket_path(home: Path) -> Path:
    return Path(home) / NAME


def is_live(path: Path, timeout: float = CONNECT_SECONDS) -> bool:
    """Whether something accepts connections on the socket file at ``path``."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(timeout)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


@dataclass
class Listener:
    """A listening Unix socket and the file it made; ``close`` removes the file if it is still
    the one this listener made."""

    path: Path
    sock: socket.socket
    inode: int

    def close(self) -> None:
        self.sock.close()
        with contextlib.suppress(OSError):
            if self.path.lstat().st_ino == self.inode:
                self.path.unlink()


def listen(path: Path) -> Listener | None:
    """A listener on ``path`` (mode 0600), replacing a stale socket file; ``None`` when another
    process already listens there. Other failures raise ``OSError``."""
    path = Path(path)
    if path.is_socket():
        if is_live(path):
            return None
        path.unlink()  # stale: its process is gone
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)  # the file is born 0600: no window where others may connect
    try:
        sock.bind(str(path))
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old_mask)
    try:
        os.chmod(path, 0o600)
        sock.listen(128)
        inode = path.lstat().st_ino
    except OSError:
        sock.close()
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    return Listener(path, sock, inode)
