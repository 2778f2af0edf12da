"""Chat end to end: the real ollama client against the project's Ollama-protocol server,
a real DuckDB memory, the real embedder. Asserts on events, stored rows and the requests
the server received."""

from __future__ import annotations

import asyncio
import json

import pytest

from sadie_tui.config import load_settings
from sadie_tui.engine import conversations as conv
from sadie_tui.engine.events import (
    CitationsEvent,
    ContextBudget,
    Done,
    EmotionEvent,
    ErrorEvent,
    Meta,
    Replace,
    Status,
    Thinking,
    Token,
)
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.prompt import TONE
from sadie_tui.engine.requests import ChatTurn
from sadie_tui.engine.session import Session
from tests.support.ollama_server import Reply, split_pieces
from tests.support.turns import episode_of, run_chat


def companion(memory, **env) -> Session:
    return Session(memory, load_settings())


def visible(events) -> str:
    return "".join(e.value for e in events if isinstance(e, Token))


def tail(ep: str, quote: str, support: str = "verbatim") -> str:
    return "\n@@CITATIONS@@\n" + json.dumps([{"episode": ep, "quote": quote, "support": support}])


def test_event_order_and_rows(server, memory):
    ep, text = episode_of(memory, "Warden retro")
    server.queue(
        Reply(
            split_pieces(
                "You shipped the auth refactor." + tail(ep, "Shipped the auth refactor"), 3
            )
        )
    )
    events = run_chat(companion(memory), "How did the Warden refactor go?")
    kinds = [type(e) for e in events]
    assert kinds[0] is Meta and kinds[1] is EmotionEvent and ContextBudget in kinds
    assert kinds[-1] is Done
    assert kinds.index(CitationsEvent) > max(i for i, k in enumerate(kinds) if k is Token)
    assert visible(events) == "You shipped the auth refactor."
    cites = next(e for e in events if isinstance(e, CitationsEvent)).value
    assert [(c.episode_id, c.support, c.title) for c in cites] == [(ep, "verbatim", "Warden retro")]
    meta = events[0]
    rows = conv.messages(memory.db, meta.conversation_id)
    assert [(m.role, m.status) for m in rows] == [("user", "complete"), ("assistant", "complete")]
    assert rows[1].content == "You shipped the auth refactor."
    assert rows[1].citations[0]["support"] == "verbatim"
    assert rows[1].emotion == events[1].value
    assert rows[1].model == "qwen3:1.7b"
    done = events[-1]
    assert done.message_id == meta.message_id and done.chunks_considered > 0
    # the briefing: provenance header, num_ctx, the standing prompt
    body = server.requests[-1]
    system = body["messages"][0]["content"]
    # the id cut to its shortest unique prefix (policing maps it back)
    assert f"episode {ep[:8]} (2026-03-14) Warden retro\n" in system
    assert "@@CITATIONS@@" in system and "thoughtful confidant" in system
    assert body["options"]["num_ctx"] >= 4096 and body["options"]["temperature"] == 0.4
    assert TONE[events[1].value] in system  # the register's tone, in chat
    # telemetry: one turn, one retrieval row per chunk, the cited one marked
    turn = memory.db.fetchone(
        "SELECT kind, persona, prompt_version, grounding FROM turns WHERE kind='chat'"
    )
    assert turn[0] == "chat" and turn[1] == "friend" and turn[2] and turn[3] == 1.0
    cited = memory.db.fetchall("SELECT episode_id::VARCHAR FROM retrievals WHERE cited")
    assert {r[0] for r in cited} == {ep}


def test_assistant_row_is_streaming_before_first_token(server, memory):
    ep, _ = episode_of(memory, "Warden retro")
    server.queue(Reply(split_pieces("Hello there." + tail(ep, "x"), 4)))
    comp = companion(memory)
    seen = []

    async def go():
        async for event in comp.chat(ChatTurn("hello")):
            if isinstance(event, Token) and not seen:
                status = memory.db.fetchone("SELECT status FROM messages WHERE role='assistant'")[0]
                seen.append(status)

    asyncio.run(go())
    assert seen == ["streaming"]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 13])
def test_cut_points_never_leak(server, memory, size):
    ep, _ = episode_of(memory, "Warden retro")
    raw = "<think>private plan</think>\n\nThe refactor shipped." + tail(
        ep, "Shipped the auth refactor"
    )
    server.queue(Reply(split_pieces(raw, size)))
    events = run_chat(companion(memory), "Warden?")
    text = visible(events)
    assert text == "The refactor shipped."
    for e in events:
        if isinstance(e, Token):
            assert "<" not in e.value and "@" not in e.value and "private" not in e.value
    assert next(e for e in events if isinstance(e, CitationsEvent)).value[0].support == "verbatim"


def test_message_thinking_emits_thinking_events(server, memory):
    server.queue(Reply(content=["Fine."], thinking=["let me think"] * 3, delay=0.12))
    events = run_chat(companion(memory), "how am I?")
    thinking = [e for e in events if isinstance(e, Thinking)]
    assert thinking and all(isinstance(t.elapsed, float) for t in thinking)
    assert visible(events) == "Fine."
    first_token = next(i for i, e in enumerate(events) if isinstance(e, Token))
    assert events.index(thinking[0]) < first_token


def test_unclosed_think_and_lone_close(server, memory):
    server.queue(Reply(split_pieces("<think>I will never close this", 4)))
    events = run_chat(companion(memory), "hm")
    assert visible(events) == ""
    assert any(isinstance(e, Thinking) for e in events)
    assert isinstance(events[-1], ErrorEvent) and events[-1].code == "no_answer"
    server.queue(Reply(split_pieces("</think>\n\nJust the answer.", 3)))
    events = run_chat(companion(memory), "hm")
    assert visible(events) == "Just the answer."


def test_citations_policed(server, memory):
    ep, text = episode_of(memory, "Warden retro")
    fabricated = "00000000-0000-4000-8000-000000000000"
    cites = [
        {"episode": fabricated, "quote": "anything", "support": "verbatim"},
        {"episode": ep, "quote": "the auth refactor was a triumph", "support": "verbatim"},
        {"episode": ep, "quote": "felt SLOWER   than it should", "support": "paraphrase"},
        {"episode": ep, "quote": "you avoided the retro", "support": "inference"},
    ]
    answer = "The auth refactor shipped; it felt slower than it should. You avoided the retro."
    server.queue(Reply(split_pieces(answer + "\n@@CITATIONS@@\n" + json.dumps(cites), 5)))
    events = run_chat(companion(memory), "Warden?")
    got = [
        (c.episode_id, c.support, c.claimed)
        for c in next(e for e in events if isinstance(e, CitationsEvent)).value
    ]
    assert got == [
        (ep, "paraphrase", "verbatim"),
        (ep, "verbatim", "paraphrase"),
        (ep, "inference", "inference"),
    ]
    assert (
        next(e for e in events if isinstance(e, CitationsEvent)).value[2].label
        == "reading between the lines"
    )


@pytest.mark.parametrize(
    "tail_text",
    ["[{'episode': 'x', 'quote': ", "not json at all", '{"a": 1}', "```json\n[1, 2,]\n```", "@@@@"],
)
def test_malformed_tail_keeps_prose(server, memory, tail_text):
    server.queue(Reply(split_pieces("The prose survives.\n@@CITATIONS@@\n" + tail_text, 4)))
    events = run_chat(companion(memory), "anything")
    assert visible(events) == "The prose survives."
    assert isinstance(events[-1], Done)


def test_missing_model_strict_mode_is_an_error(server, memory, monkeypatch):
    monkeypatch.setenv("SADIE_REASONER", "ollama")
    server.models[:] = ["llama3:8b"]
    events = run_chat(companion(memory), "hello")
    err = events[-1]
    assert isinstance(err, ErrorEvent) and err.code == "model_missing"
    assert "ollama pull qwen3:1.7b" in err.fix
    row = memory.db.fetchone("SELECT status FROM messages WHERE role='assistant'")
    assert row[0] == "error"


def test_missing_model_auto_mode_answers_offline(server, memory):
    server.models[:] = ["llama3:8b"]
    events = run_chat(companion(memory), "How did the Warden refactor go?")
    assert events[0].offline is True
    status = [e.value for e in events if isinstance(e, Status)]
    assert any("ollama pull qwen3:1.7b" in s for s in status)
    assert "No language model is reachable" in visible(events)
    cites = next(e for e in events if isinstance(e, CitationsEvent)).value
    assert cites and all(c.support == "verbatim" for c in cites)
    assert isinstance(events[-1], Done)


@pytest.mark.at_rest
def test_server_absent_answers_offline(memory, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    events = run_chat(companion(memory), "When did I finish the marathon?")
    assert events[0].offline and isinstance(events[-1], Done)
    assert "3:58" in visible(events)


def test_the_offline_banner_comes_once_per_conversation(memory, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    comp = companion(memory)
    first = run_chat(comp, "When did I finish the marathon?")
    second = run_chat(comp, "And my time?", conversation_id=first[0].conversation_id)
    assert visible(first).startswith("No language model is reachable right now")
    assert visible(second).startswith("Still offline.")
    assert "No language model" not in visible(second)
    other = run_chat(comp, "When did I finish the marathon?")  # a new conversation: in full
    assert visible(other).startswith("No language model is reachable right now")


def test_server_absent_strict_mode(memory, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    monkeypatch.setenv("SADIE_REASONER", "ollama")
    events = run_chat(companion(memory), "hello")
    assert isinstance(events[-1], ErrorEvent) and events[-1].code == "unreachable"
    assert "ollama serve" in events[-1].fix


def test_error_mid_stream_keeps_partial(server, memory):
    server.queue(Reply(["Part one, ", "part two, "], error_after=2, error_message="GPU fell over"))
    events = run_chat(companion(memory), "hello")
    assert visible(events) == "Part one, part two,"
    err = events[-1]
    assert isinstance(err, ErrorEvent) and "GPU fell over" in err.message
    row = memory.db.fetchone("SELECT status, content FROM messages WHERE role='assistant'")
    assert row == ("error", "Part one, part two,")


def test_stalled_stream_times_out(server, memory, monkeypatch):
    monkeypatch.setenv("SADIE_CONFIG", str(memory.home.parent / "cfg"))
    (memory.home.parent / "cfg").mkdir()
    (memory.home.parent / "cfg" / "config.toml").write_text("read_timeout = 0.5\n")
    server.queue(Reply(["Starting "], stall_after=1, stall_seconds=5))
    events = run_chat(companion(memory), "hello")
    assert isinstance(events[-1], ErrorEvent) and events[-1].code == "timeout"


def test_cancel_marks_interrupted_and_keeps_text(server, memory):
    server.queue(Reply(["one ", "two ", "three ", "four"], delay=0.3))
    comp = companion(memory)

    async def go():
        got = []

        async def consume():
            async for e in comp.chat(ChatTurn("hello")):
                got.append(e)

        task = asyncio.create_task(consume())
        while not any(isinstance(e, Token) for e in got):
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return got

    got = asyncio.run(go())
    row = memory.db.fetchone("SELECT status, content FROM messages WHERE role='assistant'")
    assert row[0] == "interrupted"
    assert row[1] == visible(got) and row[1].startswith("one")


def test_history_last_twelve_and_title(server, memory):
    comp = companion(memory)
    first = (
        "Tell me about the Warden refactor and everything that happened around it in March please"
    )
    events = run_chat(comp, first)
    cid = events[0].conversation_id
    title = conv.get_conversation(memory.db, cid).title
    assert len(title) <= 60 and first.startswith(title.rstrip("…"))
    for n in range(7):
        run_chat(comp, f"follow-up number {n}", conversation_id=cid)
    body = server.requests[-1]
    history = body["messages"][1:-1]
    assert len(history) == 12
    assert body["messages"][-1] == {"role": "user", "content": "follow-up number 6"}
    assert history[0]["content"] != first  # the oldest fell off
    ctx = [e for e in run_chat(comp, "again", conversation_id=cid) if isinstance(e, ContextBudget)][
        0
    ]
    assert ctx.messages == 12 and ctx.messages_dropped == 4


def test_empty_memory_is_told(server, tmp_home, embedder):
    with Memory.open(tmp_home, embedder=embedder) as mem:
        run_chat(Session(mem, load_settings()), "what did I do yesterday?")
    system = server.requests[-1]["messages"][0]["content"]
    assert "The memory is empty" in system


def test_policy_block_rewrite_warn(server, memory):
    (memory.home / "policies.toml").write_text(
        '[[policy]]\nname = "no-diagnoses"\naction = "block"\n'
        'pattern = "(?i)you (have|suffer from) (depression|adhd)"\nmessage = "sadie does not diagnose"\n'
        '[[policy]]\nname = "gentle"\naction = "rewrite"\npattern = "(?i)\\\\blazy\\\\b"\nreplacement = "tired"\n'
        '[[policy]]\nname = "money"\naction = "warn"\npattern = "(?i)bank"\n'
        '[[policy]]\nname = "broken"\naction = "explode"\npattern = "x"\n'
    )
    server.queue(Reply(split_pieces("You seem lazy lately, and the bank called.", 4)))
    events = run_chat(companion(memory), "am I ok?")
    system = server.requests[-1]["messages"][0]["content"]
    assert "no-diagnoses" in system and "sadie does not diagnose" in system
    assert any(isinstance(e, Status) and "broken" in e.value for e in events)
    rep = next(e for e in events if isinstance(e, Replace))
    assert rep.value == "You seem tired lately, and the bank called."
    kinds = [type(e) for e in events]
    assert kinds.index(Replace) < kinds.index(Done)
    stored = memory.db.fetchone("SELECT content, status FROM messages WHERE role='assistant'")
    assert stored == ("You seem tired lately, and the bank called.", "complete")
    hits = memory.db.fetchall("SELECT policy, action FROM policy_events ORDER BY action")
    assert ("money", "warn") in hits and ("gentle", "rewrite") in hits

    server.queue(Reply(split_pieces("Honestly you have depression.", 4)))
    events = run_chat(companion(memory), "what is wrong with me")
    rep = next(e for e in events if isinstance(e, Replace))
    assert "no-diagnoses" in rep.value and "sadie does not diagnose" in rep.value
    emotions = [e.value for e in events if isinstance(e, EmotionEvent)]
    assert emotions[-1] == "serious"
    row = memory.db.fetchone(
        "SELECT status, emotion FROM messages WHERE role='assistant' ORDER BY created_at DESC LIMIT 1"
    )
    assert row == ("blocked", "serious")
    assert conv.get_conversation(memory.db, events[0].conversation_id).emotion == "serious"


def test_replies_are_never_ingested(server, memory):
    before = memory.db.fetchone("SELECT count(*) FROM episodes")[0]
    run_chat(companion(memory), "hello")
    assert memory.db.fetchone("SELECT count(*) FROM episodes")[0] == before
