"""Issue #34, the first hour, as a person meets it: the real `sadie` binary in tmux on a fresh
home, with no model server, at the sizes the issue names (120×40, 80×24, 60×20)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.tmux import Tmux, sadie_command

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    t = Tmux(f"sadie-first-{os.getpid()}-{tmp_path.name}")
    try:
        yield t
    finally:
        t.kill()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A fresh home (nothing ingested) and no model server."""
    return {
        "SADIE_HOME": str(tmp_path / "home"),
        "SADIE_CONFIG": str(tmp_path / "config"),
        "SADIE_CACHE": os.environ["SADIE_CACHE"],  # the session's exported model
        "OLLAMA_HOST": "http://127.0.0.1:9",
        "PYTHONPATH": str(ROOT),
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
    }


@pytest.mark.parametrize("size", [(60, 20), (120, 40)])
def test_an_empty_memory_says_how_to_fill_it(
    tmux: Tmux, env: dict[str, str], size: tuple[int, int]
) -> None:
    """Item 1: the start screen, the status line and the reply say the memory is empty and
    the three ways to fill it. Item 6: the offline notice leaves the message box in sight."""
    tmux.start(sadie_command(), env, size=size)
    # The first run asks whether the new memory is encrypted; escape keeps it plain.
    screen = tmux.wait_for(r"Encrypt your memory\?", timeout=60)
    assert "Keep it plain" in screen
    tmux.keys("Escape")
    screen = tmux.wait_for(r"The model is not available", timeout=30)
    # The notice shows, and the message box and the status line are whole beside it.
    assert "Talk to sadie… (enter sends, ctrl+j new line)" in screen
    assert "● offline" in screen
    lines = screen.splitlines()
    notice = [n for n, line in enumerate(lines) if "▌" in line]
    box = next(n for n, line in enumerate(lines) if "Talk to sadie" in line)
    assert max(notice) < box - 1, screen  # above the box's top edge
    assert len(notice) <= 8, screen
    screen = tmux.wait_for(r"try it all on an invented life", timeout=30)
    assert "Your memory is empty" in screen
    assert "sadie ingest ~/notes" in screen
    assert 'notes = ["~/notes"] in config.toml' in screen
    assert "sadie --demo" in screen
    assert "memory empty" in screen.splitlines()[-2]  # the status line
    tmux.keys("what did I do last weekend?", literal=True)
    tmux.keys("Enter")
    # The offline reply streams in: wait for the whole of it, not its first words.
    reply = tmux.wait_for_words(
        "Your memory is empty, so I have none", "sadie ingest PATH", "opens a year", timeout=30
    )
    assert "sadie --demo" in reply
    assert "matches this closely enough" not in reply


def test_f4_at_60x20_types_the_address_in_sight(tmux: Tmux, env: dict[str, str]) -> None:
    """Item 6: F4's address box is whole on a 60×20 screen and has the cursor, so the new
    address is typed where it can be read; the footer keeps F1 whole."""
    tmux.start(sadie_command(), env, size=(60, 20))
    tmux.wait_for(r"Keep it plain", timeout=60)  # the first run's question (see above)
    tmux.keys("Escape")
    screen = tmux.wait_for(r"try it all on an invented life", timeout=30)
    assert screen.splitlines()[-1].rstrip().endswith("f1 Help")
    tmux.keys("F4")
    tmux.wait_for(r"Cannot list the models", timeout=15)
    tmux.keys("C-u")
    tmux.wait_for(r"Address ▊ *http://127\.0\.0\.1:11434", timeout=10)  # the placeholder
    tmux.keys("http://127.0.0.1:11", literal=True)
    screen = tmux.wait_for(r"Address ▊ *http://127\.0\.0\.1:11 ", timeout=10)
    lines = screen.splitlines()
    row = next(n for n, line in enumerate(lines) if "http://127.0.0.1:11" in line)
    assert "▔" in lines[row - 1] and "▁" in lines[row + 1]  # the box's both edges
