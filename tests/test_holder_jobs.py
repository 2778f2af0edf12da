"""Issue #28, item 10: the long jobs (ingest, removing notes, reflect) go through the sadie
that holds the memory, with their progress, and the holder is told what changed.

Real parts: the memory opened and served on its Unix socket in this process (``hold``, as
the app does), a ``RemoteSession`` client over that socket (a second process would get the
same one; in this process DuckDB would share the open file instead of refusing), the
project's Ollama-protocol server with the scripted reflection model.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sadie_tui.config import Settings
from sadie_tui.engine.doctor import check_holder
from sadie_tui.engine.errors import LockedError, ModelUnreachable, SadieError
from sadie_tui.engine.operations import ListBeliefs, SearchMemory
from sadie_tui.engine.requests import IngestJob, ReflectJob
from sadie_tui.engine.session import Session
from sadie_tui.serve.holder import Holder, hold
from sadie_tui.serve.remote import RemoteSession
from tests.support.reflect_model import ReflectModel
from tests.support.serve import running
from tests.test_reflect import RUN, SLOW, WORRY


def _trip(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for day, place in enumerate(("Porto", "Braga", "Faro"), 1):
        (root / f"2026-04-0{day}.md").write_text(
            f"Walked around {place} with Ines all afternoon.\n", encoding="utf-8"
        )
    (root / "scan.md").write_bytes(b"\xff\xfe\x00\x00binary")
    return root


@pytest.fixture
def holding(memory_home: Path, server, embedder) -> Iterator[tuple[Session, Holder, list[str]]]:
    """The memory held and served on its socket, with the holder's listener recording."""
    settings = Settings(ollama_host=server.url, reasoner="ollama")
    session = Session.open(memory_home, settings)
    holder = hold(session)
    assert holder is not None
    told: list[str] = []
    holder.on_change(told.append)
    try:
        yield session, holder, told
    finally:
        holder.stop()
        session.close()


def _client(session: Session) -> RemoteSession:
    home = session.home
    return RemoteSession(home, session.settings, home / "sadie.sock", holder="the test")


def test_ingest_through_the_holder_with_progress(holding, tmp_path, monkeypatch) -> None:
    session, _, told = holding
    _trip(tmp_path / "trip")
    monkeypatch.chdir(tmp_path)  # a relative path, as typed in a second terminal
    client = _client(session)
    seen: list[tuple[str, int, int]] = []

    report = client.ingest([Path("trip")], IngestJob(lambda *step: seen.append(step)))

    assert (report.added, report.unchanged) == (3, 0)
    # The file it could not read is named as given here, as a local ingest names it.
    assert [(s.name, s.reason) for s in report.skipped] == [
        ("trip/scan.md", "binary file, not text")
    ]
    stages = [stage for stage, _, _ in seen]
    assert {"reading", "embedding", "storing"} <= set(stages) and stages[-1] == "done"
    assert any(
        "Braga" in c.text for c in session.call(SearchMemory("Braga")).chunks
    )  # in the holder's
    assert told == ["3 notes added from another terminal"]

    # A deleted note leaves the memory through the holder too (`ingest --watch`'s batches).
    (tmp_path / "trip" / "2026-04-02.md").unlink()
    assert client.remove_notes([Path("trip/2026-04-02.md")]) == 1
    assert not any("Braga" in c.text for c in session.call(SearchMemory("Braga")).chunks)
    assert told[-1] == "1 note removed from another terminal"
    client.close()


def test_two_terminals_ingesting_the_same_notes_at_once(holding, tmp_path) -> None:
    """The holder takes one change of the notes at a time: the second reads them unchanged."""
    from concurrent.futures import ThreadPoolExecutor

    session, _, told = holding
    trip = _trip(tmp_path / "trip")
    clients = [_client(session), _client(session)]
    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(lambda c: c.ingest([trip]), clients))
    assert sorted((r.added, r.unchanged) for r in reports) == [(0, 3), (3, 0)]
    assert told == ["3 notes added from another terminal"]
    for client in clients:
        client.close()


def test_a_csv_mapping_and_a_bad_one_through_the_holder(holding, tmp_path) -> None:
    from sadie_tui.engine.ingest.csvmap import parse_map

    session, _, told = holding
    bank = tmp_path / "bank.csv"
    bank.write_text("Date,Memo\n2026-04-01,Bakery\n2026-04-02,Bike shop\n", encoding="utf-8")
    client = _client(session)
    report = client.ingest([bank], IngestJob(csv_map=parse_map("date=Date,text=Memo,source=bank")))
    assert report.derived.get("observations") == 2, report
    # Without the mapping a CSV is skipped with the flag to use, as it is locally.
    plain = client.ingest([bank])
    local = session.ingest([bank])
    assert [(s.name, s.reason) for s in plain.skipped] == [
        (s.name, s.reason) for s in local.skipped
    ]
    client.close()


def test_the_jobs_are_refused_over_tcp(holding, tmp_path) -> None:
    session, _, told = holding
    trip = _trip(tmp_path / "trip")
    with running(session) as api:
        for url, body in (
            ("/v1/ingest", {"paths": [str(trip)]}),
            ("/v1/notes/remove", {"paths": [str(trip)]}),
            ("/v1/reflect", {}),
        ):
            answer = httpx.post(f"{api.url}{url}", json=body, timeout=30)
            assert answer.status_code == 403, url
            assert answer.json()["kind"] == "forbidden"
    assert told == []
    assert not any("Braga" in c.text for c in session.call(SearchMemory("Braga")).chunks)


def test_reflect_through_the_holder_with_progress(holding, server) -> None:
    session, _, told = holding
    server.responder = ReflectModel(beliefs=[RUN, WORRY, SLOW])
    client = _client(session)
    seen: list[tuple[str, int, int]] = []

    report = client.reflect(ReflectJob(progress=lambda *step: seen.append(step)))

    assert report.new == 3 and report.left == 0
    assert {b.statement for b in session.call(ListBeliefs(origin="derived"))} == {
        RUN.statement,
        WORRY.statement,
        SLOW.statement,
    }
    assert seen and seen[0][0] == "reflecting"
    assert told == ["3 new beliefs from another terminal's reflection"]
    # A second run has nothing to read; nothing new, nothing told.
    assert client.reflect().batches == 0
    assert len(told) == 1
    client.close()


def test_an_error_in_the_job_is_the_sessions_own(memory_home: Path, embedder) -> None:
    settings = Settings(reasoner="offline")
    session = Session.open(memory_home, settings)
    holder = hold(session)
    assert holder is not None
    try:
        with pytest.raises(SadieError) as local:
            session.reflect()
        with pytest.raises(SadieError) as remote:
            _client(session).reflect()
    finally:
        holder.stop()
        session.close()
    # The same kind (exit 4); the words name the holder (below).
    assert isinstance(local.value, ModelUnreachable)
    assert isinstance(remote.value, ModelUnreachable)


def _depth(line: str) -> int:
    deepest = depth = 0
    for ch in line:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        deepest = max(deepest, depth)
    return deepest


def test_reflect_through_a_holder_names_the_holders_model_server(
    memory_home: Path, embedder
) -> None:
    """Issue #34, item 2: the holder reflects with its own model server, whatever this
    terminal's OLLAMA_HOST says; the error says so, with its pid and F4, never "answering
    offline", and never parentheses inside parentheses."""
    settings = Settings(ollama_host="http://127.0.0.1:9", reasoner="auto")
    session = Session.open(memory_home, settings)
    holder = hold(session)
    assert holder is not None
    try:
        with pytest.raises(ModelUnreachable) as local:
            session.reflect()
        with pytest.raises(ModelUnreachable) as remote:
            _client(session).reflect()
    finally:
        holder.stop()
        session.close()
    here, there = local.value.one_line(), remote.value.one_line()
    assert here.startswith("sadie reflect needs a model: Ollama is not reachable at ")
    assert f"the sadie holding this memory (pid {os.getpid()}), which uses its own model" in there
    assert "F4 there changes it" in there and "http://127.0.0.1:9" in there
    for line in (here, there):
        assert "answering offline" not in line and _depth(line) <= 1, line


def _locked(pid: int | None) -> LockedError:
    return LockedError.held_by("/h/sadie.duckdb", pid)


@pytest.mark.parametrize(
    ("pid", "answers", "expected"),
    [
        (4242, True, ("ok", "held by sadie (pid 4242), reachable")),
        (None, True, ("ok", "held by sadie, reachable")),
        (
            4242,
            False,
            (
                "fail",
                "the memory at /h/sadie.duckdb is in use by another sadie (pid 4242), "
                "which does not answer",
            ),
        ),
    ],
)
def test_doctor_calls_a_held_memory_healthy_when_its_holder_answers(
    pid: int | None, answers: bool, expected: Any
) -> None:
    check = check_holder(_locked(pid), lambda: answers)
    assert (check.name, check.status, check.detail) == ("memory", *expected)
