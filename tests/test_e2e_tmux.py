"""End to end: the real `sadie` binary in tmux (120×40) on a small ingested memory, against the
Ollama-protocol test server running standalone. Types a question, waits for the reply and
reads the screen with ``capture-pane``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.tmux import Tmux, quote, sadie_command
from tests.support.tui import copy_home

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def server() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.ollama_server", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on "), line
        yield line.removeprefix("listening on ")
    finally:
        proc.terminate()
        proc.wait(timeout=5)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    t = Tmux(f"sadie-e2e-{os.getpid()}-{tmp_path.name}")
    try:
        yield t
    finally:
        t.kill()


@pytest.fixture
def env(tmp_path: Path, server: str) -> dict[str, str]:
    home = copy_home(tmp_path)
    return {
        "SADIE_HOME": str(home),
        "SADIE_CONFIG": str(tmp_path / "config"),
        "OLLAMA_HOST": server,
        "PYTHONPATH": str(ROOT),
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
    }


def test_a_question_typed_into_the_real_binary_gets_a_cited_reply(
    tmux: Tmux, env: dict[str, str]
) -> None:
    tmux.start(sadie_command(), env)
    tmux.wait_for(r"Talk to sadie", timeout=20)
    tmux.keys("What did Maya say about moving?", literal=True)
    tmux.keys("Enter")
    screen = tmux.wait_for(r"seems to be the heart of it", timeout=30)
    assert "you wrote:" in screen
    screen = tmux.wait_for(r"verbatim", timeout=10)  # the citation sidebar
    screen = tmux.wait_for(r"tok/s", timeout=10)  # done: the status line has the speed
    assert "Sources" in screen
    assert "What did Maya say about moving?" in screen
    for frame in tmux.history:
        assert "@@" not in frame and "CITATIONS" not in frame and "<think" not in frame
    assert re.search(r"online", screen)
    tmux.keys("C-q")
    # The conversation was stored (read once the app has let go of the file).
    import duckdb

    deadline = time.monotonic() + 10
    while True:
        try:
            con = duckdb.connect(str(Path(env["SADIE_HOME"]) / "sadie.duckdb"), read_only=True)
            break
        except duckdb.Error:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    rows = con.execute("SELECT role, status FROM messages ORDER BY created_at").fetchall()
    con.close()
    assert rows == [("user", "complete"), ("assistant", "complete")]


def test_a_question_on_the_command_line_opens_already_streaming(
    tmux: Tmux, env: dict[str, str]
) -> None:
    tmux.start([*sadie_command(), "How was the pottery class?"], env)
    screen = tmux.wait_for(r"seems to be the heart of it", timeout=30)
    assert "How was the pottery class?" in screen
    tmux.keys("C-q")


def test_a_second_sadie_gets_the_lock_message_not_a_traceback(
    tmux: Tmux, env: dict[str, str]
) -> None:
    tmux.start(sadie_command(), env)
    tmux.wait_for(r"online|offline", timeout=20)  # the first holds the memory now
    flags = [x for key, value in env.items() for x in ("-e", f"{key}={value}")]
    shell = " ".join(quote(c) for c in sadie_command()) + "; echo EXIT=$?; sleep 30"
    tmux.run("new-window", "-t", tmux.session, "-n", "second", *flags, shell)
    deadline = time.monotonic() + 30
    text = ""
    while time.monotonic() < deadline:
        text = tmux.run("capture-pane", "-p", "-t", f"{tmux.session}:second", check=False).stdout
        if "EXIT=" in text:
            break
        time.sleep(0.1)
    assert "EXIT=3" in text, text
    assert "in use" in text
    assert "Traceback" not in text
