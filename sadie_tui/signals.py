"""SIGTERM and SIGHUP, handled like ctrl+c by every face: what is running stops at once (a
streaming reply is kept as ``interrupted``), then one line and exit 128 + the signal."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import TypeVar

T = TypeVar("T")
NAMES = ("SIGTERM", "SIGHUP")


class Terminated(BaseException):
    """A signal asked sadie to stop (``signum``). A ``BaseException``: no ``except Exception``
    on the way swallows it, and click does not turn it into "aborted"."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    def one_line(self) -> str:
        return f"stopped by {signal.Signals(self.signum).name}"

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def signals() -> list[int]:
    return [int(getattr(signal, name)) for name in NAMES if hasattr(signal, name)]


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


def install() -> None:
    """Outside an event loop (startup, blocking commands): the signals raise ``Terminated``."""
    for sig in signals():
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _raise)


def on_loop(loop: asyncio.AbstractEventLoop, callback: Callable[[int], None]) -> list[int]:
    """While ``loop`` runs, SIGTERM and SIGHUP call ``callback(signum)``; the signals taken
    (give them back with ``off_loop``)."""
    taken = []
    for sig in signals():
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, callback, sig)
            taken.append(sig)
    return taken


def off_loop(loop: asyncio.AbstractEventLoop, taken: list[int]) -> None:
    for sig in taken:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(sig)
    taken.clear()


async def _cancelled_by_signals(coro: Awaitable[T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    caught: list[int] = []

    def stop(sig: int) -> None:
        caught.append(sig)
        if task is not None:
            task.cancel()

    taken = on_loop(loop, stop)
    try:
        return await coro
    except asyncio.CancelledError:
        if caught:
            raise Terminated(caught[0]) from None
        raise
    finally:
        off_loop(loop, taken)
        install()  # removing a loop handler leaves the default: raise Terminated again


def run(coro: Awaitable[T]) -> T:
    """``asyncio.run``, where SIGTERM and SIGHUP cancel the work the way ctrl+c does (the
    engine keeps a streaming reply as ``interrupted``) and then raise ``Terminated``."""
    return asyncio.run(_cancelled_by_signals(coro))
