"""Issue #34, item 1: an empty memory says so, and how to fill it (`sadie ingest PATH`,
`notes = [...]` in config.toml, the demo), in the reply, `--ask` and the search; the start
screen's part is in ``tests/test_tmux_first_hour.py``."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from sadie_tui.config import load_settings
from sadie_tui.engine.empty_memory import FILL_NOTICE
from sadie_tui.engine.events import Status, Token
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.session import Session
from tests.support.turns import run_chat

ROOT = Path(__file__).resolve().parents[1]
WAYS = ("`sadie ingest PATH`", 'notes = ["~/notes"]', "config.toml", "`sadie --demo`")


def test_an_offline_reply_on_an_empty_memory_says_how_to_fill_it(tmp_home, embedder, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    with Memory.open(tmp_home, embedder=embedder) as mem:
        events = run_chat(Session(mem, load_settings()), "what did I do last weekend?")
    reply = "".join(e.value for e in events if isinstance(e, Token))
    assert reply.startswith("Your memory is empty")
    assert all(way in reply for way in WAYS), reply
    assert "matches this closely enough" not in reply
    assert "No language model is reachable right now" in reply  # said, after the guidance
    assert FILL_NOTICE in [e.value for e in events if isinstance(e, Status)]
    second = run_chat_again(tmp_home, embedder, events)
    assert second.startswith("Your memory is empty") and "No language model" not in second


def run_chat_again(home: Path, embedder, first: list) -> str:
    with Memory.open(home, embedder=embedder) as mem:
        events = run_chat(
            Session(mem, load_settings()), "and yesterday?", conversation_id=first[0].conversation_id
        )
    return "".join(e.value for e in events if isinstance(e, Token))


def test_a_model_reply_on_an_empty_memory_has_the_notice(server, tmp_home, embedder):
    with Memory.open(tmp_home, embedder=embedder) as mem:
        events = run_chat(Session(mem, load_settings()), "what did I do yesterday?")
    assert FILL_NOTICE in [e.value for e in events if isinstance(e, Status)]


def test_ask_on_an_empty_memory_says_how_to_fill_it(tmp_home, embedder):
    with Memory.open(tmp_home, embedder=embedder) as mem:
        result = asyncio.run(Session(mem, load_settings()).ask("anything?"))
    assert result.answer == "there is nothing in the memory yet to answer from"
    assert FILL_NOTICE in result.notices
    assert all(way in FILL_NOTICE for way in WAYS)


def test_the_ask_flag_prints_the_guidance(tmp_path):
    env = {
        **os.environ,
        "SADIE_HOME": str(tmp_path / "home"),
        "SADIE_CONFIG": str(tmp_path / "config"),
        "OLLAMA_HOST": "http://127.0.0.1:9",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", "--ask", "what did I do last weekend?"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "there is nothing in the memory yet to answer from" in done.stdout
    assert "the memory is empty: fill it with `sadie ingest PATH`" in done.stderr
    assert "sadie --demo" in done.stderr
