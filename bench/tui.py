"""TUI benchmark: the real `sadie` binary in tmux at 120×40, polling ``capture-pane`` every
50 ms, against the Ollama-protocol test server.

1. launch → first painted screen, 5 runs: min / median / max;
2. launch → a message typed 1 s after paint → its first token on screen (5 runs);
3. 2,000 tokens streamed as fast as the server can: time until the whole reply is on screen
   divided by the time the server took to send it (plus the same at a 1 ms/token pace).

Run: ``.venv/bin/python bench/tui.py [--runs 5] [--home PATH]``. Without ``--home`` a small
memory is ingested into a temporary folder first (the same notes the tests use).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.ollama_server import FakeOllama, Reply, tokens_responder  # noqa: E402
from tests.support.tmux import Tmux, sadie_command  # noqa: E402

POLL = 0.05
SIZE = (120, 40)
PAINTED = re.compile(r"Talk to sadie")
QUESTION = "What did Maya say about moving?"
# The default responder's reply starts "On <date> …": its first piece is "On ".
FIRST_TOKEN = re.compile(r"█ On\b")


class Pane(Tmux):
    """The app in a ``SIZE`` pane, polled every ``POLL`` seconds, timed on the bench clock."""

    def __init__(self, env: dict[str, str]) -> None:
        super().__init__(f"sadie-bench-{os.getpid()}", record=False)
        self.env = env

    def launch(self) -> float:
        return self.start(sadie_command(), self.env, SIZE, linger=60)

    def wait(self, pattern: re.Pattern[str], timeout: float = 60.0) -> float:
        """When (``perf_counter``) ``pattern`` was first seen."""
        self.wait_for(pattern, timeout, POLL)
        return time.perf_counter()

    def close(self) -> None:
        self.keys("C-q")
        time.sleep(0.3)
        self.kill()
        time.sleep(0.2)


def build_home(folder: Path) -> Path:
    from tests.support.tui import copy_home

    return copy_home(folder)


def fresh_home(template: Path, scratch: Path, n: int) -> Path:
    home = scratch / f"home-{n}"
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(template, home)
    return home


def figures(values: list[float]) -> str:
    return (
        f"min {min(values):.3f} s · median {statistics.median(values):.3f} s · "
        f"max {max(values):.3f} s"
    )


class TimedServer(FakeOllama):
    """Records, on the bench clock, when each reply starts being sent (the request arrived)
    and when its last byte was written."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.started: list[float] = []
        self.finished: list[float] = []

    def _next_reply(self, body: dict) -> Reply:
        self.started.append(time.perf_counter())
        return super()._next_reply(body)


def _time_last_chunk() -> None:
    """Note when a streamed reply's terminating chunk goes out (bench-only instrumentation)."""
    from tests.support import ollama_server

    original = ollama_server._Handler._write_chunk

    def write_chunk(handler: ollama_server._Handler, data: bytes) -> None:
        original(handler, data)
        fake = handler.server.fake
        if data == b"" and isinstance(fake, TimedServer):
            fake.finished.append(time.perf_counter())

    ollama_server._Handler._write_chunk = write_chunk  # type: ignore[method-assign]


def server_send_seconds(url: str, body: dict, runs: int = 3) -> float:
    """How long the server takes to send one whole reply to a client that reads at once."""
    import httpx

    times = []
    for _ in range(runs):
        started = time.perf_counter()
        with httpx.stream("POST", f"{url}/api/chat", json=body, timeout=60) as response:
            for _line in response.iter_lines():
                pass
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--home", type=Path, help="an ingested home to copy for each run")
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument(
        "--parts", default="paint,first,stream", help="which measures to run (comma-separated)"
    )
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is not installed", file=sys.stderr)
        return 1

    _time_last_chunk()
    scratch = Path(tempfile.mkdtemp(prefix="sadie-bench-"))
    try:
        template = args.home or build_home(scratch / "template")
        base_env = {
            "SADIE_CONFIG": str(scratch / "config"),
            "PYTHONPATH": str(ROOT),
            "TERM": "xterm-256color",
            "COLORTERM": "truecolor",
        }

        def pane_for(n: int, url: str) -> Pane:
            home = fresh_home(template, scratch, n)
            return Pane({**base_env, "SADIE_HOME": str(home), "OLLAMA_HOST": url})

        print(
            f"sadie TUI benchmark · tmux {SIZE[0]}×{SIZE[1]} · capture-pane every {POLL * 1000:.0f} ms"
        )

        with TimedServer() as server:
            parts = set(args.parts.split(","))
            # 1. first paint
            paints = []
            for n in range(args.runs if "paint" in parts else 0):
                pane = pane_for(n, server.url)
                started = pane.launch()
                paints.append(pane.wait(PAINTED) - started)
                pane.close()
            if paints:
                print(f"launch → first paint ({args.runs} runs): {figures(paints)}")

            # 2. first token of a message typed 1 s after paint
            firsts = []
            for n in range(args.runs if "first" in parts else 0):
                pane = pane_for(n, server.url)
                started = pane.launch()
                pane.wait(PAINTED)
                time.sleep(1.0)
                pane.keys(QUESTION, literal=True)
                pane.keys("Enter")
                entered = time.perf_counter()
                firsts.append(pane.wait(FIRST_TOKEN) - entered)
                pane.close()
            if firsts:
                print(
                    f"Enter → first token, message typed 1 s after paint ({args.runs} runs): "
                    f"{figures(firsts)}"
                )

        # 3. streaming 2,000 tokens
        for pace in (0.0, 0.001) if "stream" in parts else ():
            responder = tokens_responder(args.tokens, pace)
            with TimedServer(responder=responder) as server:
                body = {
                    "model": "qwen3:1.7b",
                    "stream": True,
                    "messages": [{"role": "user", "content": "hi"}],
                }
                alone = server_send_seconds(server.url, body)
                server.started.clear()
                server.finished.clear()
                pane = pane_for(99, server.url)
                pane.launch()
                pane.wait(PAINTED)
                pane.wait(re.compile(r"online"))
                # Steady state: the embedding model has finished loading in the background.
                deadline = time.perf_counter() + 60
                while "loading" in pane.screen() and time.perf_counter() < deadline:
                    time.sleep(POLL)
                pane.keys(QUESTION, literal=True)
                pane.keys("Enter")
                done = pane.wait(re.compile(r"verbatim|paraphrase|cites no notes"), timeout=300)
                pane.close()
                shown = done - server.started[-1]
                send = server.finished[-1] - server.started[-1]
                label = "as fast as it can" if pace == 0 else f"{pace * 1000:.0f} ms/token"
                print(
                    f"{args.tokens} tokens, server {label}: the server took {send:.3f} s to send "
                    f"it ({alone:.3f} s to a bare client), whole reply on screen {shown:.3f} s "
                    f"after the request → ratio {shown / send:.2f}"
                )
    finally:
        subprocess.run(
            ["tmux", "-L", f"sadie-bench-{os.getpid()}", "kill-server"], capture_output=True
        )
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    threading.excepthook = lambda args: None  # the server's threads may outlive a killed client
    sys.exit(main())
