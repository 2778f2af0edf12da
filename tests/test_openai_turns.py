"""Chat and ask end to end through a ``Session`` with ``SADIE_REASONER=openai``: the same
script, served once by the Ollama-protocol fake and once by the OpenAI-protocol fake, gives
the same events in the same order, the same answers and citations, and the same error kinds
and exit codes. The session picks the reasoner itself from the settings
(``context.pick_reasoner`` through ``reasoners.choose``), as every face's does."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from sadie_tui.commands.context import Context
from sadie_tui.commands.headless import chat as headless_chat
from sadie_tui.config import load_settings
from sadie_tui.engine.errors import exit_code_for
from sadie_tui.engine.events import CitationsEvent, Done, Meta, Token, Waiting
from sadie_tui.engine.session import Session
from tests.support.ollama_server import FakeOllama, Reply, split_pieces
from tests.support.openai_server import FakeOpenAI
from tests.support.turns import episode_of, run_chat

BACKENDS = ("ollama", "openai")


@contextmanager
def served(kind: str, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> Iterator[Any]:
    """The fake server of ``kind``, with the settings pointing at it."""
    monkeypatch.setenv("SADIE_REASONER", kind)
    if kind == "ollama":
        with FakeOllama(**kw) as srv:
            monkeypatch.setenv("OLLAMA_HOST", srv.url)
            yield srv
    else:
        with FakeOpenAI(**kw) as srv:
            monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
            yield srv


def session(memory) -> Session:
    return Session(memory, load_settings())


def tail(ep: str, quote: str) -> str:
    return "\n@@CITATIONS@@\n" + json.dumps(
        [{"episode": ep, "quote": quote, "support": "verbatim"}]
    )


def summary(events: list) -> dict[str, Any]:
    """What must not depend on the protocol: the kinds in order (a run of one kind counted
    once, the once-a-second ticks left out), the text, the citations, the end."""
    kinds: list[str] = []
    for e in events:
        name = type(e).__name__
        if not isinstance(e, Waiting) and (not kinds or kinds[-1] != name):
            kinds.append(name)
    cites = next((e for e in events if isinstance(e, CitationsEvent)), None)
    end = events[-1]
    meta = events[0]
    return {
        "kinds": kinds,
        "text": "".join(e.value for e in events if isinstance(e, Token)),
        "citations": cites
        and [(c.episode_id, c.support, c.origin) for c in (*cites.value, *cites.found)],
        "repaired": cites and (cites.repaired, cites.tail),
        "end": (
            (end.status, end.cut)
            if isinstance(end, Done)
            else (end.code, exit_code_for(end.code), end.fix is not None)
        ),
        "model": isinstance(meta, Meta) and (meta.model, meta.offline),
    }


def both(monkeypatch, memory, script: Callable[[], list[Reply]], message: str, **kw) -> list:
    """The summaries of one chat turn under each protocol."""
    out = []
    for kind in BACKENDS:
        with served(kind, monkeypatch, **kw) as srv:
            srv.queue(*script())
            out.append(summary(run_chat(session(memory), message)))
    return out


def scripts(ep: str) -> dict[str, Callable[[], list[Reply]]]:
    said = "You shipped the auth refactor."
    return {
        "tail": lambda: [Reply(split_pieces(said + tail(ep, "Shipped the auth refactor"), 3))],
        "think tags": lambda: [
            Reply(split_pieces("<think>private plan</think>\n\n" + said + tail(ep, "Shipped"), 5))
        ],
        "thinking field": lambda: [
            Reply(split_pieces(said + tail(ep, "Shipped"), 4), thinking=["let me ", "look"])
        ],
        # No tail: the citation pass, whose JSON the default responders write under the
        # schema (Ollama's format, OpenAI's response_format).
        "citation pass": lambda: [Reply(split_pieces(said + " It felt slower than it should.", 4))],
        "cut at the token cap": lambda: [Reply(split_pieces(said, 4), done_reason="length")],
        "only reasoning": lambda: [Reply(split_pieces("<think>I will never close this", 4))],
        "error mid-stream": lambda: [
            Reply(split_pieces(said, 3), error_after=3, error_message="out of memory")
        ],
    }


@pytest.mark.parametrize("name", list(scripts("x")))
def test_chat_events_are_the_same_under_both_protocols(monkeypatch, memory, name):
    ep, _ = episode_of(memory, "Warden retro")
    ollama, openai = both(monkeypatch, memory, scripts(ep)[name], "How did the Warden refactor go?")
    assert openai == ollama
    assert ollama["model"] == ("qwen3:1.7b", False)
    if name in ("tail", "think tags", "thinking field"):
        assert ollama["text"] == "You shipped the auth refactor."
        assert ollama["citations"] == [(ep, "verbatim", "model")]
    if name == "thinking field":
        assert "Thinking" in ollama["kinds"]
    if name == "citation pass":
        assert "Checking" in ollama["kinds"] and ollama["repaired"] == (True, "missing")
        assert ollama["citations"] and ollama["citations"][0][0] == ep
    if name == "cut at the token cap":
        assert ollama["end"] == ("complete", "tokens")
    if name == "only reasoning":
        assert ollama["end"] == ("no_answer", 4, True)
    if name == "error mid-stream":
        assert ollama["end"] == ("stream", 4, False) and ollama["text"]


def test_the_pass_on_a_server_without_response_format(monkeypatch, memory):
    """A server that refuses both response formats gets the plain request; its JSON, cut out
    of the prose around it, is policed as the schema-bound one is."""
    ep, _ = episode_of(memory, "Warden retro")
    said = "You shipped the auth refactor. It felt slower than it should."
    handles = '{"s": ["S1"]}'
    with served("ollama", monkeypatch) as srv:
        srv.queue(Reply(split_pieces(said, 4)), Reply([handles]))
        ollama = summary(run_chat(session(memory), "Warden?"))
    with served("openai", monkeypatch, formats=()) as srv:
        srv.queue(
            Reply(split_pieces(said, 4)), Reply(["Here you are:\n```json\n", handles, "\n```"])
        )
        openai = summary(run_chat(session(memory), "Warden?"))
        passes = srv.requests[1:]
    assert openai == ollama and ollama["repaired"] == (True, "missing")
    assert ollama["citations"][0][:2] == (ep, "verbatim")
    assert [b.get("response_format", {}).get("type") for b in passes] == [
        "json_schema",
        "json_object",
        None,
    ]


@pytest.mark.parametrize("breakage", ["model missing", "server away"])
def test_model_errors_have_the_same_kind_and_exit_code(monkeypatch, memory, breakage, capsys):
    ends, codes = [], []
    for kind in BACKENDS:
        with served(kind, monkeypatch, models=["llama3:8b"]) as srv:
            if breakage == "server away":
                srv.stop()
            s = session(memory)
            ends.append(summary(run_chat(s, "hello"))["end"])
            ctx = Context(home=memory.home, settings=s.settings, _session=s)
            codes.append(
                headless_chat(
                    ctx, "hello", conversation_id=None, persona=None, new=True, ndjson=True
                )
            )
    assert ends[0] == ends[1]
    assert ends[0][0] == ("model_missing" if breakage == "model missing" else "unreachable")
    assert codes == [4, 4]
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["type"] for line in lines if line["type"] == "error"] == ["error", "error"]


# --------------------------------------------------------------------------- ask


def ask_both(monkeypatch, memory, script: Callable[[], list[Reply]], question: str) -> list:
    results = []
    for kind in BACKENDS:
        with served(kind, monkeypatch) as srv:
            srv.queue(*script())
            data = asyncio.run(session(memory).ask(question)).as_json()
        results.append(
            {
                "answer": data["answer"],
                "citations": [(c["episode_id"], c["support"]) for c in data["citations"]],
                "abstained": data["abstained"],
                "offline": data["offline"],
                "model": data["model"],
                "score": data["grounding"]["score"],
                "stages": [s["name"] for s in data["stages"]],
            }
        )
    return results


def test_ask_is_the_same_under_both_protocols(monkeypatch, memory):
    ep, _ = episode_of(memory, "Race day")
    answer = "You finished in 3:58." + tail(ep, "Finished the Lisbon marathon in 3:58")
    ollama, openai = ask_both(
        monkeypatch, memory, lambda: [Reply(split_pieces(answer, 6))], "How fast was my marathon?"
    )
    assert openai == ollama
    assert ollama["answer"] == "You finished in 3:58." and ollama["citations"] == [(ep, "verbatim")]
    assert not ollama["abstained"] and not ollama["offline"] and ollama["score"] == 1.0


def test_ask_with_the_pass_is_the_same_under_both_protocols(monkeypatch, memory):
    said = "You finished the Lisbon marathon in 3:58."
    ollama, openai = ask_both(
        monkeypatch, memory, lambda: [Reply(split_pieces(said, 5))], "How fast was my marathon?"
    )
    assert openai == ollama
    assert "citation_pass" in ollama["stages"] and ollama["citations"]


@pytest.mark.parametrize("kind", BACKENDS)
def test_the_session_checks_and_lists_the_configured_server(kind, memory, monkeypatch):
    """The app's model check and its F4 picker ask the server the settings point at."""
    with served(kind, monkeypatch) as srv:
        s = session(memory)
        status = asyncio.run(s.check_model(fresh=True))
        assert status.online and status.host.startswith(srv.url.rstrip("/"))
        names = [m.name for m in asyncio.run(s.models())]
        assert status.model in names
