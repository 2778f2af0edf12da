"""A hostile trial's defects (issue 23, items 2–12), each reproduced with the input the trial
used: text a policy withheld, non-UTF-8 names and arguments, a holder that dies under its
client, hostile JSON bodies, signals in a stream, exports' file mode, forged citations in an
import, and "first" in retrieval.

Real parts throughout (a DuckDB memory, the project's Ollama-protocol server, the real HTTP
server and clients, subprocesses); a scripted ``FakeSession`` where the memory is not the
point.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from sadie_tui.config import load_settings
from sadie_tui.engine.companion import Companion
from sadie_tui.engine.events import (
    CitationsEvent,
    Done,
    EmotionEvent,
    Meta,
    Replace,
    Token,
)
from sadie_tui.engine.session import Session
from tests.support.fake_session import FakeSession
from tests.support.ollama_server import Reply, split_pieces
from tests.support.serve import running
from tests.support.turns import run_chat

TIMEOUT = 60.0

# --------------------------------------------------------------------------- item 2: withheld text

POLICIES = (
    '[[policy]]\nname = "no-diagnoses"\naction = "block"\n'
    'pattern = "(?i)you have depression"\nmessage = "sadie does not diagnose"\n'
    '[[policy]]\nname = "gentle"\naction = "rewrite"\npattern = "(?i)\\\\blazy\\\\b"\n'
    'replacement = "tired"\n'
)


def test_text_a_policy_withheld_is_stored_nowhere(server, memory) -> None:
    (memory.home / "policies.toml").write_text(POLICIES, encoding="utf-8")
    session = Session(memory, load_settings())
    comp = Companion(memory, load_settings())
    withheld = {
        "Honestly you have depression, Maya.": "blocked",
        "You seem lazy lately, Maya.": "complete",
    }
    for reply, status in withheld.items():
        server.queue(Reply(split_pieces(reply, 4)))
        events = run_chat(comp, "am I ok?")
        assert any(isinstance(e, Replace) and e.by_policy for e in events)
        done = events[-1]
        assert isinstance(done, Done) and done.status == status
        cid = events[0].conversation_id
        shown = json.dumps([m.to_json() for m in session.messages(cid)])  # show --json, GET
        exported = session.export(cid, "json")  # export --format json, GET …/export
        for text in (shown, exported, session.export(cid, "md")):
            assert reply not in text and "depression" not in text and "lazy" not in text


def _policy_turn() -> list:
    return [
        Meta("c1" * 16, "fake:1b", "friend", False, "m2", "m1", "am I ok?"),
        EmotionEvent("curious"),
        Token("Honestly you have "),
        Token("depression."),
        CitationsEvent(()),
        Replace("[blocked by no-diagnoses: sadie does not diagnose]", "policy no-diagnoses"),
        Done("m2", 1.0, 0, "blocked"),
    ]


def test_a_late_reader_gets_no_withheld_tokens(tmp_path: Path) -> None:
    session = FakeSession(tmp_path, replies=[_policy_turn()])
    with running(session) as api, httpx.Client(base_url=api.url, timeout=TIMEOUT) as c:
        started = c.post("/api/chat", json={"message": "am I ok?", "auto_continue": True})
        assert started.status_code == 202, started.text
        stream = started.json()["stream"]
        c.get(stream)  # follows the turn to its end: the next reader is a late one
        lines = [json.loads(line) for line in c.get(stream).text.splitlines()]
    types = [e["type"] for e in lines]
    assert types == ["meta", "emotion", "citations", "replace", "done"], types
    assert "depression" not in json.dumps(lines)
