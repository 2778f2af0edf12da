"""Issue 34, items 18 and 25: a model stream that ends before the server's end marker (an
OpenAI-compatible stream without ``finish_reason``/``[DONE]``, or closed mid-JSON; an Ollama
stream without ``done: true``) is a model error, never a complete reply; a web page where the
model's answer should be is named as what came back.

Real parts: a ``Session`` on a copy of the test memory (a real DuckDB file), the project's
protocol-faithful fakes on loopback (``Reply.end_after``, ``Reply.torn``, ``Reply.body``), the
headless ``chat --ndjson`` for the exit code.
"""

from __future__ import annotations

import json

import pytest

from sadie_tui.commands.context import Context
from sadie_tui.commands.headless import chat as headless_chat
from sadie_tui.engine.errors import exit_code_for
from sadie_tui.engine.events import Done, ErrorEvent, Token
from tests.support.ollama_server import Reply, split_pieces
from tests.support.turns import run_chat
from tests.test_openai_turns import BACKENDS, served, session

SAID = "You ran with Ines on several days and it went well. She was there."
PAGE = "<!doctype html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"


def _statuses(memory) -> list[str]:  # type: ignore[no-untyped-def]
    rows = memory.db.fetchall(
        "SELECT status FROM messages WHERE role = 'assistant' ORDER BY created_at"
    )
    return [r[0] for r in rows]


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize("torn", [False, True], ids=["no end marker", "closed mid-JSON"])
def test_a_stream_cut_before_its_end_is_never_complete(monkeypatch, memory, kind, torn):
    with served(kind, monkeypatch) as srv:
        srv.queue(Reply(split_pieces(SAID, 4), end_after=8, torn=torn))
        events = run_chat(session(memory), "who did I run with?")
    end = events[-1]
    assert not any(isinstance(e, Done) and e.status == "complete" for e in events)
    assert isinstance(end, ErrorEvent), end
    assert "\n" not in end.message and "before its end" in end.message, end.message
    assert exit_code_for(end.code) == 4
    assert "".join(e.value for e in events if isinstance(e, Token)).startswith("You ran")
    assert _statuses(memory)[-1] in ("interrupted", "error")


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_cut_stream_exits_4_in_chat_ndjson(monkeypatch, memory, kind, capsys):
    with served(kind, monkeypatch) as srv:
        srv.queue(Reply(split_pieces(SAID, 4), end_after=5))
        s = session(memory)
        ctx = Context(home=memory.home, settings=s.settings, _session=s)
        code = headless_chat(
            ctx, "who did I run with?", conversation_id=None, persona=None, new=True, ndjson=True
        )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 4
    assert lines[-1]["type"] == "error"
    assert not any(line["type"] == "done" for line in lines)


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_web_page_with_status_200_is_named(monkeypatch, memory, kind):
    with served(kind, monkeypatch) as srv:
        srv.queue(Reply(body=PAGE))
        events = run_chat(session(memory), "who did I run with?")
    end = events[-1]
    assert isinstance(end, ErrorEvent), end
    assert "nothing to show" not in end.message
    assert "HTML" in end.message and "502 Bad Gateway" in end.message, end.message
    assert "\n" not in end.message
