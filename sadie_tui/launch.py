"""What every face starts from: the resolved home, the settings, and the session over it.

Shared by the CLI and the TUI (neither imports the other's modules): a face builds a
``Launch`` from its options and asks it for the ``Session``, opened once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Self

from .config import Settings, load_settings
from .engine.errors import LockedError
from .paths import resolve_home

if TYPE_CHECKING:
    from .engine.privacy.unlock import Ask
    from .engine.session import SessionProtocol
    from .serve.holder import Holder

DemoBuilder = Callable[[Path], object]


@dataclass
class Launch:
    home: Path
    settings: Settings
    demo: bool = False
    new: bool = False  # `sadie --new`: the app opens a blank conversation, not the last one
    via: str | None = None  # the holder this session is a client of ("another sadie (pid 1)")
    sharing: str | None = None  # why the memory is not shared on its socket, when it is not
    # The face's question for an encrypted memory's passphrase (the CLI's prompt on a terminal,
    # the app's dialog); None: only the keyring and SADIE_PASSPHRASE.
    ask: Ask | None = field(default=None, repr=False)
    # Whether a new memory's "encrypt_new = ask" is asked (the app's first run); the CLI never
    # asks it (scripts), so a memory a command creates first starts plain.
    first_run_choice: bool = False
    _session: SessionProtocol | None = field(default=None, repr=False)
    _holder: Holder | None = field(default=None, repr=False)

    @classmethod
    def create(cls, *, demo: bool = False) -> Self:
        return cls(home=resolve_home(demo=demo), settings=load_settings(), demo=demo)

    def session(
        self,
        *,
        read_only: bool = False,
        wait_for_embedder: bool = True,
        build_demo: DemoBuilder | None = None,
        remote: bool = False,
        hold: bool = False,
    ) -> SessionProtocol:
        """The session, opened once; a demo home is built first (``build_demo`` shows the
        face's own progress; by default it builds quietly).

        With ``remote``, a memory held by another sadie that serves it (``sadie serve``, the
        TUI) is reached through its Unix socket (a ``serve.remote.RemoteSession``) instead of
        failing with the ``LockedError``. With ``hold``, a memory opened here is served on
        that socket for as long as this process has it (``serve.holder``)."""
        if self._session is None:
            # lazy: engine.session loads only when session runs, off the start-up path
            from .engine.session import Session

            if self.demo:
                if build_demo is not None:
                    build_demo(self.home)
                else:
                    # lazy: engine.demo loads only when session runs, off the start-up path
                    from .engine.demo import ensure_demo

                    ensure_demo(self.home)
            if not self.demo:
                client = self._unlock(remote)
                if client is not None:
                    self._session = client
                    return client
            try:
                self._session = Session.open(
                    self.home,
                    self.settings,
                    read_only=read_only,
                    wait_for_embedder=wait_for_embedder,
                )
            except LockedError as exc:
                self._session = self._client_of_holder(exc) if remote else None
                if self._session is None:
                    raise
            else:
                if hold:
                    self._serve(self._session)
        return self._session

    def _unlock(self, remote: bool) -> SessionProtocol | None:
        """An encrypted memory's key, found or asked before the memory is opened (a new memory
        is born encrypted when ``encrypt_new`` says so). With ``remote``, a memory another
        sadie holds and serves is reached through it instead, without the key: the client of
        that sadie is returned."""
        # lazy: engine.privacy loads only when session runs, off the start-up path
        from .engine.privacy.unlock import is_new, needs_key, new_passphrase, start_encrypted
        from .engine.privacy.unlock import unlock as unlock_key

        if is_new(self.home):
            choice = self.settings.encrypt_new
            if choice == "yes":
                start_encrypted(self.home, new_passphrase(self.home, self.ask))
            elif choice == "ask" and self.first_run_choice and self.ask is not None:
                passphrase = self.ask(f"A new memory at {self.home}", True)
                if passphrase:  # None: the person keeps it plain
                    start_encrypted(self.home, passphrase)
            return None
        if not needs_key(self.home):
            return None
        if remote:
            client = self._client_of_holder(LockedError.held_by(self.home, None))
            if client is not None:
                return client
        unlock_key(self.home, self.ask)
        return None

    def prewarm_embedder(self) -> None:
        """Load the embedding model while the memory opens, unless another sadie serves this
        memory (then this process is its client and never embeds anything)."""
        # lazy: engine.session loads only when prewarm_embedder runs, off the start-up path
        from .engine.session import prewarm_embedder
        from .serve.remote import answers
        from .serve.socket import socket_path

        if not answers(socket_path(self.home)):
            prewarm_embedder()

    def on_change(self, listener: Callable[[str], None]) -> None:
        """While this process holds the memory and serves it, ``listener`` hears in one line
        what another sadie's ingest or reflection changed (from the server's threads)."""
        if self._holder is not None:
            self._holder.on_change(listener)

    def _serve(self, session: SessionProtocol) -> None:
        # lazy: serve.holder loads only when _serve runs, off the start-up path
        from .serve.holder import hold
        from .serve.socket import socket_path

        try:
            self._holder = hold(session)
        except OSError as exc:
            self.sharing = f"not shared on {socket_path(self.home)}: {exc.strerror or exc}"
        else:
            if self._holder is None:
                self.sharing = f"another process listens on {socket_path(self.home)}"

    def _client_of_holder(self, locked: LockedError) -> SessionProtocol | None:
        """A client of the server holding the memory, if one answers on the home's socket."""
        # lazy: serve.remote loads only when _client_of_holder runs, off the start-up path
        from .serve.remote import RemoteSession, answers
        from .serve.socket import socket_path

        path = socket_path(self.home)
        if not answers(path):
            return None
        self.via = locked.who
        return RemoteSession(self.home, self.settings, path, holder=locked.who)

    def close(self) -> None:
        if self._holder is not None:
            self._holder.stop()
            self._holder = None
        if self._session is not None:
            self._session.close()
            self._session = None
