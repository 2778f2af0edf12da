"""One memory, many clients: while `sadie serve` holds the memory, a second `sadie` on the same
home reaches it through `<home>/sadie.sock` with the same output and exit codes.

Real parts: `sadie serve` and the clients are subprocesses on a copy of the test memory; the
tests wait on the server's stderr line and on the socket file, with bounded timeouts.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path

import pytest

from sadie_tui.engine.errors import NotFoundError
from sadie_tui.engine.operations import (
    Export,
    GetEpisode,
    GetSoul,
    ImportConversation,
    ListConversations,
    ShowConversation,
)
from sadie_tui.engine.requests import ChatTurn

ROOT = Path(__file__).resolve().parent.parent
START_SECONDS = 90.0
CLIENT_SECONDS = 60.0


def _env(home: Path, config: Path) -> dict[str, str]:
    env = dict(os.environ, SADIE_HOME=str(home), SADIE_CONFIG=str(config))
    env.update(SADIE_REASONER="offline", OLLAMA_HOST="http://127.0.0.1:9")
    env.pop("COLUMNS", None)
    return env


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Served:
    process: subprocess.Popen[str]
    lines: queue.Queue[str]
    env: dict[str, str]
    sock: Path
    url: str = ""

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sadie_tui.cli", *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=ROOT,
            timeout=CLIENT_SECONDS,
        )

    def wait_for_line(self, needle: str, timeout: float = START_SECONDS) -> str:
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            seen.append(line)
            if needle in line:
                return line
        raise AssertionError(f"no {needle!r} from sadie serve; it said: {seen}")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


def start_serve(home: Path, config: Path) -> Served:
    """``sadie serve`` on ``home`` in a real subprocess, its stderr read line by line."""
    env = _env(home, config)
    process = subprocess.Popen(
        [sys.executable, "-m", "sadie_tui.cli", "serve", "--port", str(_free_port())],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return Served(process, lines, env, home / "sadie.sock")


@pytest.fixture
def served(memory_home: Path, tmp_path: Path) -> Iterator[Served]:
    sock = memory_home / "sadie.sock"
    # A stale socket file, as a crash leaves it: bound once, never listening, closed.
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(sock))
    stale.close()
    running = start_serve(memory_home, tmp_path / "config")
    process = running.process
    try:
        running.url = running.wait_for_line("serving on").split("serving on ", 1)[1].strip()
        assert is_live(sock)  # the stale file was replaced by a listening socket
        yield running
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


def is_live(path: Path) -> bool:
    from sadie_tui.serve.socket import is_live as live

    return live(path)


def test_a_second_sadie_uses_the_holder_over_its_socket(served: Served) -> None:
    from sadie_tui.engine.turns.ask import AskResult

    assert stat.S_IMODE(served.sock.stat().st_mode) == 0o600

    asked = served.cli("--ask", "How did the Lisbon marathon go?", "--json")
    assert asked.returncode == 0, asked.stderr
    assert set(json.loads(asked.stdout)) == {f.name for f in fields(AskResult)}

    chat = served.cli("chat", "hello", "--ndjson")
    assert chat.returncode == 0, chat.stderr
    events = [json.loads(line) for line in chat.stdout.splitlines() if line.strip()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "meta" and kinds[-1] == "done"
    assert kinds.index("citations") < kinds.index("done")
    cid = events[0]["conversation_id"]

    listed = served.cli("conversations", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert cid in [c["id"] for c in json.loads(listed.stdout)]

    chips = served.cli("chips", "list", cid)
    assert chips.returncode == 0, chips.stderr
    assert chips.stdout.strip() == "no chips attached"

    stats = served.cli("stats", "--json")
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["counts"]["episodes"] > 0

    found = served.cli("search", "marathon", "--json")
    assert found.returncode == 0, found.stderr
    assert any("marathon" in c["text"].lower() for c in json.loads(found.stdout)["chunks"])

    missing = served.cli("chat", "hi", "--conversation", "zzzz", "--ndjson")
    assert missing.returncode == 5  # the server's 404 back as the error event, exit code kept
    assert json.loads(missing.stdout)["type"] == "error"
    assert missing.stderr.strip() == "sadie: no conversation 'zzzz'"

    compact = served.cli("compact")
    assert compact.returncode == 3
    lines = compact.stderr.strip().splitlines()
    assert len(lines) == 1, compact.stderr
    assert "compact needs the memory to itself: close another sadie (pid " in lines[0]
    assert compact.stdout == ""

    assert served.stop() == 0
    assert not served.sock.exists()


def test_notes_go_in_through_the_holder(served: Served, tmp_path: Path) -> None:
    """Issue #28, item 10: while `sadie serve` holds the memory, `sadie ingest PATH` in a
    second terminal reads the notes in through it (same report, same exit codes), and
    `sadie doctor` calls the held memory healthy."""
    import re

    import httpx

    notes = tmp_path / "trip"
    notes.mkdir()
    for day, place in enumerate(("Porto", "Braga", "Faro"), 1):
        (notes / f"2026-04-0{day}.md").write_text(
            f"Walked around {place} with Ines all afternoon.\n", encoding="utf-8"
        )
    counted = served.cli("stats", "--json")
    before = json.loads(counted.stdout)["counts"]["episodes"]

    added = served.cli("ingest", str(notes))
    assert added.returncode == 0, added.stderr
    assert "needs the memory to itself" not in added.stderr
    assert re.search(r"^added\s+3$", added.stdout, re.MULTILINE), added.stdout
    assert json.loads(served.cli("stats", "--json").stdout)["counts"]["episodes"] == before + 3
    found = served.cli("search", "Braga", "--json")
    assert any("Braga" in c["text"] for c in json.loads(found.stdout)["chunks"])

    again = served.cli("ingest", str(notes), "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["unchanged"] == 3

    # A bad path: the line and the exit code of a local ingest (6: some files skipped).
    missing = served.cli("ingest", "no-such-folder")
    assert missing.returncode == 6, missing.stderr
    assert "skipped no-such-folder: no such file or directory" in missing.stdout

    # Over TCP the route that reads files on this machine is refused.
    refused = httpx.post(f"{served.url}/v1/ingest", json={"paths": [str(notes)]}, timeout=30)
    assert refused.status_code == 403 and refused.json()["kind"] == "forbidden"

    doctor = served.cli("doctor", "--quick")
    assert doctor.returncode == 0, doctor.stdout
    pid = served.process.pid
    assert f"✓ memory: held by sadie (pid {pid}), reachable" in doctor.stdout.splitlines()
    assert "in use by" not in doctor.stdout
    assert served.stop() == 0


def test_a_live_socket_is_left_alone_and_a_stale_one_replaced(tmp_path: Path) -> None:
    from sadie_tui.serve.socket import listen

    path = tmp_path / "sadie.sock"
    first = listen(path)
    assert first is not None
    try:
        assert listen(path) is None  # another listener is live: no second one
    finally:
        first.close()
    assert not path.exists()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()
    again = listen(path)
    assert again is not None
    again.close()
    assert not path.exists()


# -- a process that holds the memory for its own use (the TUI, a long ingest) --------------
@pytest.fixture
def held(memory_home: Path, embedder) -> Iterator[tuple[object, Path]]:
    """The memory opened in this process with ``hold``, as the TUI opens it."""
    from sadie_tui.launch import Launch

    launch = Launch.create()
    session = launch.session(wait_for_embedder=True, hold=True)
    assert launch.sharing is None
    try:
        yield session, memory_home / "sadie.sock"
    finally:
        launch.close()


def _client(home: Path) -> object:
    """A client of the holder, as a second process gets one (in this process DuckDB would
    share its open file instead of refusing, so the client is made directly)."""
    from sadie_tui.config import load_settings
    from sadie_tui.serve.remote import RemoteSession, answers

    assert answers(home / "sadie.sock")
    return RemoteSession(home, load_settings(), home / "sadie.sock", holder="the test")


def test_a_holding_process_serves_the_memory_on_its_socket(held) -> None:
    import asyncio

    session, sock = held
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    client = _client(sock.parent)

    answer = asyncio.run(client.ask("How did the Lisbon marathon go?"))
    assert answer.citations, answer
    cid = next(e.conversation_id for e in _events(client, "hello from a second terminal"))
    assert cid in [
        c.id for c in session.call(ListConversations())
    ]  # written into the holder's memory

    # What a TUI client needs beyond the CLI's commands: the note a citation opens, export
    # and import, the soul summary.
    episode_id = answer.citations[0].episode_id
    assert client.call(GetEpisode(episode_id)) == session.call(GetEpisode(episode_id))
    with pytest.raises(NotFoundError):
        client.call(GetEpisode("0" * 32))
    assert client.call(Export(cid, "md")) == session.call(Export(cid, "md"))
    copied = client.call(ImportConversation(session.call(Export(cid, "json"))))
    assert (
        copied.id != cid
        and copied.message_count == session.call(ShowConversation(cid)).conversation.message_count
    )
    assert client.call(GetSoul()) == session.call(GetSoul())

    from sadie_tui.engine.errors import SadieError

    with pytest.raises(SadieError) as bad:
        client.call(ImportConversation("{not json"))
    with pytest.raises(SadieError) as local:
        session.call(ImportConversation("{not json"))
    assert (type(bad.value), bad.value.message) == (type(local.value), local.value.message)
    client.close()


def _events(client, message: str) -> list:
    import asyncio

    from sadie_tui.engine.events import Meta

    async def run() -> list:
        return [e async for e in client.chat(ChatTurn(message)) if isinstance(e, Meta)]

    return asyncio.run(run())


def test_closing_the_holder_removes_its_socket(memory_home: Path, embedder) -> None:
    from sadie_tui.launch import Launch

    launch = Launch.create()
    launch.session(hold=True)
    sock = memory_home / "sadie.sock"
    assert is_live(sock)
    launch.close()
    assert not sock.exists()


def test_a_second_holder_does_not_steal_a_live_socket(memory_home: Path, tmp_path: Path) -> None:
    from sadie_tui.launch import Launch
    from sadie_tui.serve.socket import listen

    other = listen(memory_home / "sadie.sock")
    assert other is not None
    try:
        launch = Launch.create()
        launch.session(hold=True)
        assert launch.sharing == f"another process listens on {memory_home / 'sadie.sock'}"
        launch.close()
        assert (memory_home / "sadie.sock").is_socket()  # still the other one's
    finally:
        other.close()


def test_a_client_asks_for_its_own_model_not_the_holders(tmp_path: Path) -> None:
    """A second terminal started with SADIE_MODEL=X answers with X: each turn and each model
    check names this process's model (an F4 choice still wins)."""
    import asyncio
    import dataclasses

    from sadie_tui.config import Settings
    from sadie_tui.serve.remote import RemoteSession

    settings = dataclasses.replace(Settings(), model="smollm2:135m")
    session = RemoteSession(tmp_path, settings, tmp_path / "sadie.sock", holder="another sadie")
    sent: list[dict] = []
    asked: list[dict] = []

    async def capture(body):  # type: ignore[no-untyped-def]
        sent.append(body)
        return
        yield

    def health(url, **params):  # type: ignore[no-untyped-def]
        asked.append(params)
        return {"model": {"online": True, "model": params["model"], "host": "h", "detail": ""}}

    session._chat = capture  # type: ignore[method-assign]
    session._get = health  # type: ignore[method-assign]

    async def go() -> None:
        [e async for e in session.chat(ChatTurn("hello"))]
        [e async for e in session.chat(ChatTurn("hello", model="gemma3:270m"))]
        await session.check_model()

    asyncio.run(go())
    assert [b["model"] for b in sent] == ["smollm2:135m", "gemma3:270m"]
    assert asked[0]["model"] == "smollm2:135m"
