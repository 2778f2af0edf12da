"""SIGTERM and SIGHUP end sadie like ctrl+c (issue 15, item 6): the reply streaming at that
moment is kept as ``interrupted`` with what was shown, one line says why, and the exit status
is 128 + the signal. Real subprocesses against the project's Ollama-protocol server; the TUI
in tmux. The waits are on the processes' own output, bounded but generous."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.support.ollama_server import FakeOllama, Reply
from tests.support.tmux import Tmux, sadie_command
from tests.support.tui import copy_home

ROOT = Path(__file__).resolve().parents[1]
WAIT = 120.0


@pytest.fixture
def slow() -> Iterator[FakeOllama]:
    """A model that sends one word, then a word every two seconds."""
    with FakeOllama() as server:
        words = [f"word{n} " for n in range(60)]
        server.queue(Reply(words, delay=2.0))
        yield server


def _env(home: Path, tmp: Path, server: FakeOllama) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(
        SADIE_HOME=str(home),
        SADIE_CONFIG=str(tmp / "config"),
        OLLAMA_HOST=server.url,
        PYTHONPATH=str(ROOT),
        SADIE_REASONER="ollama",
    )
    return env


def _reply_row(home: Path) -> tuple[str, str]:
    deadline = time.monotonic() + 30
    while True:
        try:
            con = duckdb.connect(str(home / "sadie.duckdb"), read_only=True)
            break
        except duckdb.Error:  # still closing
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    try:
        row = con.execute(
            "SELECT status, content FROM messages WHERE role = 'assistant'"
            " ORDER BY created_at DESC LIMIT 1"
        ).fetchone()
    finally:
        con.close()
    assert row is not None
    return row[0], row[1]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_mid_reply_keeps_it_interrupted(tmp_path, slow, sig) -> None:
    home = copy_home(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sadie_tui.cli", "chat", "How was the pottery class?"],
        cwd=ROOT,
        env=_env(home, tmp_path, slow),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=0,
    )
    try:
        assert proc.stdout is not None
        seen = ""
        deadline = time.monotonic() + WAIT
        while "word1" not in seen and time.monotonic() < deadline:
            seen += proc.stdout.read(1)
        assert "word1" in seen, seen
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, err
    assert err.strip().splitlines()[-1] == f"sadie: stopped by {signal.Signals(sig).name}"
    assert "Traceback" not in err
    status, content = _reply_row(home)
    assert status == "interrupted"
    assert content.startswith("word0 word1")


def _the_app_under(pid: int) -> int:
    """The sadie process among ``pid``'s descendants (not the shells that started it)."""
    todo, found = [pid], []
    while todo:
        parent = todo.pop()
        children = subprocess.run(
            ["ps", "-o", "pid=,args=", "--ppid", str(parent)], capture_output=True, text=True
        ).stdout.splitlines()
        for line in children:
            child, _, args = line.strip().partition(" ")
            todo.append(int(child))
            if "sadie" in args and not args.startswith(("sh ", "/bin/sh ", "bash ")):
                found.append(int(child))
    assert found, f"no sadie process under {pid}"
    return found[0]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_sigterm_to_the_app_mid_reply_keeps_it_interrupted(tmp_path, slow) -> None:
    home = copy_home(tmp_path)
    env = _env(home, tmp_path, slow)
    env.update(TERM="xterm-256color")
    tmux = Tmux(f"sadie-sig-{os.getpid()}-{tmp_path.name}")
    try:
        shell = " ".join(sadie_command()) + "; echo EXIT=$?"
        tmux.start(["sh", "-c", shell], env)
        tmux.wait_for(r"Talk to sadie", timeout=WAIT)
        tmux.wait_for(r"online", timeout=WAIT)
        tmux.keys("How was the pottery class?", literal=True)
        tmux.keys("Enter")
        tmux.wait_for(r"word1", timeout=WAIT)
        pane = tmux.run("display-message", "-p", "-t", tmux.session, "#{pane_pid}").stdout.strip()
        app = _the_app_under(int(pane))
        os.kill(app, signal.SIGTERM)
        screen = tmux.wait_for(r"EXIT=\d+", timeout=WAIT)
        assert "EXIT=143" in screen and "sadie: stopped by SIGTERM" in screen, screen
        assert "Traceback" not in screen
    finally:
        tmux.kill()
    status, content = _reply_row(home)
    assert status == "interrupted" and content.startswith("word0")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_closing_the_terminal_as_a_reply_ends_leaves_no_sadie_behind(tmp_path) -> None:
    """The terminal window closed (tmux gone: SIGHUP, and the terminal with it) just as a
    reply finishes. Textual's output thread can die on the closed terminal and its driver then
    waited for it forever: a sadie with no screen, holding the memory. Now the process ends
    within the grace period, the reply kept and the socket removed."""
    home = copy_home(tmp_path)
    with FakeOllama() as server:
        server.queue(Reply(["Here is a reply.", " Done."], delay=0.05))
        env = _env(home, tmp_path, server)
        env.update(TERM="xterm-256color")
        tmux = Tmux(f"sadie-hup-{os.getpid()}-{tmp_path.name}")
        try:
            tmux.start(sadie_command(), env)
            tmux.wait_for(r"Talk to sadie", timeout=WAIT)
            tmux.keys("How was the pottery class?", literal=True)
            tmux.keys("Enter")
            tmux.wait_for(r"Done\.", timeout=WAIT)
            pane = tmux.run("display-message", "-p", "-t", tmux.session, "#{pane_pid}")
            app = _the_app_under(int(pane.stdout.strip()))
        finally:
            tmux.kill()
        deadline = time.monotonic() + WAIT
        while _alive(app):
            assert time.monotonic() < deadline, f"sadie (pid {app}) is still running"
            time.sleep(0.1)
    status, content = _reply_row(home)
    assert status in ("interrupted", "complete") and content.startswith("Here is a reply.")
    assert not (home / "sadie.sock").exists()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat")
    # a zombie (exited, not yet reaped by the pane's shell) counts as gone
    return not (state.exists() and state.read_text().split(") ")[-1].startswith("Z"))
