"""Issue #34, item 12: every search, ask and chat writes its ``turns`` row, whatever way it
ends: an ask on an empty memory, a chat that ends in an error, a chat stopped during its
prose; a search on a read-only memory says that its row could not be written."""

from __future__ import annotations

import asyncio

import pytest

from sadie_tui.config import load_settings
from sadie_tui.engine.events import ErrorEvent, Meta, Token
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.operations import SearchMemory
from sadie_tui.engine.requests import ChatTurn
from sadie_tui.engine.session import Session
from tests.support.ollama_server import Reply
from tests.support.turns import run_chat


def turns(memory: Memory, kind: str) -> list[tuple]:
    return memory.db.fetchall(
        "SELECT query, message_id::VARCHAR, abstained, persona FROM turns WHERE kind = ?", [kind]
    )


def test_an_ask_on_an_empty_memory_is_a_turn(tmp_home, embedder):
    with Memory.open(tmp_home, embedder=embedder) as mem:
        asyncio.run(Session(mem, load_settings()).ask("what did I do last weekend?"))
        assert turns(mem, "ask") == [("what did I do last weekend?", None, True, "analyst")]


def test_a_chat_that_ends_in_an_error_is_a_turn(server, memory):
    server.queue(Reply(["Part one, ", "part two, "], error_after=2, error_message="GPU fell over"))
    events = run_chat(Session(memory, load_settings()), "how was the marathon?")
    assert isinstance(events[-1], ErrorEvent)
    meta = events[0]
    assert isinstance(meta, Meta)
    rows = turns(memory, "chat")
    assert rows == [("how was the marathon?", meta.message_id, None, "friend")]
    retrieved = memory.db.fetchone("SELECT count(*) FROM retrievals")[0]
    assert retrieved > 0  # the chunks it was briefed with, as a finished turn's


def test_a_chat_stopped_during_its_prose_is_a_turn(server, memory):
    server.queue(Reply(["one ", "two ", "three ", "four"], delay=0.3))
    session = Session(memory, load_settings())

    async def go() -> list:
        got: list = []

        async def consume() -> None:
            async for e in session.chat(ChatTurn("hello there")):
                got.append(e)

        task = asyncio.create_task(consume())
        while not any(isinstance(e, Token) for e in got):
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return got

    got = asyncio.run(go())
    status = memory.db.fetchone("SELECT status FROM messages WHERE role = 'assistant'")[0]
    assert status == "interrupted"
    assert turns(memory, "chat") == [("hello there", got[0].message_id, None, "friend")]


def test_a_search_on_a_read_only_memory_says_it_was_not_written(memory_home, embedder):
    session = Session.open(memory_home, load_settings(), read_only=True)
    try:
        found = session.call(SearchMemory("marathon"))
    finally:
        session.close()
    assert found.turn_id is None
    assert "this search could not be written to telemetry: the memory is open read-only" in (
        found.notices
    )
