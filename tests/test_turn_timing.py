"""The turn before the request (#16): the message rows are written once the request is out,
never before it, yet are there before the first token and kept when a turn fails or is
stopped before the model was asked; the budget comes once the request is written, and a turn
stopped after it closes the model's stream; a message sent right after launch waits for an ONNX
model that is loading instead of answering from keywords alone; each step is recorded."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from sadie_tui.config import load_settings
from sadie_tui.engine import conversations as conv
from sadie_tui.engine.events import ContextBudget, Done, ErrorEvent, Meta, Status, Token
from sadie_tui.engine.ingest.embedder import START_WAIT, Embedder
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.requests import ChatTurn
from sadie_tui.engine.session import Session
from sadie_tui.engine.turns import chat as chat_turn
from tests.support.ollama_server import Reply
from tests.support.turns import run_chat


def test_the_request_goes_out_before_the_rows_are_written(server, memory, monkeypatch):
    """The writes are held until the server has the request: a turn that wrote first would
    never reach it (the wait below would time out)."""
    asked = threading.Event()
    real_add = conv.add_message

    def held_add(*args, **kwargs):
        if not asked.wait(30):
            raise AssertionError("the rows were written before the request went out")
        return real_add(*args, **kwargs)

    monkeypatch.setattr(chat_turn.conv, "add_message", held_add)

    def responder(body):
        asked.set()
        return Reply(["Noted", " that."])

    server.responder = responder
    firsts: list[list[tuple[str, str]]] = []

    async def go():
        events = []
        async for event in Session(memory, load_settings()).chat(ChatTurn("How was the marathon?")):
            if isinstance(event, Token) and not firsts:
                rows = conv.messages(memory.db, events[0].conversation_id)
                firsts.append([(m.role, m.status) for m in rows])
            events.append(event)
        return events

    events = asyncio.run(go())
    assert isinstance(events[-1], Done)
    # before the first token: both rows, the reply still streaming
    assert firsts == [[("user", "complete"), ("assistant", "streaming")]]
    meta = events[0]
    assert isinstance(meta, Meta)
    rows = conv.messages(memory.db, meta.conversation_id)
    assert [m.id for m in rows] == [meta.user_message_id, meta.message_id]
    assert rows[0].content == "How was the marathon?" and rows[1].status == "complete"
    assert rows[0].created_at < rows[1].created_at


def test_a_turn_that_fails_before_asking_keeps_the_message(memory, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    monkeypatch.setenv("SADIE_REASONER", "ollama")
    events = run_chat(Session(memory, load_settings()), "Are you there?")
    assert isinstance(events[-1], ErrorEvent)
    rows = conv.messages(memory.db, events[0].conversation_id)
    assert [(m.role, m.status, m.content) for m in rows] == [
        ("user", "complete", "Are you there?"),
        ("assistant", "error", ""),
    ]


def stopped_inside(monkeypatch, memory, name: str) -> list:
    """A turn cancelled while ``chat_turn.<name>`` (a step's blocking call) runs; its events."""
    entered = threading.Event()
    release = threading.Event()
    real = getattr(chat_turn, name)

    def held(*args, **kwargs):
        entered.set()
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(chat_turn, name, held)

    async def go():
        got = []

        async def consume():
            async for event in Session(memory, load_settings()).chat(ChatTurn("hello there")):
                got.append(event)

        task = asyncio.create_task(consume())
        await asyncio.to_thread(entered.wait, 30)
        task.cancel()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        return got

    return asyncio.run(go())


def test_a_turn_stopped_while_briefing_keeps_the_message(server, memory, monkeypatch):
    """Stopped after Meta, before the request: the rows exist, the reply interrupted."""
    got = stopped_inside(monkeypatch, memory, "retrieve")
    rows = conv.messages(memory.db, got[0].conversation_id)
    assert [(m.role, m.status) for m in rows] == [
        ("user", "complete"),
        ("assistant", "interrupted"),
    ]
    assert not server.requests


def test_a_turn_stopped_while_opening_keeps_the_message_too(server, memory, monkeypatch):
    """Stopped before Meta, while the conversation is made: the opening runs to its end and
    the message is kept with an interrupted reply, so a caller may stop a turn anywhere."""
    assert stopped_inside(monkeypatch, memory, "make_title") == []
    (conversation,) = conv.list_conversations(memory.db)
    rows = conv.messages(memory.db, conversation.id)
    assert [(m.role, m.status, m.content) for m in rows] == [
        ("user", "complete", "hello there"),
        ("assistant", "interrupted", ""),
    ]
    assert not server.requests


def test_each_step_before_the_request_is_recorded(server, memory):
    events = run_chat(Session(memory, load_settings()), "How did the Warden refactor go?")
    stored = conv.get_message(memory.db, events[0].message_id)
    steps = stored.metadata["steps_ms"]
    assert {
        "conversation",
        "reasoner",
        "emotion",
        "retrieval",
        "chips",
        "policies",
        "briefing",
    } <= set(steps)
    assert all(isinstance(v, float) and v >= 0 for v in steps.values())


def test_the_budget_comes_once_the_request_is_written(server, memory):
    """At ContextBudget the event loop is blocked: the server gets the request only if it
    was already written (before the change it was made after the budget, and never came)."""
    asked = threading.Event()

    def responder(body):
        asked.set()
        return Reply(["Noted."])

    server.responder = responder

    async def go():
        async for event in Session(memory, load_settings()).chat(ChatTurn("How was the marathon?")):
            if isinstance(event, ContextBudget):
                assert asked.wait(30), "the budget came before the request was written"
            yield event

    async def collect():
        return [e async for e in go()]

    events = asyncio.run(collect())
    assert isinstance(events[-1], Done)
    assert [type(e).__name__ for e in events].index("ContextBudget") < next(
        i for i, e in enumerate(events) if isinstance(e, Token)
    )
    stored = conv.get_message(memory.db, events[0].message_id)
    assert "send" in stored.metadata["steps_ms"]


def test_a_turn_closed_after_its_budget_ends_the_request(server, memory, monkeypatch):
    """Stopped while the model reads (the request out, nothing back yet): the model's stream
    is closed, not left reading, and the reply is kept as interrupted."""
    from sadie_tui.engine.reasoners.ollama import OllamaReasoner

    closed = threading.Event()
    real_stream = OllamaReasoner.stream

    async def watched(self, *args, **kwargs):
        try:
            async for piece in real_stream(self, *args, **kwargs):
                yield piece
        finally:
            closed.set()

    monkeypatch.setattr(OllamaReasoner, "stream", watched)
    server.responder = lambda body: Reply(["too", " late"], delay=30)

    async def go():
        turn = Session(memory, load_settings()).chat(ChatTurn("hello there"))
        got = []
        async for event in turn:
            got.append(event)
            if isinstance(event, ContextBudget):
                break
        await turn.aclose()
        return got

    got = asyncio.run(go())
    assert closed.is_set()
    rows = conv.messages(memory.db, got[0].conversation_id)
    assert [(m.role, m.status) for m in rows] == [
        ("user", "complete"),
        ("assistant", "interrupted"),
    ]


def test_ahead_reads_before_it_is_asked_and_closes_cleanly():
    from sadie_tui.engine.reasoners.base import Ahead

    async def go():
        log: list[str] = []
        gate = asyncio.Event()

        async def pieces():
            log.append("started")
            try:
                await gate.wait()
                yield "one"
                yield "two"
            finally:
                log.append("closed")

        ahead = Ahead(pieces())
        await asyncio.sleep(0)
        assert log == ["started"]  # under way before anyone asked
        gate.set()
        assert [p async for p in ahead] == ["one", "two"]
        await ahead.aclose()
        assert log == ["started", "closed"]

        # closed while the first read waits: the read is cancelled and the stream closed
        log.clear()
        gate.clear()
        early = Ahead(pieces())
        await asyncio.sleep(0)
        await early.aclose()
        assert log == ["started", "closed"]

        # a failing first read ends started() and is raised by the first __anext__
        async def broken():
            raise RuntimeError("no model")
            yield "never"

        failing = Ahead(broken())
        await failing.started(asyncio.Event())
        with pytest.raises(RuntimeError, match="no model"):
            await failing.__anext__()
        await failing.aclose()

        # an empty stream ends at once
        async def empty():
            return
            yield "never"

        assert [p async for p in Ahead(empty())] == []

    asyncio.run(go())


# --------------------------------------------------------------------------- the embedder at launch


def test_a_message_right_after_launch_waits_for_a_loading_onnx_model(
    server, memory_home: Path, onnx_cache: Path, embedder
):
    fresh = Embedder(backend="onnx", cache=onnx_cache)
    with Memory.open(memory_home, embedder=fresh) as memory:
        comp = Session(memory, load_settings(), wait_for_embedder=False)
        # as the app does: the model loads in a thread once the memory is open
        threading.Thread(target=comp.warm, daemon=True).start()
        events = run_chat(comp, "How did the Warden refactor go?")
    budget = next(e for e in events if isinstance(e, ContextBudget))
    assert budget.vector and fresh.loaded
    notices = [e.value for e in events if isinstance(e, Status)]
    assert not any("still loading" in n for n in notices)


def test_wait_if_quick_waits_only_for_onnx(onnx_cache: Path, tmp_path: Path):
    loaded = Embedder(backend="onnx", cache=onnx_cache)
    loaded.warm()
    assert loaded.wait_if_quick(0)

    idle = Embedder(backend="onnx", cache=onnx_cache)  # nobody loads it
    started = time.monotonic()
    assert not idle.wait_if_quick(5.0)
    assert time.monotonic() - started < START_WAIT + 2.0

    slow = Embedder(backend="torch")
    slow.trying = "torch"
    slow._started.set()
    started = time.monotonic()
    assert not slow.wait_if_quick(5.0)  # sentence-transformers takes seconds: not waited for
    assert time.monotonic() - started < 1.0

    exporting = Embedder(backend="onnx", cache=tmp_path / "empty-cache")
    exporting.trying = "export"
    exporting._started.set()
    assert not exporting.wait_if_quick(5.0)


def test_the_app_loads_the_model_beside_the_memory_unless_it_is_a_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Launch.prewarm_embedder: started before the memory opens, skipped when another sadie
    serves the memory (a client never embeds)."""
    from sadie_tui.engine import session as session_module
    from sadie_tui.launch import Launch
    from sadie_tui.serve import remote

    started: list[str] = []
    monkeypatch.setattr(session_module, "prewarm_embedder", lambda: started.append("warm"))
    launch = Launch(home=tmp_path / "home", settings=load_settings())
    launch.prewarm_embedder()
    assert started == ["warm"]

    monkeypatch.setattr(remote, "answers", lambda path, timeout=1.0: True)
    launch.prewarm_embedder()
    assert started == ["warm"]


def test_prewarm_loads_the_shared_model_in_the_background(monkeypatch: pytest.MonkeyPatch):
    from sadie_tui.engine import session as session_module
    from sadie_tui.engine.ingest import embedder as embedder_module

    warmed = threading.Event()

    class Recording:
        def warm(self) -> None:
            assert threading.current_thread().name == "sadie-prewarm"
            warmed.set()
            raise RuntimeError("a failure is left for the session's own warm()")

    monkeypatch.setattr(embedder_module, "shared_embedder", lambda: Recording())
    session_module.prewarm_embedder()
    assert warmed.wait(30)
