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
        "SADIE_CACHE": os.environ["SADIE_CACHE"],  # the session's exported model
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


def _window(tmux: Tmux, env: dict[str, str], name: str, command: list[str]) -> None:
    flags = [x for key, value in env.items() for x in ("-e", f"{key}={value}")]
    shell = " ".join(quote(c) for c in command) + "; echo EXIT=$?; sleep 60"
    tmux.run("new-window", "-d", "-t", tmux.session, "-n", name, *flags, shell)


def _wait_in(tmux: Tmux, window: str, pattern: str, timeout: float = 90.0) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = tmux.run("capture-pane", "-p", "-t", f"{tmux.session}:{window}", check=False).stdout
        if re.search(pattern, text):
            return text
        time.sleep(0.1)
    raise AssertionError(f"{pattern!r} never appeared in {window}; it showed:\n{text}")


def test_while_the_app_is_open_other_sadies_work_through_it(
    tmux: Tmux, env: dict[str, str]
) -> None:
    """The TUI holds the memory and serves it on its socket: a headless --ask, a second TUI
    and the conversation list all work from other terminals; only compact says why not."""
    tmux.start(sadie_command(), env)
    tmux.wait_for(r"online|offline", timeout=60)  # the first holds the memory now
    sock = Path(env["SADIE_HOME"]) / "sadie.sock"
    deadline = time.monotonic() + 60
    while not sock.is_socket() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sock.is_socket()

    _window(tmux, env, "ask", [*sadie_command(), "--ask", "How was the pottery class?"])
    text = _wait_in(tmux, "ask", r"EXIT=\d+")
    assert "EXIT=0" in text and "Traceback" not in text, text

    _window(tmux, env, "second", sadie_command())
    text = _wait_in(tmux, "second", r"via another sadie \(pid \d+\)")
    tmux.keys("-t", f"{tmux.session}:second", "What did Maya say about moving?", literal=True)
    tmux.keys("-t", f"{tmux.session}:second", "Enter")
    text = _wait_in(tmux, "second", r"seems to be the heart of it")
    _wait_in(tmux, "second", r"verbatim")  # its citations came through the socket too
    tmux.keys("-t", f"{tmux.session}:second", "C-q")
    text = _wait_in(tmux, "second", r"EXIT=\d+")
    assert "EXIT=0" in text, text

    _window(tmux, env, "list", [*sadie_command(), "conversations", "list"])
    text = _wait_in(tmux, "list", r"EXIT=\d+")
    assert "EXIT=0" in text and "Maya" in text, text  # the second TUI's conversation

    _window(tmux, env, "compact", [*sadie_command(), "compact"])
    text = _wait_in(tmux, "compact", r"EXIT=\d+")
    assert "EXIT=3" in text and "compact needs the memory to itself" in text, text
    assert "Traceback" not in text

    tmux.keys("C-q")
    deadline = time.monotonic() + 60
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sock.exists()  # removed on exit


def test_the_app_is_a_client_while_sadie_serve_holds_the_memory(
    tmux: Tmux, env: dict[str, str]
) -> None:
    serve = subprocess.Popen(
        [*sadie_command(), "serve", "--port", "0"],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stderr is not None
        line = serve.stderr.readline()  # waits for the server to say it is up
        assert "serving on" in line, line
        tmux.start(sadie_command(), env)
        tmux.wait_for(r"via another sadie \(pid \d+\)", timeout=60)
        tmux.keys("What did Maya say about moving?", literal=True)
        tmux.keys("Enter")
        tmux.wait_for(r"seems to be the heart of it", timeout=60)
        tmux.wait_for(r"verbatim", timeout=30)
        tmux.keys("C-q")
    finally:
        serve.terminate()
        assert serve.wait(timeout=30) == 0


def test_an_emoji_in_the_message_box_keeps_its_border_whole(
    tmux: Tmux, env: dict[str, str]
) -> None:
    # Issue 28, item 9: tmux draws ❤️ in one cell and 👩‍💻 in four where Rich counts two each,
    # so the box was drawn a column off and left a stray letter beside its border ("│i").
    from rich.cells import cell_len

    tmux.start(sadie_command(), env)
    tmux.wait_for(r"Talk to sadie", timeout=20)
    tmux.keys("I ❤️ my 👩‍💻 job and more text", literal=True)
    screen = tmux.wait_for(r"job and more text", timeout=20)
    lines = screen.splitlines()
    row = next(i for i, line in enumerate(lines) if "job and more text" in line)
    typed, top = lines[row], lines[row - 1]
    assert "I ❤ my 👩💻 job and more text" in typed  # kept without joiner and selector
    right = typed.rindex("│")
    assert typed[right + 1] == " "  # nothing left behind beside the border
    assert cell_len(typed[: right + 1]) == top.index("╮") + 1  # where the box's top ends
    tmux.keys("C-q")
