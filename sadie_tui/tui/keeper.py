"""The app's side of the memory: open it off the first frame, hold it (or be a client of the
sadie that holds it), keep the notes folders current, warm the embedding model, and say when
the memory is empty or changed from another terminal.

The memory opens in a thread worker after the first refresh; the embedding model warms in a
daemon thread once it is open. Their results come back as messages (``messages.py``): thread
workers may only post, and the app hands each one back here (``receive``). Idle reflection
is ``learning.py``'s; the keeper starts it with the rest once the memory is open.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ..engine.errors import SadieError
from ..engine.operations import GetStats
from .messages import (
    EmbedderReady,
    MemoryChanged,
    MemoryEmpty,
    MemoryFailed,
    MemoryReady,
    MemoryRefreshed,
)
from .widgets.transcript import Transcript

if TYPE_CHECKING:
    import asyncio

    from textual.message import Message
    from textual.screen import Screen

    from ..config import Settings
    from ..engine.session import SessionProtocol
    from ..launch import Launch
    from .learning import Learning
    from .widgets.status import StatusLine

# What ``receive`` takes: the keeper's own news, from its threads.
KeeperNews = MemoryEmpty | MemoryChanged | MemoryFailed | EmbedderReady


class KeeperHost(Protocol):
    """What the keeper needs of the app (``SadieApp``; a protocol, as ``learning.py``'s)."""

    ctx: Launch
    settings: Settings
    session: SessionProtocol | None
    session_factory: Callable[[Launch], SessionProtocol]
    memory_ready: asyncio.Event
    memory_empty: bool
    exit_error: BaseException | None
    learning: Learning

    @property
    def via(self) -> str: ...

    def status_lines(self) -> list[StatusLine]: ...

    # Textual's App gives these.
    @property
    def screen_stack(self) -> list[Screen[object]]: ...

    @property
    def notify(self) -> Callable[..., None]: ...

    @property
    def post_message(self) -> Callable[[Message], bool]: ...

    @property
    def run_worker(self) -> Callable[..., object]: ...

    @property
    def call_from_thread(self) -> Callable[..., object]: ...

    @property
    def exit(self) -> Callable[..., None]: ...


class MemoryKeeper:
    """Owned by the app (``app.keeper``): ``open`` at start, ``opened``, ``warm`` and
    ``keep_current`` once the memory is open, ``receive`` for what its threads post."""

    def __init__(self, app: KeeperHost, *, warm_embedder: bool = True) -> None:
        self.app = app
        self.warm_embedder = warm_embedder

    # -- open ------------------------------------------------------------------------------------
    def open(self) -> None:
        """Open the memory (hold it, or be a client of its holder) in a thread worker."""
        self.app.run_worker(
            self._open,
            name="open_memory",
            thread=True,
            exclusive=True,
            group="memory",
            exit_on_error=False,
        )

    def _open(self) -> None:
        app = self.app
        try:
            session = app.session_factory(app.ctx)
        except SadieError as exc:
            app.post_message(MemoryFailed(exc))
            return
        except Exception as exc:  # noqa: BLE001 - no memory, no app: exit with one clear line
            app.post_message(MemoryFailed(SadieError(f"cannot open the memory: {exc}")))
            return
        app.session = session
        app.post_message(MemoryReady())

    def opened(self) -> None:
        """The memory is open: a message waiting for it goes, the status line says so, and a
        memory this app holds but cannot share says why."""
        app = self.app
        app.memory_ready.set()
        for status in app.status_lines():
            status.memory_state = "ready"
            status.via = app.via
        if app.ctx.sharing:
            app.notify(
                f"{app.ctx.sharing}: other sadie commands on this memory will say it is in use",
                title="Memory not shared",
                severity="warning",
            )

    def receive(self, message: KeeperNews) -> None:
        """What the keeper's threads posted, back on the app's loop."""
        match message:
            case MemoryEmpty():
                self._empty(message.empty)
            case MemoryChanged():
                self._changed(message.line)
            case MemoryFailed():
                self._failed(message.error)
            case EmbedderReady():
                self._embedder_ready(message.error)

    def _failed(self, error: BaseException) -> None:
        app = self.app
        app.exit_error = error
        for status in app.status_lines():
            status.memory_state = "failed"
        # One clear line on the terminal after the app closes (run.py prints it), no traceback.
        app.exit(return_code=int(getattr(error, "exit_code", 1)))

    # -- the embedding model ---------------------------------------------------------------------
    def warm(self) -> None:
        """Load the embedding model now, so no reply pays for it (or say it is ready)."""
        assert self.app.session is not None
        if self.warm_embedder:
            # A daemon thread, not a thread worker: those are joined at exit, and quitting
            # must not wait ~5 s for torch to finish importing.
            threading.Thread(target=self._warm, name="sadie-warm", daemon=True).start()
        elif self.app.session.embedder_ready:
            self.app.post_message(EmbedderReady())

    def _warm(self) -> None:
        session = self.app.session
        assert session is not None
        try:
            # The embedding model and the emotion centroids, so no reply pays for them.
            session.warm()
        except SadieError as exc:
            self.app.post_message(EmbedderReady(exc))
            return
        self.app.post_message(EmbedderReady())

    def _embedder_ready(self, error: BaseException | None) -> None:
        app = self.app
        # Torch and the embedding model add ~400,000 objects that live as long as the app.
        # Frozen, collections no longer walk them: otherwise each full one stalls the event
        # loop ~250 ms, typically as a long reply finishes (rendering it triggers one), and
        # the last one makes quitting take a second longer.
        gc.freeze()
        if error is not None:
            app.notify(
                f"{error}\nsearching by keywords and names only",
                title="Embedding model",
                severity="warning",
            )
        notice = app.session.embedder_notice if app.session is not None else None
        if error is None and notice:
            # The engine also printed it to stderr, which the running app captures.
            app.notify(notice, title="Embedding model", severity="warning")
        for status in app.status_lines():
            status.embedder_ready = error is None

    # -- keeping it current ----------------------------------------------------------------------
    def keep_current(self) -> None:
        """Start what keeps the memory current once it is open: idle reflection, the notes
        folders and other terminals' changes (when this app holds it), and the empty check."""
        app = self.app
        app.learning.started()
        if app.settings.notes and not app.via:  # a client's holder keeps the notes current
            self._watch_notes()
        if not app.via:  # the holder: another terminal's ingest comes through its socket
            app.ctx.on_change(self._changed_elsewhere)
        self.check_empty()

    def check_empty(self) -> None:
        """Ask, in a thread, whether the memory holds no notes yet (a new home): then the
        start screen and the status line say how to fill it, until notes come in."""
        self.app.run_worker(
            self._check_empty,
            name="check_empty",
            thread=True,
            exclusive=True,
            group="empty",
            exit_on_error=False,
        )

    def _check_empty(self) -> None:
        session = self.app.session
        if session is None:
            return
        try:
            chunks = session.call(GetStats()).counts.get("chunks")
        except SadieError:
            return  # the check only adds guidance; the memory's own errors show elsewhere
        self.app.post_message(MemoryEmpty(chunks == 0))

    def _empty(self, empty: bool) -> None:
        app = self.app
        if empty == app.memory_empty:
            return  # a memory with notes: the usual start screen, as it was
        app.memory_empty = empty
        for status in app.status_lines():
            status.memory_empty = empty
        for screen in app.screen_stack:
            for transcript in screen.query(Transcript):
                transcript.set_empty(empty)

    def _changed_elsewhere(self, line: str) -> None:
        self.app.post_message(MemoryChanged(line))  # from the holder's threads: post, never call

    def _changed(self, line: str) -> None:
        """Another terminal changed the memory: say what, and let open screens refresh."""
        app = self.app
        app.notify(line, title="Memory", timeout=6)
        for screen in app.screen_stack:
            screen.post_message(MemoryRefreshed())
        if app.memory_empty:
            self.check_empty()

    def _watch_notes(self) -> None:
        self.app.run_worker(
            self._watch,
            name="watch_notes",
            thread=True,
            exclusive=True,
            group="notes",
            exit_on_error=False,
        )

    def _watch(self) -> None:
        """Keep the configured notes folders current while the app holds the memory: what
        changed while it was closed first, then each batch of changes, one quiet notice each."""
        # lazy: textual.worker loads only when the notes are watched, off the start-up path
        from textual.worker import get_current_worker

        # lazy: watchfiles loads only when folders are watched
        from ..engine.ingest.watch import Batch, watch_notes

        app = self.app
        worker = get_current_worker()
        session = app.session
        assert session is not None

        def show(batch: Batch) -> None:
            if not worker.is_cancelled:
                app.call_from_thread(app.notify, batch.line, title="Notes", timeout=4)
                if app.memory_empty:
                    app.call_from_thread(self.check_empty)

        class Stop:  # watchfiles polls it: the worker is cancelled when the app exits
            def is_set(self) -> bool:
                return worker.is_cancelled

        missing = [str(p) for p in app.settings.notes if not p.exists()]
        if missing:
            show(Batch(error=f"no such folder to watch: {', '.join(missing)}"))
        try:
            watch_notes(session, app.settings.notes, show, stop=Stop())
        except SadieError as exc:
            show(Batch(error=exc.one_line()))
