"""Regenerate, edit-and-resend, a model chosen per turn, the server's model list, and a
stopped reply keeping its tail's citations. Real ollama client against the project's
Ollama-protocol server, a real DuckDB memory."""

from __future__ import annotations

import asyncio
import json

import pytest

from sadie_tui.config import load_settings
from sadie_tui.engine import conversations as conv
from sadie_tui.engine.events import Checking, Done, ErrorEvent, Meta, Token
from sadie_tui.engine.requests import ChatTurn
from sadie_tui.engine.session import Session
from tests.support.ollama_server import Reply
from tests.support.turns import episode_of, run_chat


def companion(memory) -> Session:
    return Session(memory, load_settings())


def tail(ep: str, quote: str) -> str:
    return "\n@@CITATIONS@@\n" + json.dumps(
        [{"episode": ep, "quote": quote, "support": "verbatim"}]
    )


def shown(memory, cid: str) -> list[tuple[str, str, str]]:
    return [(m.role, m.status, m.content) for m in conv.messages(memory.db, cid)]


def test_regenerate_replaces_the_last_reply_and_keeps_it_superseded(server, memory):
    comp = companion(memory)
    server.queue(Reply(["First answer."]))
    first = run_chat(comp, "How was the pottery class?")
    cid = first[0].conversation_id
    server.queue(Reply(["Second answer."]))
    again = run_chat(comp, "", conversation_id=cid, regenerate=True)
    meta = again[0]
    assert isinstance(meta, Meta) and isinstance(again[-1], Done)
    assert set(meta.replaced) == {first[0].user_message_id, first[0].message_id}
    assert shown(memory, cid) == [
        ("user", "complete", "How was the pottery class?"),
        ("assistant", "complete", "Second answer."),
    ]
    everything = conv.messages(memory.db, cid, superseded=True)
    assert [m.status for m in everything].count("superseded") == 2
    assert conv.get_conversation(memory.db, cid).message_count == 2
    # The model was asked the same question, without the replaced exchange in its history.
    asked = [r for r in server.requests if not r.get("format")][-1]["messages"]
    assert asked[-1]["content"].endswith("How was the pottery class?")
    assert not any("First answer." in m["content"] for m in asked)
    kinds = memory.db.fetchall("SELECT kind FROM turns WHERE kind <> 'search' ORDER BY created_at")
    assert [k for (k,) in kinds] == ["chat", "regenerate"]


def test_edit_and_resend_replaces_the_last_message(server, memory):
    comp = companion(memory)
    server.queue(Reply(["About pottery."]))
    cid = run_chat(comp, "How was the potery clas?")[0].conversation_id
    server.queue(Reply(["About pottery, again."]))
    run_chat(comp, "How was the pottery class?", conversation_id=cid, regenerate=True)
    assert shown(memory, cid) == [
        ("user", "complete", "How was the pottery class?"),
        ("assistant", "complete", "About pottery, again."),
    ]
    kinds = memory.db.fetchall("SELECT kind FROM turns WHERE kind <> 'search' ORDER BY created_at")
    assert [k for (k,) in kinds] == ["chat", "edit"]


def test_retry_after_an_error_answers_the_same_message(server, memory):
    comp = companion(memory)
    server.queue(Reply(["Half a "], error_after=1))
    failed = run_chat(comp, "How was the pottery class?")
    assert isinstance(failed[-1], ErrorEvent)
    cid = failed[0].conversation_id
    server.queue(Reply(["A whole answer."]))
    run_chat(comp, "", conversation_id=cid, regenerate=True)
    assert shown(memory, cid) == [
        ("user", "complete", "How was the pottery class?"),
        ("assistant", "complete", "A whole answer."),
    ]


def test_regenerate_needs_a_conversation_with_a_message(server, memory):
    comp = companion(memory)
    events = run_chat(comp, "", regenerate=True)
    assert isinstance(events[0], ErrorEvent) and events[0].code == "usage"
    empty = conv.create_conversation(memory.db, "nothing yet")
    events = run_chat(comp, "", conversation_id=empty.id, regenerate=True)
    assert isinstance(events[0], ErrorEvent) and events[0].code == "not_found"


def test_a_turn_can_use_another_model(server, memory):
    server.models.append("gemma3:270m")
    server.queue(Reply(["From gemma."]))
    events = run_chat(companion(memory), "hello", model="gemma3:270m")
    assert events[0].model == "gemma3:270m"
    assert {r["model"] for r in server.requests} == {"gemma3:270m"}
    row = conv.get_message(memory.db, events[0].message_id)
    assert row.model == "gemma3:270m"


def test_the_model_list_comes_from_the_server(server, memory):
    server.models.append("gemma3:270m")
    found = asyncio.run(companion(memory).models())
    names = [m.name for m in found]
    assert names == sorted(names) and {"qwen3:1.7b", "gemma3:270m"} <= set(names)
    qwen = next(m for m in found if m.name == "qwen3:1.7b")
    assert qwen.size > 0 and qwen.family and qwen.quantization


def test_the_model_list_without_a_server_is_one_error(memory, monkeypatch):
    from sadie_tui.engine.errors import ModelUnreachable

    with pytest.raises(ModelUnreachable):
        asyncio.run(companion(memory).models())


def test_a_failed_turn_makes_the_next_one_ask_the_server_again(server, memory):
    comp = companion(memory)
    assert asyncio.run(comp.check_model()).online
    server.queue(Reply(["Half "], error_after=1))
    run_chat(comp, "hello")
    server.models.clear()  # the model is gone now: without a fresh check it would be "online"
    events = run_chat(comp, "hello again")
    assert events[0].offline


def _stop_at(comp, message: str, stop) -> str:
    """Run a turn, leave it at the first event ``stop`` accepts; the reply's id."""
    from contextlib import aclosing

    async def go() -> str:
        meta = None
        async with aclosing(comp.chat(ChatTurn(message))) as events:
            async for e in events:
                meta = meta or (e if isinstance(e, Meta) else None)
                if stop(e):
                    break
        assert meta is not None
        return meta.message_id

    return asyncio.run(go())


def test_a_reply_stopped_while_its_tail_streams_keeps_the_complete_citations(server, memory):
    ep, _ = episode_of(memory, "Warden retro")
    cited = json.dumps({"episode": ep, "quote": "Shipped the auth refactor", "support": "verbatim"})
    # One piece: the prose, the marker, one complete entry and the start of another; then
    # the model stalls. The prose's token comes out only after the filter took the piece.
    cut = "You shipped the auth refactor.\n@@CITATIONS@@\n[" + cited + ', {"episode": "'
    server.queue(Reply([cut], stall_after=1))
    message_id = _stop_at(
        companion(memory), "How did the Warden refactor go?", lambda e: isinstance(e, Token)
    )
    row = conv.get_message(memory.db, message_id)
    assert row.status == "interrupted"
    assert row.content == "You shipped the auth refactor."
    assert [(c["episode_id"], c["support"]) for c in row.citations] == [(ep, "verbatim")]


def test_a_reply_stopped_during_the_citation_pass_keeps_sadies_own_matches(server, memory):
    ep, text = episode_of(memory, "Warden retro")
    sentence = "Shipped the auth refactor"
    server.queue(Reply([f"{sentence}, you wrote."]))  # no tail at all: the pass runs
    server.queue(Reply(["{}"], delay=30))
    message_id = _stop_at(
        companion(memory), "How did the Warden refactor go?", lambda e: isinstance(e, Checking)
    )
    row = conv.get_message(memory.db, message_id)
    assert row.status == "interrupted" and row.citations == []
    found = row.metadata["found_by_sadie"]
    assert found and found[0]["episode_id"] == ep and found[0]["origin"] == "sadie"


def test_closed_list_keeps_the_complete_entries():
    from sadie_tui.engine.turns.chat import closed_list

    assert closed_list('[{"a": 1}, {"b"') == '[{"a": 1}]'
    assert closed_list('[{"a": {"b": 2}}, {') == '[{"a": {"b": 2}}]'
    assert closed_list("[") == "["
    assert closed_list("no list") == "no list"
