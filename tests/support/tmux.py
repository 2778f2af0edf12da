"""The real ``sadie`` binary in a private tmux server: one session, read with ``capture-pane``.

Shared by the end-to-end test (``tests/test_e2e_tmux.py``) and the TUI benchmark
(``bench/tui.py``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path


def sadie_command() -> list[str]:
    binary = Path(sys.executable).parent / "sadie"
    return [str(binary)] if binary.exists() else [sys.executable, "-m", "sadie_tui.cli"]


def quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


class Tmux:
    """One private tmux server (its own socket) holding one session.

    With ``record``, every frame ``wait_for`` reads is kept in ``history`` (to check nothing
    leaked in between)."""

    def __init__(self, socket: str, *, record: bool = True) -> None:
        self.socket = socket
        self.session = "sadie"
        self.history: list[str] = []
        self.record = record

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        # The tmux server copies this environment into its panes: a COLUMNS/LINES left over
        # from this process would pin the app to that size whatever the pane's.
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        return subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            check=check,
            env=env,
        )

    def start(
        self,
        command: list[str],
        env: dict[str, str],
        size: tuple[int, int] = (120, 40),
        linger: int = 30,
    ) -> float:
        """Run ``command`` in a new session; returns when (``perf_counter``) it was started.
        The pane stays ``linger`` seconds after the command ends, to be read."""
        flags = [x for key, value in env.items() for x in ("-e", f"{key}={value}")]
        shell = " ".join(quote(c) for c in command) + f"; sleep {int(linger)}"
        started = time.perf_counter()
        self.run(
            "new-session", "-d", "-s", self.session, "-x", str(size[0]), "-y", str(size[1]),
            *flags, shell,
        )  # fmt: skip
        return started

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.session, check=False).stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.run("send-keys", "-t", self.session, *(["-l"] if literal else []), *keys)

    def wait_for(
        self, pattern: str | re.Pattern[str], timeout: float = 30.0, every: float = 0.05
    ) -> str:
        """Poll the screen every ``every`` seconds until ``pattern`` shows; returns that frame."""
        return self._poll(
            lambda text: re.search(pattern, text) is not None, repr(pattern), timeout, every
        )

    def wait_for_words(self, *needles: str, timeout: float = 30.0, every: float = 0.05) -> str:
        """Poll until every needle shows in the screen read as one line (runs of white space as
        one space): for text that streams in and may wrap; returns that line."""
        return self._poll(
            lambda text: all(needle in text for needle in needles),
            f"all of {needles!r}",
            timeout,
            every,
            read=lambda: " ".join(self.screen().split()),
        )

    def _poll(
        self,
        shows: Callable[[str], bool],
        what: str,
        timeout: float,
        every: float,
        read: Callable[[], str] | None = None,
    ) -> str:
        """Read the screen (``read``: as it wants it) every ``every`` seconds until ``shows``
        says yes; the last screen read is in the error when it never does."""
        deadline = time.perf_counter() + timeout
        text = ""
        while time.perf_counter() < deadline:
            text = (read or self.screen)()
            if self.record and read is None:  # frames as shown, not a line made of one
                self.history.append(text)
            if shows(text):
                return text
            time.sleep(every)
        raise AssertionError(f"{what} never appeared; the screen was:\n{text}")

    def kill(self) -> None:
        socket = self.run("display-message", "-p", "#{socket_path}", check=False).stdout.strip()
        self.run("kill-server", check=False)
        if socket:
            Path(socket).unlink(missing_ok=True)  # tmux leaves it behind after kill-server
