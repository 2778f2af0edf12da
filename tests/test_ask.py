"""Ask: the persona's stages, grounding, abstention, telemetry only; and the headless CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading

import pytest

from sadie_tui.config import load_settings
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.prompt import TONE
from sadie_tui.engine.reasoners.rates import RATES_FILE, TAIL, Rates
from sadie_tui.engine.session import Session
from sadie_tui.engine.turns.ask import reframe, split_opinion
from tests.support.ollama_server import Reply, split_pieces


def ask(memory, question, persona=None):
    return asyncio.run(Session(memory, load_settings()).ask(question, persona=persona))


def episode(memory, title):
    return memory.db.fetchone("SELECT id::VARCHAR FROM episodes WHERE title = ?", [title])[0]


def test_grounded_answer(server, memory):
    ep = episode(memory, "Race day")
    server.queue(
        Reply(
            split_pieces(
                "You finished in 3:58.\nOPINION: that is a strong first marathon.\n@@CITATIONS@@\n"
                + json.dumps(
                    [
                        {
                            "episode": ep,
                            "quote": "Finished the Lisbon marathon in 3:58",
                            "support": "verbatim",
                        }
                    ]
                ),
                6,
            )
        )
    )
    result = ask(memory, "How fast was my marathon?")
    assert result.answer == "You finished in 3:58."
    assert result.opinion == "that is a strong first marathon."
    assert not result.abstained and result.persona == "analyst"
    assert [(c.episode_id, c.support) for c in result.citations] == [(ep, "verbatim")]
    assert result.grounding["counts"]["verbatim"] == 1 and result.grounding["score"] == 1.0
    names = [s.name for s in result.stages]
    assert names[:2] == ["reframe", "retrieve"] and "draft" in names and "ground_check" in names
    assert memory.db.fetchone("SELECT count(*) FROM conversations")[0] == 0
    assert memory.db.fetchone("SELECT count(*) FROM messages")[0] == 0
    turn = memory.db.fetchone("SELECT kind, abstained, grounding FROM turns")
    assert turn == ("ask", False, 1.0)
    # A one-shot answer is written greedily: the same question, the same answer; in the
    # persona's lens alone, with no register's tone.
    assert server.requests[0]["options"]["temperature"] == 0.0
    system = server.requests[0]["messages"][0]["content"]
    assert not any(tone in system for tone in TONE.values())


def test_revise_when_a_detail_is_unsupported(server, memory):
    ep = episode(memory, "Race day")
    server.queue(
        Reply(
            'You ran it in 3:15.\n@@CITATIONS@@\n[{"episode": "00000000-0000-4000-8000-000000000000", "quote": "x", "support": "verbatim"}]'
        ),
        # The citation pass (the tail was unusable) finds nothing either, and 3:15 is in no
        # note: the draft is revised, and the better supported revision is kept.
        Reply('{"citations": []}', stream=False),
        Reply(
            "You finished in 3:58.\n@@CITATIONS@@\n"
            + json.dumps(
                [
                    {
                        "episode": ep,
                        "quote": "finished the lisbon marathon in 3:58",
                        "support": "verbatim",
                    }
                ]
            )
        ),
    )
    result = ask(memory, "How fast was my marathon?")
    assert "revise" in [s.name for s in result.stages]
    assert "3:15" in server.requests[-1]["messages"][-1]["content"]
    assert result.answer == "You finished in 3:58." and not result.abstained


def test_abstains_without_grounded_citation(server, memory):
    # The draft cites nothing and shares no word with any note: no citation pass (nothing to
    # offer it), no revision (no detail to check), no evidence: it abstains.
    server.queue(Reply("You climbed Everest.\n@@CITATIONS@@\n[]"))
    result = ask(memory, "Did I climb Everest?")
    assert result.abstained and result.citations == []
    assert "does not hold enough" in result.answer
    assert server.pending == 0 and len(server.requests) == 1


def test_empty_memory_canned(tmp_home, embedder):
    with Memory.open(tmp_home, embedder=embedder) as mem:
        result = ask(mem, "anything?")
    assert result.answer == "there is nothing in the memory yet to answer from"
    assert result.abstained


def test_skeptic_counter_evidence(server, memory):
    ask(memory, "Do I sleep seven hours?", persona="skeptic")
    system = server.requests[-1]["messages"][0]["content"]
    assert "Slept 5h42m" in system
    assert "contested" in system


def test_reframe_and_opinion_split():
    from datetime import datetime

    text = reframe("so what did I do last week?", datetime(2026, 11, 30, 14))
    assert "2026-11-23" in text and "2026-11-29" in text and not text.lower().startswith("so")
    assert split_opinion("Answer.\nOPINION: mine") == ("Answer.", "mine")
    assert split_opinion("Answer only") == ("Answer only", None)


def _cli(home, *args, env_extra=None):
    env = {**os.environ, "SADIE_HOME": str(home), **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.at_rest
def test_cli_ask_json_offline(memory_home, monkeypatch):
    proc = _cli(
        memory_home,
        "--ask",
        "When did I finish the marathon?",
        "--json",
        env_extra={"OLLAMA_HOST": "http://127.0.0.1:9"},
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    for key in (
        "answer",
        "citations",
        "persona",
        "abstained",
        "grounding",
        "stages",
        "emotion",
        "model",
        "offline",
    ):
        assert key in data
    assert data["offline"] is True and data["citations"]
    assert {"episode_id", "quote", "support"} <= set(data["citations"][0])
    assert "answering offline" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.at_rest
def test_cli_chat_ndjson(memory_home, server):
    proc = _cli(
        memory_home,
        "chat",
        "How did the Warden refactor go?",
        "--ndjson",
        env_extra={"OLLAMA_HOST": server.url},
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "meta" and types[-1] == "done" and "token" in types and "citations" in types
    assert "conversation_id" in events[0] and events[0]["model"] == "qwen3:1.7b"
    assert all(set(e) >= {"type", "value"} for e in events if e["type"] == "token")
    cid = events[0]["conversation_id"]
    proc2 = _cli(
        memory_home,
        "chat",
        "and after that?",
        "--conversation",
        cid[:8],
        "--ndjson",
        env_extra={"OLLAMA_HOST": server.url},
    )
    assert proc2.returncode == 0, proc2.stderr
    assert json.loads(proc2.stdout.splitlines()[0])["conversation_id"] == cid


def test_cli_chat_model_error_exit_code(memory_home, server):
    server.models[:] = []
    proc = _cli(
        memory_home, "chat", "hi", env_extra={"OLLAMA_HOST": server.url, "SADIE_REASONER": "ollama"}
    )
    assert proc.returncode == 4
    assert "ollama pull qwen3:1.7b" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("sadie:")


def test_cli_usage_errors(memory_home):
    proc = _cli(memory_home, "chat", "hi", "--new", "--conversation", "abc")
    assert proc.returncode == 2
    proc = _cli(memory_home, "chat", "hi", "--conversation", "ffffffff")
    assert proc.returncode == 5 and "Traceback" not in proc.stderr


def test_a_looping_draft_is_stopped_not_waited_out(server, memory):
    # The model repeats itself and would go on until its token cap (the 1.5B model once took
    # 126 s so): the third time the sentence comes, the ask closes the model's stream, as
    # chat does. The rest of the reply is held back until a gate nobody opens: a draft read
    # to its end would never finish.
    sentence = "You finished the Lisbon marathon in 3:58. "
    server.queue(
        Reply(
            [sentence, sentence, sentence, "And again", " and again"],
            gate_after=4,
            gate=threading.Event(),
        ),
        Reply('{"s": ["S1"]}', stream=False),
    )
    session = Session(memory, load_settings())
    result = asyncio.run(asyncio.wait_for(session.ask("How fast was my marathon?"), 300))
    assert result.answer.count("3:58") == 2 and "again" not in result.answer
    assert result.grounding["cut"] == "repetition"
    # A reply cut short never reached its citations tail: it is not counted against the model.
    assert Rates(memory.home / RATES_FILE).habit(result.model, TAIL) == "0 of 0"
