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
from typing import Any, Literal

import httpx
import ollama
import pytest
from pydantic import BaseModel, Field

from tests.support.ollama_server import (
    CITATIONS_MARKER,
    FakeOllama,
    Reply,
    default_responder,
    instance_for,
    split_pieces,
    tokens_responder,
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


# --------------------------------------------------------------------------- structured outputs

OTHER_ID = "7d3e9c41-0a5b-4c2d-8e6f-1b2a3c4d5e6f"
THIRD_ID = "c0ffee00-1234-4abc-9def-0123456789ab"


def _citations_schema(ids: list[str]) -> dict:
    """The shape sadie sends: citations whose episode is one of the briefed ids."""
    return {
        "type": "object",
        "properties": {
            "citations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "episode": {"type": "string", "enum": ids},
                        "quote": {"type": "string"},
                        "support": {
                            "type": "string",
                            "enum": ["verbatim", "paraphrase", "inference"],
                        },
                    },
                    "required": ["episode", "quote", "support"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["citations"],
        "additionalProperties": False,
    }


_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def _errors(value: Any, schema: Any, root: dict, at: str = "$") -> list[str]:
    """A small JSON-schema check (the keywords these tests use); [] when valid."""
    if schema is True or schema == {}:
        return []
    if "$ref" in schema:
        node: Any = root
        for key in schema["$ref"].lstrip("#/").split("/"):
            node = node[key]
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return _errors(value, node, root, at) + _errors(value, rest, root, at)
    errors: list[str] = []
    for key in ("anyOf", "oneOf"):
        if key in schema:
            passing = [b for b in schema[key] if not _errors(value, b, root, at)]
            if not passing or (key == "oneOf" and len(passing) != 1):
                errors.append(f"{at}: no {key} branch fits {value!r}")
    for branch in schema.get("allOf", []):
        errors += _errors(value, branch, root, at)
    if "const" in schema and value != schema["const"]:
        errors.append(f"{at}: {value!r} != const {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{at}: {value!r} not in {schema['enum']!r}")
    kinds = schema.get("type")
    if kinds is not None:
        kinds = kinds if isinstance(kinds, list) else [kinds]
        ok = any(
            (isinstance(value, int) and not isinstance(value, bool))
            if k == "integer"
            else (isinstance(value, int | float) and not isinstance(value, bool))
            if k == "number"
            else isinstance(value, _TYPES[k])
            for k in kinds
        )
        if not ok:
            return [*errors, f"{at}: {value!r} is not {kinds}"]
    if isinstance(value, dict):
        props = schema.get("properties", {})
        errors += [f"{at}: missing {k!r}" for k in schema.get("required", []) if k not in value]
        for key, item in value.items():
            if key in props:
                errors += _errors(item, props[key], root, f"{at}.{key}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{at}: unexpected {key!r}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{at}: fewer than minItems")
        if len(value) > schema.get("maxItems", len(value)):
            errors.append(f"{at}: more than maxItems")
        for i, item in enumerate(value):
            errors += _errors(item, schema.get("items", {}), root, f"{at}[{i}]")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value < schema.get("minimum", value):
            errors.append(f"{at}: {value} below minimum")
        if value > schema.get("maximum", value):
            errors.append(f"{at}: {value} above maximum")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        errors.append(f"{at}: shorter than minLength")
    return errors


def _assert_valid(value: Any, schema: dict) -> None:
    assert _errors(value, schema, schema) == []


ENUM_SCHEMA = {
    "type": "object",
    "properties": {
        "mood": {"type": "string", "enum": ["calm", "anxious", "joyful"]},
        "version": {"const": 2},
        "level": {"type": "integer", "minimum": 3, "maximum": 9},
        "score": {"type": "number", "minimum": 0.5},
        "private": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "person": {"$ref": "#/$defs/Person"},
        "place": {"$ref": "#/definitions/Place"},
        "unused": {"type": "string"},
    },
    "required": ["mood", "version", "level", "score", "private", "tags", "note", "person",
                 "place"],
    "$defs": {
        "Person": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "role": {"enum": ["sister", "friend"]}},
        }
    },
    "definitions": {
        "Place": {"oneOf": [{"type": "object", "properties": {"city": {"type": "string"}},
                             "required": ["city"]}, {"type": "string"}]}
    },
}  # fmt: skip


def test_format_schema_with_enums_gets_schema_valid_json(srv, client):
    response = client.chat(model=MODEL, messages=USER, format=ENUM_SCHEMA, stream=False)

    value = json.loads(response.message.content)
    _assert_valid(value, ENUM_SCHEMA)
    assert set(value) == set(ENUM_SCHEMA["required"])  # only the required properties
    assert value["mood"] == "calm"
    assert value["version"] == 2
    assert value["level"] == 3
    assert value["score"] == 0.5
    assert value["private"] is True
    assert len(value["tags"]) == 2 and all(isinstance(t, str) for t in value["tags"])
    assert isinstance(value["note"], str)  # first anyOf branch
    assert value["person"]["role"] == "sister" and isinstance(value["person"]["name"], str)
    assert isinstance(value["place"]["city"], str)  # first oneOf branch
    assert response.done and response.eval_count >= 1


def test_format_pydantic_schema_round_trips(srv, client):
    class Person(BaseModel):
        name: str
        relation: Literal["sister", "friend", "colleague"]

    class Summary(BaseModel):
        mood: Literal["calm", "anxious"]
        people: list[Person] = Field(min_length=1, max_length=4)
        rating: int = Field(ge=1, le=5)
        note: str | None = None

    schema = Summary.model_json_schema()  # $defs + $ref, anyOf for the optional field
    response = client.chat(model=MODEL, messages=USER, format=schema)

    parsed = Summary.model_validate_json(response.message.content)
    assert parsed.mood == "calm"
    assert parsed.rating == 1
    assert [p.relation for p in parsed.people] == ["sister"]
    _assert_valid(json.loads(response.message.content), schema)


def test_citations_schema_cites_a_briefed_episode_verbatim(srv, client):
    schema = _citations_schema([OTHER_ID, EPISODE_ID, THIRD_ID])  # only EPISODE_ID is briefed

    chunks = list(client.chat(model=MODEL, messages=_briefed(), format=schema, stream=True))

    pieces = [c.message.content for c in chunks[:-1]]
    assert len(pieces) > 1 and all(1 <= len(p) <= 5 for p in pieces)
    assert chunks[-1].done and chunks[-1].eval_count == len(pieces)
    value = json.loads("".join(pieces))
    _assert_valid(value, schema)
    assert value == {
        "citations": [
            {"episode": EPISODE_ID, "quote": "We walked past the old mill", "support": "verbatim"}
        ]
    }
    assert value["citations"][0]["quote"] in BRIEFING


def test_citations_schema_picks_the_enum_value_from_the_user_message(srv, client):
    briefing = f"episode {THIRD_ID} (2025-04-02) Garden\nTomatoes finally came up today.\n"
    messages = [
        {"role": "system", "content": "You are sadie."},
        {"role": "user", "content": briefing + "\nWhat grew?"},
    ]
    schema = _citations_schema([EPISODE_ID, THIRD_ID])
    response = client.chat(model=MODEL, messages=messages, format=schema)
    citation = json.loads(response.message.content)["citations"][0]
    assert citation == {
        "episode": THIRD_ID,
        "quote": "Tomatoes finally came up today",
        "support": "verbatim",
    }


def test_citations_schema_without_briefed_ids_uses_the_first_and_no_quote(srv, client):
    schema = _citations_schema([OTHER_ID, THIRD_ID])  # EPISODE_ID is briefed, but not allowed
    response = client.chat(model=MODEL, messages=_briefed(), format=schema)
    value = json.loads(response.message.content)
    _assert_valid(value, schema)
    assert value["citations"][0]["episode"] == OTHER_ID
    assert value["citations"][0]["quote"] == ""


def test_citations_schema_through_generate(srv, client):
    schema = _citations_schema([EPISODE_ID])
    response = client.generate(model=MODEL, prompt=BRIEFING, format=schema)
    value = json.loads(response.response)
    assert value["citations"][0]["episode"] == EPISODE_ID
    assert value["citations"][0]["quote"] in BRIEFING


@pytest.mark.parametrize("stream", [True, False])
def test_format_json_gives_an_object(srv, client, stream):
    if stream:
        chunks = list(client.chat(model=MODEL, messages=_briefed(), format="json", stream=True))
        assert all(not c.done for c in chunks[:-1]) and chunks[-1].done
        content = "".join(c.message.content for c in chunks)
    else:
        response = client.chat(model=MODEL, messages=_briefed(), format="json", stream=False)
        assert response.done
        content = response.message.content
    assert json.loads(content) == {}
    assert srv.requests[-1]["format"] == "json"
    assert srv.requests[-1]["stream"] is stream


@pytest.mark.parametrize("stream", [True, False])
def test_format_reply_follows_the_request_stream_field(srv, client, stream):
    schema = _citations_schema([EPISODE_ID])
    with httpx.Client() as http:
        response = http.post(
            f"{srv.url}/api/chat",
            json={"model": MODEL, "messages": _briefed(), "format": schema, "stream": stream},
        )
    assert response.status_code == 200
    if stream:
        assert response.headers["content-type"] == "application/x-ndjson"
        lines = [json.loads(line) for line in response.text.splitlines() if line]
        assert len(lines) > 2 and lines[-1]["done"] is True
        content = "".join(line["message"]["content"] for line in lines)
    else:
        assert response.headers["content-type"].startswith("application/json")
        content = response.json()["message"]["content"]
    assert json.loads(content)["citations"][0]["episode"] == EPISODE_ID


def test_format_with_thinking_thinks_first_then_sends_json(srv, client):
    chunks = list(
        client.chat(model=MODEL, messages=_briefed(), format="json", think=True, stream=True)
    )
    assert chunks[0].message.thinking and chunks[0].message.content == ""
    assert json.loads("".join(c.message.content for c in chunks)) == {}


def test_queued_reply_wins_over_the_schema(srv, client):
    schema = _citations_schema([EPISODE_ID])
    srv.queue('{"citations": [{"episode": "nope"', Reply(content=['{"citations": 3}']))

    malformed = client.chat(model=MODEL, messages=_briefed(), format=schema).message.content
    invalid = list(client.chat(model=MODEL, messages=_briefed(), format=schema, stream=True))
    generated = client.chat(model=MODEL, messages=_briefed(), format=schema).message.content

    assert malformed == '{"citations": [{"episode": "nope"'
    assert [c.message.content for c in invalid[:-1]] == ['{"citations": 3}']
    assert json.loads(generated)["citations"][0]["episode"] == EPISODE_ID
    assert srv.pending == 0


def test_format_requests_keeps_the_schema_verbatim(srv, client):
    schema = _citations_schema([EPISODE_ID, OTHER_ID])
    sent = json.loads(json.dumps(schema))
    client.chat(model=MODEL, messages=_briefed())
    client.chat(model=MODEL, messages=_briefed(), format=schema)
    client.chat(model=MODEL, messages=USER, format="")  # "" means no format
    client.generate(model=MODEL, prompt="Anything?", format="json")

    assert len(srv.requests) == 4
    assert "format" not in srv.requests[0]
    assert [r["format"] for r in srv.format_requests] == [sent, "json"]
    assert srv.format_requests[1]["prompt"] == "Anything?"
    assert schema == sent  # nothing mutated the caller's schema either


def test_invalid_format_is_an_ollama_style_error(srv):
    body = {"model": MODEL, "messages": USER, "format": "xml"}  # the client refuses to send it
    with httpx.Client() as http:
        single = http.post(f"{srv.url}/api/chat", json={**body, "stream": False})
        streamed = http.post(f"{srv.url}/api/chat", json=body)
    assert single.status_code == 500
    assert single.json()["error"].startswith('invalid format: "xml"')
    lines = [json.loads(line) for line in streamed.text.splitlines() if line]
    assert lines == [{"error": single.json()["error"]}]
    assert srv.format_requests[0]["format"] == "xml"


def test_instance_for_handles_the_schema_keywords():
    assert instance_for("json", {}) == {}
    assert instance_for({"type": "object"}) == {}
    assert instance_for({"type": "array", "items": {"type": "integer"}}) == [0]
    assert instance_for({"type": "array", "maxItems": 0}) == []
    assert instance_for({"type": "array", "items": {"const": "x"}, "minItems": 3}) == ["x"] * 3
    assert instance_for({"type": "integer", "minimum": 4}) == 4
    assert instance_for({"type": "integer", "exclusiveMinimum": 4}) == 5
    assert instance_for({"type": "number", "maximum": -2}) == -2
    assert instance_for({"type": "boolean"}) is True
    assert instance_for({"type": ["null", "string"]}) == "text"
    assert instance_for({"enum": [7, "seven"]}) == 7
    assert instance_for({"type": "string", "format": "date"}) == "2025-01-01"
    assert instance_for({"type": "string", "minLength": 8}) == "textxxxx"
    assert instance_for({"oneOf": [{"type": "boolean"}, {"type": "string"}]}) is True
    assert instance_for(
        {"allOf": [{"properties": {"a": {"const": 1}}}, {"properties": {"b": {"const": 2}}}]}
    ) == {"a": 1, "b": 2}
    nested = {
        "type": "object",
        "properties": {"a": {"$ref": "#/definitions/A"}, "b": {"type": "string"}},
        "required": ["a"],
        "definitions": {"A": {"$ref": "#/$defs/B"}},
        "$defs": {"B": {"type": "array", "items": {"enum": ["deep"]}}},
    }
    assert instance_for(nested) == {"a": ["deep"]}
    for bad in ("xml", 3, ["json"], {"$ref": "#/$defs/Missing"}, {"$ref": "#"}):
        with pytest.raises(ValueError):
            instance_for(bad)


def test_instance_for_cites_successive_briefed_episodes():
    body = {
        "messages": [
            {
                "role": "system",
                "content": BRIEFING
                + f"episode {THIRD_ID} (2025-04-02) Garden\nTomatoes finally came up today.\n",
            }
        ]
    }
    schema = _citations_schema([THIRD_ID, EPISODE_ID])
    schema["properties"]["citations"]["minItems"] = 2
    value = instance_for(schema, body)
    _assert_valid(value, schema)
    assert [c["episode"] for c in value["citations"]] == [EPISODE_ID, THIRD_ID]
    assert all(c["quote"] in body["messages"][0]["content"] for c in value["citations"])


def test_tokens_responder_answers_format_requests_with_json():
    body = {"messages": _briefed(), "format": _citations_schema([EPISODE_ID])}
    reply = tokens_responder(50, delay=0.01)(body)
    assert json.loads(reply.text)["citations"][0]["episode"] == EPISODE_ID
    assert reply.delay == 0.01
    plain = tokens_responder(3)({"messages": _briefed()})
    assert CITATIONS_MARKER in plain.text


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
