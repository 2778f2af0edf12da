"""What every face starts from: the resolved home, the settings, and the session over it.

Shared by the CLI and the TUI (neither imports the other's modules): a face builds a
``Launch`` from its options and asks it for the ``Session``, opened once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import Settings, load_settings
from .engine.errors import LockedError
from .paths import resolve_home

if TYPE_CHECKING:
    from .engine.session import SessionProtocol

DemoBuilder = Callable[[Path], Any]


@dataclass
class Launch:
    home: Path
    settings: Settings
    demo: bool = False
    _session: SessionProtocol | None = field(default=None, repr=False)

    @classmethod
    def create(cls, *, demo: bool = False) -> Launch:
        return cls(home=resolve_home(demo=demo), settings=load_settings(), demo=demo)

    def session(
        self,
        *,
        read_only: bool = False,
        wait_for_embedder: bool = True,
        build_demo: DemoBuilder | None = None,
        remote: bool = False,
    ) -> SessionProtocol:
        """The session, opened once; a demo home is built first (``build_demo`` shows the
        face's own progress; by default it builds quietly).

        With ``remote``, a memory held by ``sadie serve`` is reached through its Unix socket
        (a ``serve.remote.RemoteSession``) instead of failing with the ``LockedError``."""
        if self._session is None:
            from .engine.session import Session

            if self.demo:
                if build_demo is not None:
                    build_demo(self.home)
                else:
                    from .engine.demo import ensure_demo

                    ensure_demo(self.home)
            try:
                self._session = Session.open(
                    self.home,
                    self.settings,
                    read_only=read_only,
                    wait_for_embedder=wait_for_embedder,
                )
            except LockedError as exc:
                self._session = self._holder(exc) if remote else None
                if self._session is None:
                    raise
        return self._session

    def _holder(self, locked: LockedError) -> SessionProtocol | None:
        """A client of the server holding the memory, if one answers on the home's socket."""
        from .serve.remote import RemoteSession, answers
        from .serve.socket import socket_path

        path = socket_path(self.home)
        if not answers(path):
            return None
        found = re.search(r"in use by (.+)$", locked.message)
        holder = found.group(1) if found else "the other sadie"
        return RemoteSession(self.home, self.settings, path, holder=holder)

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
