"""`sadie reflect` killed with SIGKILL mid-way, in a real subprocess, then resumed: every batch
it finished is in the memory, the batch in flight left no trace and waits, and the next run
reads only what is left."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from sadie_tui.config import Settings
from sadie_tui.engine.operations import ListBeliefs, ShowBelief
from sadie_tui.engine.session import Session
from tests.support.ollama_server import Reply
from tests.support.reflect_model import ReflectModel, Scripted
from tests.test_reflect import RUN, SLOW, WORRY

ROOT = Path(__file__).resolve().parents[1]
GARDEN = Scripted("garden needed water", "I look after the garden", "the garden needed water again")
_SHOWN = re.compile(r"^E\d+ \((\d{4}-\d{2}-\d{2})\) (.*)$", re.M)


def shown_titles(body: dict) -> list[str]:
    return [m.group(2) for m in _SHOWN.finditer(body["messages"][-1]["content"])]


def test_a_killed_reflection_loses_at_most_the_batch_in_flight(
    many_home: Path,
    tmp_home: Path,
    tmp_path: Path,
    server,
    embedder,  # noqa: F811
) -> None:
    shutil.copytree(many_home, tmp_home)
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "config.toml").write_text("num_ctx = 2048\n", encoding="utf-8")
    model = ReflectModel(beliefs=[RUN, WORRY, SLOW, GARDEN])
    second = threading.Event()

    def responder(body: dict) -> Reply:
        reply = model(body)
        if model.proposals == 2:
            reply.stall_after, reply.stall_seconds = 0, 60.0  # the second batch never answers
            second.set()
        return reply

    server.responder = responder
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SADIE_REASONER": "ollama",
        "OLLAMA_HOST": server.url,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "sadie_tui.cli", "reflect", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The second batch's request is out: the first batch was committed before it.
        assert second.wait(180), proc.communicate(timeout=60)
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    proposals = [
        b for b in server.requests if "beliefs" in (b.get("format") or {}).get("properties", {})
    ]
    first, in_flight = shown_titles(proposals[0]), shown_titles(proposals[1])
    assert first and in_flight and not set(first) & set(in_flight)

    server.responder = model
    session = Session.open(
        tmp_home, Settings(ollama_host=server.url, reasoner="ollama", num_ctx=2048)
    )
    try:
        kept = {b.statement: b for b in session.call(ListBeliefs(origin="derived"))}
        # The first batch's beliefs, each whole (a quote and a history line); nothing of the second.
        assert set(kept) == {SLOW.statement, GARDEN.statement}
        for belief in kept.values():
            detail = session.call(ShowBelief(belief.id))
            assert detail.evidence and detail.changes[0].action == "proposed"
        asked_before = len(server.requests)
        report = session.reflect()
        assert report.episodes == 15 - len(first) and report.left == 0
        resumed = [
            shown_titles(b)
            for b in server.requests[asked_before:]
            if "beliefs" in (b.get("format") or {}).get("properties", {})
        ]
        assert resumed[0] == in_flight  # the batch in flight is read again, from its start
        assert not {t for titles in resumed for t in titles} & set(first)  # the first is not
        assert {b.statement for b in session.call(ListBeliefs(origin="derived"))} == {
            RUN.statement,
            WORRY.statement,
            SLOW.statement,
            GARDEN.statement,
        }
    finally:
        session.close()


def test_a_killed_reflection_run_does_not_stay_running(
    memory_home: Path,
    tmp_path: Path,
    server,
    embedder,  # noqa: F811
) -> None:
    """Issue 34, item 25: the run of a `sadie reflect` killed with SIGKILL stayed ``running``
    in reflection_runs for ever; the next sadie to open the memory marks it ``interrupted``."""
    from sadie_tui.engine.memory import Memory

    asked = threading.Event()
    model = ReflectModel(beliefs=[RUN])

    def responder(body: dict) -> Reply:
        reply = model(body)
        reply.stall_after, reply.stall_seconds = 0, 60.0  # never answers
        asked.set()
        return reply

    server.responder = responder
    env = {**os.environ, "SADIE_REASONER": "ollama", "OLLAMA_HOST": server.url}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sadie_tui.cli", "reflect", "--json"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert asked.wait(180), proc.communicate(timeout=60)
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with Memory.open(memory_home, embedder=embedder) as memory:
        rows = memory.db.fetchall("SELECT status, finished_at FROM reflection_runs")
    assert [r[0] for r in rows] == ["interrupted"], rows
