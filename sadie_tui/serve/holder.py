"""The API on the home's Unix socket, served from inside a process that holds the memory for
its own use (the TUI, a long ingest), so a second sadie reaches it there instead of meeting
the lock (``serve.remote``).

The server runs on its own thread and event loop: the holder's screen never waits on a
client's JSON, and a client never waits on the screen. Both share the one session (its
database serialises statements; every turn makes its own model client). Nothing is logged to
the terminal the holder draws on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import uvicorn
from starlette.applications import Starlette

from .app import create_app
from .server import GRACEFUL_SECONDS, Server
from .socket import Listener, listen, socket_path

if TYPE_CHECKING:
    from ..engine.session import SessionProtocol

QUIET_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "sadie.serve")


def _quiet() -> None:
    """No log line may reach the holder's terminal (a full-screen app draws there)."""
    for name in QUIET_LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(logging.NullHandler())
        logger.propagate = False


@dataclass
class Holder:
    """The socket server of a holding process; ``stop`` ends it and removes the file."""

    listener: Listener
    server: Server
    app: Starlette
    thread: threading.Thread = field(init=False)

    def __post_init__(self) -> None:
        self.thread = threading.Thread(
            target=self.server.run,
            kwargs={"sockets": [self.listener.sock]},
            name="sadie-holder",
            daemon=True,
        )

    @property
    def started(self) -> bool:
        return bool(self.server.started)

    def on_change(self, listener: Callable[[str], None]) -> None:
        """Have ``listener`` told, in one line, what a client's job changed ("3 notes added
        from another terminal"); it is called from the server's threads."""
        self.app.state.on_change = listener

    def stop(self) -> None:
        """Stop serving: running turns are kept as ``interrupted`` (the app's lifespan)."""
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(timeout=GRACEFUL_SECONDS + 2)
        self.listener.close()


def hold(session: SessionProtocol) -> Holder | None:
    """Serve ``session`` on ``<home>/sadie.sock`` from a background thread; ``None`` when
    another process already listens there. A socket that cannot be made raises ``OSError``."""
    listener = listen(socket_path(session.home))
    if listener is None:
        return None
    _quiet()
    app = create_app(session, warm=False)  # the holder warms its own embedder
    config = uvicorn.Config(
        app,
        loop="asyncio",
        lifespan="on",
        log_config=None,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
    )
    holder = Holder(listener, Server(config), app)
    holder.thread.start()
    return holder
