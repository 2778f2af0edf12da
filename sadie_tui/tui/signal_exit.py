"""SIGTERM and SIGHUP (the terminal closed) end the app like ctrl+q: a running reply is kept
as ``interrupted``; run.py then prints one line and exits 128 + the signal.

If the orderly exit has not ended the process ``EXIT_GRACE`` seconds after the signal, a
watchdog ends it: once the terminal is gone, Textual's output thread can die writing to it,
and the driver then waits for that thread forever.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..launch import Launch
    from .learning import Learning

# Seconds an orderly exit after SIGTERM/SIGHUP may take before the process ends anyway.
EXIT_GRACE = 5.0


class SignalHost(Protocol):
    """What the signal exit needs of the app (``SadieApp``; a protocol, as ``learning.py``'s)."""

    ctx: Launch
    exit_error: BaseException | None
    learning: Learning

    # Textual's App gives these.
    @property
    def is_headless(self) -> bool: ...

    @property
    def exit(self) -> Callable[..., None]: ...


class SignalExit:
    """Owned by the app (``app.signal_exit``): ``catch`` once mounted, ``release`` on unmount."""

    def __init__(self, app: SignalHost) -> None:
        self.app = app
        self._taken: list[int] = []

    def catch(self) -> None:
        """From now on SIGTERM and SIGHUP end the app (see the module)."""
        # lazy: signals loads only when the app is mounted, off the start-up path
        from ..signals import on_loop

        self._taken = on_loop(asyncio.get_running_loop(), self._signalled)

    def release(self) -> None:
        """Give the signals back (the app is unmounting)."""
        # lazy: signals loads only when the app is mounted, off the start-up path
        from ..signals import off_loop

        off_loop(asyncio.get_running_loop(), self._taken)

    def _signalled(self, signum: int) -> None:
        # lazy: signals loads only when a signal came, off the start-up path
        from ..signals import Terminated

        app = self.app
        app.exit_error = Terminated(signum)
        app.learning.stop()
        app.exit(return_code=128 + signum)
        if not app.is_headless:
            threading.Thread(
                target=self._exit_anyway, args=(signum,), name="sadie-exit", daemon=True
            ).start()

    def _exit_anyway(self, signum: int) -> None:
        """End the process if the orderly exit has not, ``EXIT_GRACE`` seconds after the
        signal: a sadie with no screen must not go on holding the memory. By then the reply
        was saved (the app's workers are cancelled first); the memory is closed here."""

        # lazy: signals loads only when a signal came, off the start-up path
        from ..signals import Terminated

        time.sleep(EXIT_GRACE)  # a watchdog's grace period, not a wait for an event
        try:
            self.app.ctx.close()
        except Exception:  # noqa: BLE001 - leaving regardless; the data is committed
            pass
        try:
            sys.stderr.write(f"sadie: {Terminated(signum).one_line()}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # the terminal is gone
        os._exit(128 + signum)
