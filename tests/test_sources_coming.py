"""A model that streams its citations slowly (issue 28, item 3): the prose was complete at
2.4 s and the sources came at 10.9 s, and for those 8.5 s the turn said nothing. Now a
``status`` event "writing its sources…" comes as soon as the marker is seen, and a turn
stopped then keeps its reply as complete, with the citations that had arrived checked.

The project's Ollama-protocol server holds the tail behind a gate the test opens (never a
sleep); a real DuckDB memory, the real engine, ``sadie chat --ndjson`` as a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from contextlib import aclosing

from sadie_tui.config import load_settings
from sadie_tui.engine import conversations as conv
from sadie_tui.engine.events import (
    WRITING_SOURCES,
    CitationsEvent,
    Done,
    Meta,
    Status,
    Token,
    to_json,
)
from sadie_tui.engine.requests import ChatTurn
from sadie_tui.engine.session import Session
from tests.support.ollama_server import Reply
from tests.support.turns import episode_of

PROSE = "You shipped the auth refactor, and it felt slower than it should have been."
QUESTION = "How did the Warden refactor go?"


def entry(ep: str, quote: str) -> str:
    return json.dumps({"episode": ep, "quote": quote, "support": "verbatim"})


def slow_tail(ep: str, gate: threading.Event) -> Reply:
    """The prose, then the marker with one complete citation and the start of a second; the
    rest of the tail waits for ``gate``."""
    return Reply(
        [
            PROSE[:30],
            PROSE[30:],
            "\n@@CITATIONS@@\n[" + entry(ep, "Shipped the auth refactor") + ', {"episode": "',
            ep + '", "quote": "Felt slower than it should have been", "support": "verbatim"}]',
        ],
        gate_after=3,
        gate=gate,
    )


def test_writing_its_sources_comes_as_soon_as_the_marker_is_seen(server, memory):
    ep, _ = episode_of(memory, "Warden retro")
    gate = threading.Event()
    server.queue(slow_tail(ep, gate))
    session = Session(memory, load_settings())
    seen: list = []

    async def go() -> None:
        async with aclosing(session.chat(ChatTurn(QUESTION))) as events:
            async for event in events:
                seen.append(event)
                if isinstance(event, Status) and event.value == WRITING_SOURCES:
                    # The rest of the tail is still held by the server: the event came
                    # from the marker, not from the end of the stream.
                    assert not gate.is_set()
                    gate.set()

    try:
        asyncio.run(go())
    finally:
        gate.set()
    kinds = [type(e).__name__ for e in seen]
    status_at = next(i for i, e in enumerate(seen) if isinstance(e, Status) and e.writing_sources)
    tokens = [i for i, e in enumerate(seen) if isinstance(e, Token)]
    assert tokens and max(tokens) < status_at, kinds  # no prose after it
    assert "".join(e.value for e in seen if isinstance(e, Token)) == PROSE
    citations = next(e for e in seen if isinstance(e, CitationsEvent))
    assert status_at < seen.index(citations) and isinstance(seen[-1], Done)
    assert len(citations.value) == 2  # the whole tail, once released
    assert to_json(seen[status_at]) == {"type": "status", "value": "writing its sources…"}


def test_a_turn_stopped_while_writing_its_sources_keeps_a_complete_checked_reply(server, memory):
    ep, _ = episode_of(memory, "Warden retro")
    gate = threading.Event()  # never opened: the second citation never arrives
    server.queue(slow_tail(ep, gate))
    session = Session(memory, load_settings())

    async def go() -> str:
        meta = None
        async with aclosing(session.chat(ChatTurn(QUESTION))) as events:
            async for event in events:
                meta = meta or (event if isinstance(event, Meta) else None)
                if isinstance(event, Status) and event.writing_sources:
                    break  # the person pressed Esc
        assert meta is not None
        return meta.message_id

    try:
        message_id = asyncio.run(go())
    finally:
        gate.set()
    row = conv.get_message(memory.db, message_id)
    assert row.status == "complete"
    assert row.content == PROSE
    assert [(c["episode_id"], c["support"]) for c in row.citations] == [(ep, "verbatim")]
    assert row.metadata["stopped_in_sources"] == 1
    assert row.metadata["citation_pass"] is None  # no pass: what had arrived was checked
    assert "unsupported" in row.metadata  # the details were checked like a whole reply's
    # Only the reply itself was asked for: no citation pass went to the model.
    assert not [r for r in server.requests if r.get("format")]


def test_a_turn_stopped_during_the_prose_is_still_interrupted(server, memory):
    ep, _ = episode_of(memory, "Warden retro")
    gate = threading.Event()
    server.queue(Reply([PROSE[:30], PROSE[30:]], gate_after=1, gate=gate))
    session = Session(memory, load_settings())

    async def go() -> str:
        meta = None
        async with aclosing(session.chat(ChatTurn(QUESTION))) as events:
            async for event in events:
                meta = meta or (event if isinstance(event, Meta) else None)
                if isinstance(event, Token):
                    break
        assert meta is not None
        return meta.message_id

    try:
        message_id = asyncio.run(go())
    finally:
        gate.set()
    row = conv.get_message(memory.db, message_id)
    assert row.status == "interrupted"
    assert "stopped_in_sources" not in (row.metadata or {})


def test_chat_ndjson_prints_the_status_before_the_tail_arrives(server, memory_home):
    from sadie_tui.engine.memory import Memory

    with Memory.open(memory_home) as memory:
        ep, _ = episode_of(memory, "Warden retro")
    gate = threading.Event()
    server.queue(slow_tail(ep, gate))
    env = {**os.environ, "SADIE_HOME": str(memory_home), "OLLAMA_HOST": server.url}
    process = subprocess.Popen(
        [sys.executable, "-m", "sadie_tui.cli", "chat", QUESTION, "--ndjson"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[dict] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(json.loads(line))
            if lines[-1] == {"type": "status", "value": WRITING_SOURCES}:
                assert not gate.is_set()  # printed while the tail was still held
                gate.set()
        process.wait(timeout=60)
    finally:
        gate.set()
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    assert process.returncode == 0, process.stderr.read() if process.stderr else ""
    kinds = [e["type"] for e in lines]
    at = lines.index({"type": "status", "value": WRITING_SOURCES})
    assert "token" not in kinds[at:] and kinds[-1] == "done"
    assert kinds.index("citations") > at
