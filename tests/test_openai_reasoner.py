"""The OpenAI-compatible reasoner: the real ``openai`` client against the project's scripted
OpenAI-protocol server (SSE chunks, ``[DONE]``, usage, errors mid-stream, servers that refuse
``response_format`` or ``stream_options``, keys, unknown models) on loopback."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from types import SimpleNamespace

import openai
import pytest

from sadie_tui.engine.errors import (
    ErrorKind,
    ModelError,
    ModelMissing,
    ModelStreamError,
    ModelTimeout,
    ModelUnreachable,
)
from sadie_tui.engine.reasoners.base import Piece
from sadie_tui.engine.reasoners.openai import (
    RECHECK,
    OpenAIReasoner,
    json_of,
    list_models,
    model_status,
)
from sadie_tui.engine.reasoners.rates import RATES_FILE, Budget, Rates
from tests.support.openai_server import FakeOpenAI, Reply

MODEL = "qwen3:1.7b"
EPISODE = "0b6f2a9e-3c1d-4e8f-9a7b-5d2c1e0f4a63"
BRIEFING = SimpleNamespace(
    messages=[
        {
            "role": "system",
            "content": f"episode {EPISODE} (2025-03-14) Walk by the river\n"
            "We walked past the old mill and Anna said she is moving to Leeds.\n",
        },
        {"role": "user", "content": "What did Anna say?"},
    ],
    temperature=0.4,
)
SCHEMA = {
    "type": "object",
    "properties": {
        "citations": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "s": {"type": "string", "enum": ["S1", "S2"]},
                    "support": {"type": "string", "enum": ["verbatim", "paraphrase"]},
                },
                "required": ["s", "support"],
            },
        }
    },
    "required": ["citations"],
}
BUDGET = Budget(first=10.0, stall=10.0, cap=20.0)
PLAIN = 'Sure. ```json\n{"citations": [{"s": "S2", "support": "paraphrase"}]}\n```'


def reasoner(srv: FakeOpenAI, **kw) -> OpenAIReasoner:
    kw.setdefault("rates", Rates())
    return OpenAIReasoner(srv.url, kw.pop("model", MODEL), **kw)


def pieces(r: OpenAIReasoner, **kw) -> list[Piece]:
    async def go() -> list[Piece]:
        return [p async for p in r.stream(BRIEFING, **kw)]

    return asyncio.run(go())


def structured(r: OpenAIReasoner, budget: Budget = BUDGET) -> str:
    return asyncio.run(r.structured(BRIEFING, BRIEFING.messages, SCHEMA, budget=budget))


def failure(r: OpenAIReasoner) -> ModelError:
    with pytest.raises(ModelError) as err:
        pieces(r)
    return err.value


@pytest.fixture
def srv():
    with FakeOpenAI() as server:
        yield server


# --------------------------------------------------------------------------- streaming


def test_content_and_reasoning_content_become_pieces_in_order(srv):
    srv.queue(Reply(content=["Anna ", "is moving."], thinking=["Let me ", "look."]))
    sent: list[float] = []
    r = reasoner(srv)
    got = pieces(r, sent=lambda: sent.append(time.perf_counter()))
    assert got == [
        Piece("thinking", "Let me "),
        Piece("thinking", "look."),
        Piece("content", "Anna "),
        Piece("content", "is moving."),
    ]
    assert len(sent) == 1
    body = srv.requests[-1]
    assert body["stream"] is True and body["messages"] == BRIEFING.messages
    assert body["stream_options"] == {"include_usage": True} and body["temperature"] == 0.4
    assert r.last_done_reason == "stop" and r.last_eval_count == 4  # the usage chunk's count


def test_the_reasoning_field_and_think_tags_in_content(monkeypatch):
    """``reasoning`` (OpenRouter, Ollama's /v1) is thinking too; ``<think>`` inside the
    content is left as it came, for the stream filter downstream."""
    with FakeOpenAI(reasoning_field="reasoning") as srv:
        srv.queue(Reply(content=["<think>plan</think>", "Hi."], thinking=["hmm"]))
        got = pieces(reasoner(srv))
    assert got == [
        Piece("thinking", "hmm"),
        Piece("content", "<think>plan</think>"),
        Piece("content", "Hi."),
    ]


def test_usage_and_timing_feed_the_rates(srv):
    srv.queue(Reply(content=["word "] * 40, delay=0.002))
    rates = Rates()
    r = reasoner(srv, rates=rates, reply_tokens=300)
    pieces(r)
    rate = rates.get(MODEL)
    assert rate.turns == 1 and rate.eval_tps > 0
    assert r.last_eval_count == 40 and r.last_eval_seconds > 0
    assert srv.requests[-1]["max_tokens"] == 300


def test_a_server_without_usage_is_counted_here(srv):
    srv.usage = "ignore"
    srv.queue(Reply(content=["a "] * 12, thinking=["t"] * 3))
    r = reasoner(srv)
    pieces(r)
    assert r.last_eval_count == 15  # every piece, thinking too, as Ollama's eval_count


def test_a_server_refusing_stream_options_is_asked_again_and_remembered(tmp_path: Path):
    rates = Rates(tmp_path / RATES_FILE)
    with FakeOpenAI(usage="reject") as srv:
        srv.queue(Reply(content=["one", " two"]), Reply(content=["three"]))
        r = reasoner(srv, rates=rates)
        assert "".join(p.text for p in pieces(r)) == "one two"
        assert ["stream_options" in b for b in srv.requests] == [True, False]
        pieces(r)  # the next request goes without it at once
        assert ["stream_options" in b for b in srv.requests] == [True, False, False]
    rates.save()
    saved = json.loads((tmp_path / RATES_FILE).read_text())
    assert saved["@features"][f"{srv.url} {MODEL}"]["usage"] is False
    assert Rates(tmp_path / RATES_FILE).feature(f"{srv.url} {MODEL}")["usage"] is False


def test_length_is_the_done_reason(srv):
    srv.queue(Reply(content=["cut"], done_reason="length"))
    r = reasoner(srv)
    pieces(r)
    assert r.last_done_reason == "length"


def test_a_stall_between_pieces_is_a_timeout(srv):
    srv.queue(Reply(content=["a", "b", "c"], stall_after=1, stall_seconds=5))
    err = failure(reasoner(srv, read_timeout=0.3))
    assert isinstance(err, ModelTimeout) and "timed out (reply)" in err.message


# --------------------------------------------------------------------------- errors


def test_an_error_mid_stream_is_a_stream_error(srv):
    srv.queue(Reply(content=["a", "b", "c"], error_after=2, error_message="CUDA out of memory"))
    err = failure(reasoner(srv))
    assert isinstance(err, ModelStreamError) and err.code == ErrorKind.STREAM
    assert err.message == "the model stopped with an error mid-reply: CUDA out of memory"


def test_an_unknown_model_is_missing(srv):
    err = failure(reasoner(srv, model="llama3:70b"))
    assert isinstance(err, ModelMissing) and err.code == ErrorKind.MODEL_MISSING
    assert err.message == f"the model llama3:70b is not served at {srv.url}"
    assert "SADIE_MODEL" in (err.fix or "")


def test_a_wrong_key_names_the_variable_never_the_key():
    with FakeOpenAI(key="right") as srv:
        err = failure(reasoner(srv, api_key="wrong", key_env="MY_LLM_KEY"))
        assert srv.authorizations[-1] == "Bearer wrong"
        srv.queue(Reply(content=["ok"]))
        assert pieces(reasoner(srv, api_key="right")) == [Piece("content", "ok")]
    assert err.message == f"the model server at {srv.url} refused the API key (401)"
    assert err.fix == "set MY_LLM_KEY to a key it accepts" and "wrong" not in err.one_line()


def test_no_key_where_one_is_wanted_says_which_variable():
    with FakeOpenAI(key="right") as srv:
        err = failure(reasoner(srv, key_env="MY_LLM_KEY"))
        assert srv.authorizations[-1] == "Bearer sadie-no-key"  # the client insists on one
    assert (
        err.one_line() == f"the model server at {srv.url} wants an API key (401) (set MY_LLM_KEY)"
    )


def test_a_connection_dropped_mid_reply_is_a_stream_error(srv):
    srv.queue(Reply(content=["a", "b", "c"], stall_after=2, stall_seconds=0))
    err = failure(reasoner(srv))
    assert isinstance(err, ModelStreamError)
    assert err.message.startswith("the connection to the model server broke mid-reply")


def test_a_wrong_path_says_where_the_api_usually_is(srv):
    r = OpenAIReasoner(srv.url.removesuffix("/v1") + "/api", MODEL)
    err = failure(r)
    assert "has no chat completions endpoint (404)" in err.message and "/v1" in (err.fix or "")
    listing = asyncio.run(model_status(r.base_url, MODEL))
    assert listing == (False, f"{r.base_url} does not list its models (404)", err.fix)


def test_a_server_error_status_is_one_line(srv):
    srv.queue(Reply(status=503, error_message="loading model\n please wait"))
    err = failure(reasoner(srv))
    assert err.one_line() == "the model server answered 503: loading model please wait"


def test_an_absent_server_is_unreachable():
    err = failure(OpenAIReasoner("http://127.0.0.1:9/v1", MODEL, connect_timeout=1))
    assert isinstance(err, ModelUnreachable) and err.code == ErrorKind.UNREACHABLE
    assert err.message == "the model server is not reachable at http://127.0.0.1:9/v1"
    assert "OPENAI_BASE_URL" in (err.fix or "")


# --------------------------------------------------------------------------- the citation pass


def test_structured_asks_for_a_json_schema(srv):
    r = reasoner(srv)
    text = structured(r)
    assert json.loads(text) == {"citations": [{"s": "S1", "support": "verbatim"}]}
    fmt = srv.requests[-1]["response_format"]
    assert fmt == {"type": "json_schema", "json_schema": {"name": "citations", "schema": SCHEMA}}
    assert srv.requests[-1]["temperature"] == 0.0 and srv.requests[-1]["max_tokens"] == 256


@pytest.mark.parametrize("status", [400, 422, 500])
def test_a_server_refusing_json_schema_gets_json_object_with_the_schema(status):
    with FakeOpenAI(formats=("json_object",), reject_status=status) as srv:
        r = reasoner(srv)
        assert json.loads(structured(r))["citations"][0]["s"] == "S1"
        kinds = [b["response_format"]["type"] for b in srv.requests]
        assert kinds == ["json_schema", "json_object"]
        assert srv.requests[-1]["response_format"]["schema"] == SCHEMA
        structured(r)  # remembered: straight to json_object
        assert [b["response_format"]["type"] for b in srv.requests][2:] == ["json_object"]


def test_a_server_refusing_every_format_gets_the_plain_request(tmp_path: Path):
    rates = Rates(tmp_path / RATES_FILE)
    with FakeOpenAI(formats=()) as srv:
        srv.queue(PLAIN, PLAIN)
        r = reasoner(srv, rates=rates)
        assert json.loads(structured(r)) == {"citations": [{"s": "S2", "support": "paraphrase"}]}
        assert [b.get("response_format", {}).get("type") for b in srv.requests] == [
            "json_schema",
            "json_object",
            None,
        ]
        assert srv.requests[-1]["messages"] == BRIEFING.messages  # the request's own words
        rates.save()
        # A new process (a new Rates from the file) asks plainly at once.
        again = reasoner(srv, rates=Rates(tmp_path / RATES_FILE))
        structured(again)
        assert "response_format" not in srv.requests[-1] and len(srv.requests) == 4


def test_a_fallback_is_tried_again_after_a_week(srv):
    rates = Rates()
    key = f"{srv.url} {MODEL}"
    rates.remember(key, structured="plain", checked=time.time() - RECHECK - 60)
    structured(reasoner(srv, rates=rates))
    assert srv.requests[-1]["response_format"]["type"] == "json_schema"
    assert rates.feature(key)["structured"] == "json_schema"


def test_the_pass_budget_cuts_a_pass_that_does_not_start(srv):
    srv.queue(Reply(content=["{}"], stall_after=0, stall_seconds=5))
    with pytest.raises(ModelTimeout, match="did not start within its budget"):
        structured(reasoner(srv), Budget(first=0.3, stall=0.3, cap=5.0))


def test_a_pass_failure_is_translated(srv):
    srv.queue(Reply(status=500, error_message="grammar failed to compile?"))
    with pytest.raises(ModelError, match="the model server answered 500"):
        structured(reasoner(srv))


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('{"citations": []}', {"citations": []}),
        ('<think>{"no": 1}</think>\nHere: {"citations": [1]} done', {"citations": [1]}),
        ('```json\n{"citations": [{"s": "S1"}]}\n```', {"citations": [{"s": "S1"}]}),
        ('broken {"a": } then {"citations": 2}', {"citations": 2}),
    ],
)
def test_json_of_finds_the_object_in_prose(text, found):
    assert json.loads(json_of(text)) == found


def test_json_of_leaves_what_holds_no_object():
    assert json_of("no json here [1, 2]") == "no json here [1, 2]"


# --------------------------------------------------------------------------- models and status


def test_list_models_and_status():
    with FakeOpenAI(models=["qwen3:1.7b", "a-model.gguf"], key="k") as srv:
        names = [m.name for m in asyncio.run(list_models(srv.url, "k"))]
        ok = asyncio.run(model_status(srv.url, MODEL, "k"))
        missing = asyncio.run(model_status(srv.url, "gpt-9", "k"))
        refused = asyncio.run(model_status(srv.url, MODEL, "wrong", key_env="LLM_KEY"))
        keyless = asyncio.run(model_status(srv.url, MODEL, None, key_env="LLM_KEY"))
        assert ("GET", "/v1/models") in srv.hits
    assert names == ["a-model.gguf", "qwen3:1.7b"]
    assert ok == (True, f"{MODEL} at {srv.url}", None)
    assert missing[0] is False and "it serves a-model.gguf, qwen3:1.7b" in missing[1]
    assert refused[0] is False and refused[2] == "set LLM_KEY to a key it accepts"
    assert keyless == (
        False,
        f"the model server at {srv.url} wants an API key (401)",
        "set LLM_KEY",
    )
    away = asyncio.run(model_status("http://127.0.0.1:9/v1", MODEL))
    assert away[0] is False and away[1].startswith("the model server is not reachable")


def test_the_client_is_the_official_one(srv):
    """The fake speaks the protocol the official client reads (not only ours)."""
    client = openai.OpenAI(base_url=srv.url, api_key="x", max_retries=0)
    srv.queue(Reply(content=["Hel", "lo"]))
    stream = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 2
    srv.queue(Reply(content=["whole"]))
    single = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "x"}]
    )
    assert single.choices[0].message.content == "whole"
    assert [m.id for m in client.models.list()] == [MODEL]
