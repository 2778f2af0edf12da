"""The fake Ollama server, exercised with the real ``ollama`` client."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import ollama
import pytest

from tests.support.ollama_server import (
    CITATIONS_MARKER,
    FakeOllama,
    Reply,
    default_responder,
    split_pieces,
)

MODEL = "qwen3:1.7b"
USER = [{"role": "user", "content": "How was my week?"}]
ROOT = Path(__file__).resolve().parents[1]

EPISODE_ID = "0b6f2a9e-3c1d-4e8f-9a7b-5d2c1e0f4a63"
BRIEFING = f"""You are Sadie. Use only these notes.

Relevant episodes:
episode {EPISODE_ID} (2025-03-14) Walk by the river
  We walked past the old mill and Anna said she is moving to Leeds in May.
"""


@pytest.fixture
def srv():
    with FakeOllama() as server:
        yield server


@pytest.fixture
def client(srv):
    with ollama.Client(host=srv.url) as c:
        yield c


def _briefed(question: str = "What did Anna say?") -> list[dict]:
    return [
        {"role": "system", "content": BRIEFING},
        {"role": "user", "content": question},
    ]


def _split_answer(text: str) -> tuple[str, list]:
    prose, _, tail = text.partition(f"\n{CITATIONS_MARKER}\n")
    return prose, json.loads(tail)


# --------------------------------------------------------------------------- streaming


def test_stream_yields_scripted_pieces_in_order(srv, client):
    srv.queue(Reply(content=["Hel", "lo, ", "you."], thinking=["Let me ", "think."]))

    chunks = list(client.chat(model=MODEL, messages=USER, stream=True))

    assert [c.message.thinking for c in chunks[:2]] == ["Let me ", "think."]
    assert all(c.message.content == "" for c in chunks[:2])
    assert [c.message.content for c in chunks[2:5]] == ["Hel", "lo, ", "you."]
    assert all(c.message.thinking is None for c in chunks[2:])
    assert all(not c.done for c in chunks[:-1])
    final = chunks[-1]
    assert final.done is True
    assert final.done_reason == "stop"
    assert final.message.role == "assistant"
    assert final.message.content == ""
    assert final.model == MODEL
    assert final.created_at.endswith("Z")
    assert final.eval_count == 3
    assert final.prompt_eval_count >= 1
    for field in (
        "total_duration",
        "load_duration",
        "prompt_eval_duration",
        "eval_duration",
    ):
        assert isinstance(getattr(final, field), int) and getattr(final, field) > 0
    assert (
        final.total_duration
        >= final.load_duration + final.prompt_eval_duration + final.eval_duration
    )


def test_raw_wire_format_is_chunked_ndjson(srv):
    srv.queue(Reply(content=["Hi"]))
    with httpx.stream(
        "POST", f"{srv.url}/api/chat", json={"model": MODEL, "messages": USER}
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/x-ndjson"
        assert response.headers["transfer-encoding"] == "chunked"
        lines = [json.loads(line) for line in response.iter_lines() if line]
    assert lines[0] == {
        "model": MODEL,
        "created_at": lines[0]["created_at"],
        "message": {"role": "assistant", "content": "Hi"},
        "done": False,
    }
    assert set(lines[-1]) == {
        "model", "created_at", "message", "done", "done_reason", "total_duration",
        "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count",
        "eval_duration",
    }  # fmt: skip


def test_async_client_streams_too(srv):
    srv.queue(Reply(content=["one ", "two ", "three"], thinking=["hmm"]))

    async def run() -> list:
        async with ollama.AsyncClient(host=srv.url) as client:
            stream = await client.chat(model=MODEL, messages=USER, stream=True)
            return [chunk async for chunk in stream]

    chunks = asyncio.run(run())
    assert chunks[0].message.thinking == "hmm"
    assert [c.message.content for c in chunks[1:4]] == ["one ", "two ", "three"]
    assert chunks[-1].done and chunks[-1].eval_count == 3


def test_queued_string_is_split_into_small_pieces(srv, client):
    srv.queue("Hello there, friend.", Reply(content=["second"]))

    first = [
        c.message.content for c in client.chat(model=MODEL, messages=USER, stream=True)
    ]
    second = [
        c.message.content for c in client.chat(model=MODEL, messages=USER, stream=True)
    ]

    assert first[:-1] == ["Hell", "o th", "ere,", " fri", "end."]
    assert second[:-1] == ["second"]
    assert srv.pending == 0


def test_non_streaming_returns_one_object_with_concatenated_thinking(srv, client):
    srv.queue(Reply(content=["Hel", "lo"], thinking=["a", "b"]))
    response = client.chat(model=MODEL, messages=USER, stream=False)
    assert response.done is True
    assert response.message.content == "Hello"
    assert response.message.thinking == "ab"
    assert response.eval_count == 2


def test_reply_stream_override_sends_single_object(srv, client):
    srv.queue(Reply(content=["whole"], stream=False))
    chunks = list(client.chat(model=MODEL, messages=USER, stream=True))
    assert len(chunks) == 1
    assert chunks[0].done and chunks[0].message.content == "whole"


def test_delay_spaces_out_lines(srv, client):
    srv.queue(Reply(content=["a", "b"], delay=0.05))
    stamps = []
    for _ in client.chat(model=MODEL, messages=USER, stream=True):
        stamps.append(time.monotonic())
    assert len(stamps) == 3
    assert stamps[-1] - stamps[0] >= 0.09


def test_generate_uses_response_field(srv, client):
    srv.queue(Reply(content=["Gen", "erated"]))
    parts = list(client.generate(model=MODEL, prompt="Say something", stream=True))
    assert [p.response for p in parts[:-1]] == ["Gen", "erated"]
    assert parts[-1].done and parts[-1].eval_count == 2
    whole = client.generate(model=MODEL, prompt=BRIEFING)
    _, citations = _split_answer(whole.response)
    assert citations[0]["episode"] == EPISODE_ID
    assert [r["prompt"] for r in srv.requests] == ["Say something", BRIEFING]


def test_empty_messages_load_the_model(srv, client):
    response = client.chat(model=MODEL, messages=[])
    assert response.done and response.done_reason == "load"
    assert response.message.content == ""


# --------------------------------------------------------------------------- failures


def test_missing_model_is_404(srv, client):
    with pytest.raises(ollama.ResponseError) as info:
        client.chat(model="llama3.2:3b", messages=USER)
    assert info.value.status_code == 404
    assert info.value.error == 'model "llama3.2:3b" not found, try pulling it first'

    stream = client.chat(model="llama3.2:3b", messages=USER, stream=True)
    with pytest.raises(ollama.ResponseError) as info:
        next(iter(stream))
    assert info.value.status_code == 404

    with pytest.raises(ollama.ResponseError) as info:
        client.show("llama3.2:3b")
    assert info.value.status_code == 404


def test_models_list_is_mutable(srv, client):
    srv.models.append("llama3.2")
    assert client.chat(model="llama3.2:latest", messages=USER).done
    srv.models.remove(MODEL)
    with pytest.raises(ollama.ResponseError) as info:
        client.chat(model=MODEL, messages=USER)
    assert info.value.status_code == 404
    assert [m.model for m in client.list().models] == ["llama3.2"]


def test_error_after_raises_response_error_mid_stream(srv, client):
    srv.queue(
        Reply(
            content=["a", "b", "c", "d"],
            error_after=2,
            error_message="CUDA out of memory",
        )
    )
    received = []
    with pytest.raises(ollama.ResponseError) as info:
        for chunk in client.chat(model=MODEL, messages=USER, stream=True):
            received.append(chunk.message.content)
    assert received == ["a", "b"]
    assert info.value.status_code == -1
    assert info.value.error == "CUDA out of memory"


def test_error_after_without_streaming_is_http_500(srv, client):
    srv.queue(Reply(content=["a", "b"], error_after=1))
    with pytest.raises(ollama.ResponseError) as info:
        client.chat(model=MODEL, messages=USER)
    assert info.value.status_code == 500
    assert info.value.error == "unexpected server error"


def test_status_reply_is_http_error(srv, client):
    srv.queue(Reply(status=500, error_message="llama runner process has terminated"))
    stream = client.chat(model=MODEL, messages=USER, stream=True)
    with pytest.raises(ollama.ResponseError) as info:
        list(stream)
    assert info.value.status_code == 500
    assert info.value.error == "llama runner process has terminated"


def test_stall_times_out_and_server_stops_promptly():
    server = FakeOllama().start()
    try:
        server.queue(Reply(content=["a", "b", "c"], stall_after=1, stall_seconds=30))
        received = []
        started = time.monotonic()
        with (
            ollama.Client(
                host=server.url, timeout=httpx.Timeout(5, read=0.5)
            ) as client,
            pytest.raises(httpx.ReadTimeout),
        ):
            for chunk in client.chat(model=MODEL, messages=USER, stream=True):
                received.append(chunk.message.content)
        assert received == ["a"]
        assert time.monotonic() - started < 3
    finally:
        t0 = time.monotonic()
        server.__exit__(None, None, None)
        assert time.monotonic() - t0 < 2


def test_stop_does_not_hang_with_a_handler_mid_stall():
    server = FakeOllama().start()
    server.queue(Reply(content=["a", "b"], stall_after=1, stall_seconds=30))
    first = threading.Event()
    outcome: list[BaseException | None] = []

    def consume() -> None:
        try:
            with ollama.Client(host=server.url) as client:
                for _ in client.chat(model=MODEL, messages=USER, stream=True):
                    first.set()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            outcome.append(exc)

    worker = threading.Thread(target=consume, daemon=True)
    worker.start()
    assert first.wait(5)
    t0 = time.monotonic()
    server.__exit__(None, None, None)
    assert time.monotonic() - t0 < 2
    worker.join(5)
    # the stalled body is dropped unfinished: httpx reports a protocol error
    assert len(outcome) == 1 and isinstance(outcome[0], httpx.RemoteProtocolError)


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_absent_server_streaming_raises_httpx_connect_error():
    with ollama.Client(host=_closed_port_url()) as client:
        # lazy: nothing is sent until the first iteration
        stream = client.chat(model=MODEL, messages=USER, stream=True)
        with pytest.raises(httpx.ConnectError):
            next(iter(stream))


def test_absent_server_non_streaming_raises_builtin_connection_error():
    with (
        ollama.Client(host=_closed_port_url()) as client,
        pytest.raises(ConnectionError) as info,
    ):
        client.chat(model=MODEL, messages=USER)
    assert not isinstance(info.value, httpx.HTTPError)
    assert "Failed to connect to Ollama" in str(info.value)


# --------------------------------------------------------------------------- recording, metadata


def test_requests_records_bodies(srv, client):
    srv.queue("one", "two")
    list(
        client.chat(
            model=MODEL,
            messages=USER,
            stream=True,
            options={"num_ctx": 8192},
            think=False,
        )
    )
    client.chat(model=MODEL, messages=_briefed(), options={"temperature": 0.2})

    assert len(srv.requests) == 2
    first, second = srv.requests
    assert first["model"] == MODEL
    assert first["messages"] == USER
    assert first["options"] == {"num_ctx": 8192}
    assert first["stream"] is True
    assert first["think"] is False
    assert second["messages"][0] == {"role": "system", "content": BRIEFING}
    assert second["options"] == {"temperature": 0.2}
    assert second["stream"] is False
    assert ("POST", "/api/chat") in srv.hits


def test_metadata_endpoints(srv, client):
    assert httpx.get(f"{srv.url}/").text == "Ollama is running"
    assert httpx.head(f"{srv.url}/").status_code == 200
    assert httpx.get(f"{srv.url}/api/version").json() == {"version": "0.12.0"}
    assert httpx.get(f"{srv.url}/api/nope").status_code == 404

    listed = client.list().models
    assert [m.model for m in listed] == [MODEL]
    assert listed[0].details.family == "qwen3"
    assert listed[0].digest and listed[0].size > 0
    assert httpx.get(f"{srv.url}/api/tags").json()["models"][0]["name"] == MODEL

    shown = client.show(MODEL)
    assert shown.modelinfo["general.architecture"] == "qwen3"
    assert shown.modelinfo["qwen3.context_length"] == 40960
    assert "thinking" in shown.capabilities

    assert client.ps().models == []
    client.chat(model=MODEL, messages=USER, options={"num_ctx": 8192})
    running = client.ps().models
    assert [(m.model, m.context_length) for m in running] == [(MODEL, 8192)]
    assert running[0].expires_at is not None


def test_responder_is_used_when_queue_is_empty():
    seen = []

    def responder(body: dict) -> Reply:
        seen.append(body["messages"][-1]["content"])
        return Reply(content=["custom"])

    with FakeOllama(responder=responder) as server:
        server.queue("queued")
        with ollama.Client(host=server.url) as client:
            assert client.chat(model=MODEL, messages=USER).message.content == "queued"
            assert client.chat(model=MODEL, messages=USER).message.content == "custom"
    assert seen == ["How was my week?"]


# --------------------------------------------------------------------------- default responder


def test_default_responder_cites_the_briefed_episode(srv, client):
    chunks = list(client.chat(model=MODEL, messages=_briefed(), stream=True))
    pieces = [c.message.content for c in chunks[:-1]]
    assert all(3 <= len(p) <= 5 for p in pieces[:-1]) and 1 <= len(pieces[-1]) <= 5
    assert chunks[-1].eval_count == len(pieces)

    prose, citations = _split_answer("".join(pieces))
    assert citations == [
        {
            "episode": EPISODE_ID,
            "quote": "We walked past the old mill",
            "support": "verbatim",
        }
    ]
    assert citations[0]["quote"] in BRIEFING
    assert "2025-03-14" in prose and citations[0]["quote"] in prose

    again = client.chat(model=MODEL, messages=_briefed(), stream=True)
    assert [c.message.content for c in list(again)[:-1]] == pieces  # deterministic


def test_default_responder_without_episodes_cites_nothing():
    reply = default_responder({"messages": USER})
    prose, citations = _split_answer(reply.text)
    assert prose and citations == []
    assert reply.text.endswith(f"{CITATIONS_MARKER}\n[]")


def test_default_responder_thinks_only_when_asked():
    assert default_responder({"messages": _briefed(), "think": True}).thinking
    assert not default_responder({"messages": _briefed(), "think": False}).thinking


def test_split_pieces_cycles_sizes():
    assert split_pieces("abcdefghij", (3, 4)) == ["abc", "defg", "hij"]
    assert "".join(split_pieces("x" * 101, (3, 4, 5))) == "x" * 101


# --------------------------------------------------------------------------- standalone


def _read_line(proc: subprocess.Popen, timeout: float) -> str:
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.append(proc.stdout.readline()), daemon=True
    )
    reader.start()
    reader.join(timeout)
    return lines[0] if lines else ""


def test_standalone_mode_serves_the_default_responder():
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.ollama_server", "--port", "0", "--tokens", "5",
         "--model", MODEL, "--model", "gemma3:1b"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )  # fmt: skip
    try:
        line = _read_line(proc, timeout=8)
        assert line.startswith("listening on http://127.0.0.1:"), line
        url = line.split("listening on ", 1)[1].strip()

        with ollama.Client(host=url) as client:
            assert sorted(m.model for m in client.list().models) == ["gemma3:1b", MODEL]
            chunks = list(client.chat(model=MODEL, messages=_briefed(), stream=True))
            text = "".join(c.message.content for c in chunks)
            assert all(len(c.message.content.split()) == 3 for c in chunks[:5])
            _, citations = _split_answer(text)
            assert citations[0]["episode"] == EPISODE_ID
            assert chunks[-1].done
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
