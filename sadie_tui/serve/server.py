"""Binding the socket and running uvicorn over the app (``sadie serve``; tests run the same
``build`` in a thread)."""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import uvicorn
from uvicorn.server import HANDLED_SIGNALS

from ..engine.errors import UsageError
from ..engine.session import SessionProtocol
from .app import create_app
from .guard import check_bind
from .socket import Listener, listen, socket_path

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
    port: int,
    *,
    host: str,
    token: str | None,
    warm: bool = True,
) -> Server:
    """The server over ``session``, as reached at ``host:port`` (the guard checks requests'
    ``Host`` against them; requests on a Unix socket pass it)."""
    app = create_app(session, host=host, port=port, token=token, warm=warm)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="asyncio",
        lifespan="on",
        # Errors only: uvicorn's warnings ("Invalid HTTP request received", with a traceback,
        # for any bytes that are not HTTP) are a library's lines, not sadie's.
        log_level="error",
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
    unix_path: Path | None = None,
) -> None:
    """Serve until ctrl+c or SIGTERM (uvicorn's own handling), on ``host:port`` (or, given
    ``unix_path``, on that Unix socket instead) and on the home's Unix socket
    (``serve.socket``) for other sadie processes on this memory."""
    token = check_bind(host, token)
    listeners: list[Listener] = []
    sock = bind(host, port) if unix_path is None else None
    try:
        if unix_path is not None:
            listeners.append(_listen_at(unix_path))
        path = socket_path(session.home)
        if unix_path is None or Path(unix_path).resolve() != path.resolve():
            try:
                home = listen(path)
            except OSError as exc:
                announce(f"not listening on {path}: {exc.strerror or exc}")
            else:
                if home is None:
                    announce(f"another process already listens on {path}; not listening there")
                else:
                    listeners.append(home)
        if sock is not None:
            port = int(sock.getsockname()[1])
            where = url_for(host, port)
        else:
            where = f"unix:{unix_path}"
        server = build(session, port, host=host, token=token)
        announce(f"serving on {where}")
        server.run(sockets=[*([sock] if sock is not None else []), *(x.sock for x in listeners)])
    finally:
        if sock is not None:
            sock.close()
        for listener in listeners:
            listener.close()


def _listen_at(path: Path) -> Listener:
    """``--socket PATH``: a listener there (0600, a stale file replaced), or a one-line error."""
    try:
        listener = listen(path)
    except OSError as exc:
        raise UsageError(f"cannot listen on {path}: {exc.strerror or exc}") from exc
    if listener is None:
        raise UsageError(f"another process already listens on {path}")
    return listener
