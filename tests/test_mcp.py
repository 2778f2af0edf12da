"""`sadie mcp` driven by the MCP SDK's own client over stdio: a real `sadie mcp` subprocess on
a copy of the test memory, the model the project's Ollama-protocol server. tools/list,
tools/call for each tool, policed citations in ask_memory, add_note only when configured,
and the same tools through the sadie that holds the memory."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from sadie_tui.engine.ingest.readers import episode_id
from sadie_tui.engine.operations import GetEpisode
from tests.support.ollama_server import Reply, split_pieces

ROOT = Path(__file__).resolve().parent.parent
SECONDS = 120
READ_TOOLS = ["ask_memory", "list_conversations", "search_memory", "get_episode"]
FABRICATED = "00000000-0000-4000-8000-000000000000"


@asynccontextmanager
async def client(home: Path, errors: Path, **env: str) -> AsyncIterator[ClientSession]:
    """An initialised SDK client of a `sadie mcp` subprocess (its stderr into ``errors``)."""
    full = dict(os.environ, SADIE_REASONER="ollama", **env)
    full.pop("COLUMNS", None)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "sadie_tui.cli", "mcp"], env=full, cwd=str(ROOT)
    )
    with errors.open("w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


async def call(session: ClientSession, name: str, **args: Any) -> tuple[bool, Any]:
    """(is_error, structured answer or the error's text)."""
    result = await session.call_tool(name, args)
    if result.isError:
        return True, result.content[0].text
    assert json.loads(result.content[0].text) == result.structuredContent
    return False, result.structuredContent


def config(tmp_home: Path, text: str) -> None:
    folder = tmp_home.parent / "config"  # SADIE_CONFIG (tests/conftest.py's tmp_home)
    folder.mkdir(exist_ok=True)
    (folder / "config.toml").write_text(text)


def race_day(notes_dir: Path) -> str:
    return episode_id(str((notes_dir / "journal" / "2026-10-11.md").resolve()))


async def test_read_only_tools(memory_home: Path, server, notes_dir: Path, tmp_path: Path):
    race = race_day(notes_dir)
    cites = [
        {"episode": race, "quote": "Finished the Lisbon marathon in 3:58", "support": "verbatim"},
        {"episode": FABRICATED, "quote": "I ran it in 3:30", "support": "verbatim"},
    ]
    answer = "You finished the Lisbon marathon in 3:58.\n@@CITATIONS@@\n" + json.dumps(cites)
    server.queue(Reply(split_pieces(answer, 7)))
    errors = tmp_path / "stderr.txt"
    with anyio.fail_after(SECONDS):
        async with client(memory_home, errors) as mcp:
            listed = (await mcp.list_tools()).tools
            assert [t.name for t in listed] == READ_TOOLS
            assert all(t.annotations and t.annotations.readOnlyHint for t in listed)
            [search] = [t for t in listed if t.name == "search_memory"]
            assert search.inputSchema["required"] == ["query"]

            failed, found = await call(mcp, "search_memory", query="marathon finish line", k=3)
            assert not failed and 0 < len(found["chunks"]) <= 3
            top = found["chunks"][0]
            assert set(top) == {"rank", "episode_id", "date", "title", "kind", "text", "score"}
            assert (top["episode_id"], top["date"], top["title"]) == (
                race,
                "2026-10-11",
                "Race day",
            )
            assert "3:58" in top["text"] and top["score"] > 0

            failed, episode = await call(mcp, "get_episode", episode_id=race)
            assert not failed and episode["title"] == "Race day" and "Ines" in episode["text"]
            failed, text = await call(mcp, "get_episode", episode_id="not-an-id")
            assert failed and text == "no episode 'not-an-id' in this memory"

            failed, asked = await call(mcp, "ask_memory", question="How fast was my marathon?")
            assert not failed and asked["answer"] == "You finished the Lisbon marathon in 3:58."
            # Policed: the id the model was never shown is dropped, the quote checked.
            assert [(c["episode_id"], c["support"]) for c in asked["citations"]] == [
                (race, "verbatim")
            ]
            assert asked["grounding"]["dropped"] == 1 and asked["abstained"] is False
            assert asked["persona"] == "analyst" and asked["offline"] is False
            assert "unsupported" in asked["grounding"]

            failed, text = await call(mcp, "ask_memory", question="")
            assert failed and text == "'question' is empty"

            failed, convs = await call(mcp, "list_conversations", limit=5)
            assert not failed and convs == {"conversations": []}  # ask writes no conversation

            failed, text = await call(mcp, "add_note", text="Planted tomatoes.")
            assert failed and text == (
                "add_note is off: other assistants may only read this memory "
                "(set mcp_write = true in config.toml to let them add notes)"
            )
    assert not (memory_home / "notes").exists()
    assert "Traceback" not in errors.read_text()


async def test_add_note_when_configured(memory_home: Path, server, tmp_path: Path):
    config(memory_home, "mcp_write = true\n")
    with anyio.fail_after(SECONDS):
        async with client(memory_home, tmp_path / "stderr.txt") as mcp:
            listed = (await mcp.list_tools()).tools
            assert [t.name for t in listed] == [*READ_TOOLS, "add_note"]
            assert listed[-1].annotations.readOnlyHint is False
            failed, note = await call(
                mcp, "add_note", text="Planted the tomatoes with Ines by the shed.", title="Garden"
            )
            assert not failed and note["title"] == "Garden"
            failed, episode = await call(mcp, "get_episode", episode_id=note["id"])
            assert not failed and episode["text"] == "Planted the tomatoes with Ines by the shed."
            assert episode["kind"] == "note"
            failed, found = await call(mcp, "search_memory", query="tomatoes shed")
            assert found["chunks"][0]["episode_id"] == note["id"]
            failed, text = await call(mcp, "add_note", text="   ")
            assert failed and "Input validation error" not in text and text == "'text' is empty"
    path = Path(note["path"])
    assert path.parent == memory_home / "notes" and path.suffix == ".md"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(list(path.parent.iterdir())) == 1


async def test_through_the_sadie_that_holds_the_memory(
    memory_home: Path, server, embedder, tmp_path: Path
):
    """While another sadie holds the memory, `sadie mcp` is its client: it reads through it,
    and a note it writes is read in by the holder (its ingest goes through the socket)."""
    from sadie_tui.config import load_settings
    from sadie_tui.engine.session import Session
    from sadie_tui.serve.holder import hold

    config(memory_home, "mcp_write = true\n")
    session = Session.open(memory_home, load_settings())
    holder = hold(session)
    assert holder is not None
    try:
        with anyio.fail_after(SECONDS):
            async with client(memory_home, tmp_path / "stderr.txt") as mcp:
                failed, found = await call(mcp, "search_memory", query="Warden retro", k=2)
                assert not failed and found["chunks"][0]["title"] == "Warden retro"
                failed, note = await call(mcp, "add_note", text="A note about the allotment.")
                assert not failed, note
                assert session.call(GetEpisode(note["id"])) is not None  # in the holder's memory
    finally:
        holder.stop()
        session.close()
    assert [p.name for p in (memory_home / "notes").iterdir()] == [Path(note["path"]).name]


@pytest.mark.parametrize("write", [False, True])
async def test_http_transport_behind_serve(memory_home: Path, server, write: bool):
    """The same tools at /mcp of the HTTP app, through the SDK's streamable HTTP client."""
    import httpx
    from mcp.client.streamable_http import streamable_http_client

    from sadie_tui.config import load_settings
    from sadie_tui.engine.session import Session
    from sadie_tui.serve.app import create_app

    config(memory_home, f"mcp_write = {'true' if write else 'false'}\n")
    session = Session.open(memory_home, load_settings())
    app = create_app(session, warm=False)
    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8765", timeout=30
    )

    try:
        with anyio.fail_after(SECONDS):
            async with app.router.lifespan_context(app):
                url = "http://127.0.0.1:8765/mcp"
                async with streamable_http_client(url, http_client=http) as streams:
                    read, written, _ = streams
                    async with ClientSession(read, written) as mcp:
                        await mcp.initialize()
                        names = [t.name for t in (await mcp.list_tools()).tools]
                        assert names == READ_TOOLS + (["add_note"] if write else [])
                        failed, found = await call(mcp, "search_memory", query="Lisbon marathon")
                        assert not failed and found["chunks"]
    finally:
        session.close()


# ------------------------------------------------------------------ hostile requests (issue 34)


def test_every_request_gets_an_answer(memory_home: Path, tmp_path: Path) -> None:
    """Issue 34, item 20: a lone surrogate in a tool's arguments, ``params`` as a list,
    malformed JSON and an unknown method each get a JSON-RPC answer for their id (the client
    waited for ever), with the codes the specification gives, and stderr stays quiet."""
    import queue
    import subprocess
    import threading

    env = dict(os.environ, SADIE_REASONER="ollama")
    env.pop("COLUMNS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sadie_tui.cli", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=str(ROOT),
    )
    answers: queue.Queue[dict[str, Any]] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            answers.put(json.loads(line))

    threading.Thread(target=read, daemon=True).start()

    def send(text: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write(text.encode() + b"\n")
        proc.stdin.flush()

    def answer() -> dict[str, Any]:
        return answers.get(timeout=SECONDS)

    try:
        send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
        )
        assert answer()["id"] == 1
        send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        # A lone surrogate, as JSON allows it to be written (it is not UTF-8 once decoded).
        send(
            '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": '
            '"search_memory", "arguments": {"query": "\\ud800 marathon"}}}'
        )
        lone = answer()
        assert lone["id"] == 2 and "result" in lone, lone
        send('{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": ["search_memory"]}')
        listed = answer()
        assert listed["id"] == 3 and listed["error"]["code"] == -32602, listed
        send('{"jsonrpc": "2.0", "id": 4, "method": ')
        broken = answer()
        assert broken["id"] is None and broken["error"]["code"] == -32700, broken
        send('{"jsonrpc": "2.0", "id": 5, "method": "frobnicate", "params": {}}')
        unknown = answer()
        assert unknown["id"] == 5 and unknown["error"]["code"] == -32601, unknown
        send('{"jsonrpc": "2.0", "id": 6, "method": "ping"}')
        assert answer() == {"jsonrpc": "2.0", "id": 6, "result": {}}
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=SECONDS)
    assert proc.stderr is not None
    errors = proc.stderr.read().decode("utf-8", "replace")
    assert "Traceback" not in errors and "validation error" not in errors, errors
    assert not [line for line in errors.splitlines() if line.startswith(" ")], errors
