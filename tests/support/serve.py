"""The real `sadie serve` server (uvicorn over the Starlette app) on a free loopback port, in
a background thread, for tests; waits on ``server.started``, never on a sleep."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sadie_tui.serve.server import bind, build, url_for

START_TIMEOUT = 60.0


@dataclass
class Running:
    url: str
    port: int
    host: str


@contextmanager
def running(
    session, *, host: str = "127.0.0.1", token: str | None = None, warm: bool = False
) -> Iterator[Running]:
    sock = bind(host, 0)
    port = int(sock.getsockname()[1])
    server = build(session, port, host=host, token=token, warm=warm)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # surfaced by the waiting test
            failure.append(exc)

    thread = threading.Thread(target=run, name="sadie-serve", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if failure or not thread.is_alive():
            raise RuntimeError(f"the server did not start: {failure}")
        if time.monotonic() > deadline:
            raise TimeoutError("the server did not start in time")
        thread.join(0.02)
    try:
        yield Running(url_for(host, port), port, host)
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
