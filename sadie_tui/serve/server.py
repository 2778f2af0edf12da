"""Binding the socket and running uvicorn over the app (``sadie serve``; tests run the same
``build`` in a thread)."""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Iterator

import uvicorn
from uvicorn.server import HANDLED_SIGNALS

from ..engine.errors import UsageError
from ..engine.session import SessionProtocol
from .app import create_app
from .guard import check_bind
from .socket import listen, socket_path

GRACEFUL_SECONDS = 3


class Server(uvicorn.Server):
    """uvicorn's server, except that after ctrl+c or SIGTERM it returns instead of raising
    the signal again: the command then closes the memory and exits 0."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # signals reach the main thread only (tests run the server in a thread)
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in HANDLED_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def url_for(host: str, port: int) -> str:
    name = f"[{host}]" if ":" in host else host
    return f"http://{name}:{port}"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (0: any free port), or a one-line ``UsageError``."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise UsageError(f"cannot listen on {host}: {exc.strerror}") from exc
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"cannot listen on {url_for(host, port)}: {exc.strerror or exc}",
            fix="pick another --port" if exc.errno == 98 else None,
        ) from exc
    return sock


def build(
    session: SessionProtocol,
    sock: socket.socket,
    *,
    host: str,
    token: str | None,
    warm: bool = True,
) -> Server:
    port = int(sock.getsockname()[1])
    app = create_app(session, host=host, port=port, token=token, warm=warm)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="asyncio",
        lifespan="on",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
    )
    return Server(config)


def serve(
    session: SessionProtocol,
    *,
    host: str,
    port: int,
    token: str | None,
    announce: Callable[[str], None],
) -> None:
    """Serve until ctrl+c or SIGTERM (uvicorn's own handling), on ``host:port`` and on the
    home's Unix socket (``serve.socket``) for other sadie processes on this memory."""
    token = check_bind(host, token)
    sock = bind(host, port)
    unix = None
    try:
        path = socket_path(session.home)
        try:
            unix = listen(path)
        except OSError as exc:
            announce(f"not listening on {path}: {exc.strerror or exc}")
        else:
            if unix is None:
                announce(f"another process already listens on {path}; not listening there")
        server = build(session, sock, host=host, token=token)
        announce(f"serving on {url_for(host, int(sock.getsockname()[1]))}")
        server.run(sockets=[sock, *([unix.sock] if unix is not None else [])])
    finally:
        sock.close()
        if unix is not None:
            unix.close()
