"""`sadie serve`: the real uvicorn server on a free loopback port over a real memory, driven by
httpx (streaming), SSE parsed by httpx-sse, one end-to-end run of `sadie serve` with `curl -N`.

Waits are on responses, on the scripted model's requests or on the stored rows (bounded polls
with generous timeouts), never on sleeps that assume an idle machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse

from sadie_tui.config import load_settings
from sadie_tui.engine.errors import (
    ConfigError,
    LockedError,
    ModelMissing,
    ModelTimeout,
    NotFoundError,
    SadieError,
    StorageError,
    UsageError,
)
from sadie_tui.engine.events import to_json
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.operations import GetStats, ListConversations, SearchMemory, ShowConversation
from sadie_tui.engine.requests import ChatTurn
from sadie_tui.engine.session import Session
from sadie_tui.serve.errors import sadie_error_response
from sadie_tui.serve.guard import Guard, check_bind, is_loopback
from tests.support.ollama_server import Reply, split_pieces
from tests.support.serve import Running, running

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60.0
TIMING = {"waiting", "thinking"}  # events whose count depends on the machine's speed
REPLY = "You ran 18 km along the Tagus with Ines, and your knee held up.\n@@CITATIONS@@\n[]"


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = TIMEOUT) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def open_session(home: Path, embedder) -> Session:
    return Session(Memory.open(home, embedder=embedder), load_settings())


@pytest.fixture
def offline(memory_home, embedder, monkeypatch) -> Iterator[tuple[Session, Running]]:
    """A server over the small memory answering with the offline reasoner (deterministic)."""
    monkeypatch.setenv("SADIE_REASONER", "offline")
    session = open_session(memory_home, embedder)
    try:
        with running(session) as api:
            yield session, api
    finally:
        session.close()


@pytest.fixture
def model(server, memory_home, embedder) -> Iterator[tuple[Session, Running]]:
    """A server whose model is the scripted Ollama-protocol server (``server.queue``)."""
    session = open_session(memory_home, embedder)
    try:
        with running(session) as api:
            yield session, api
    finally:
        session.close()


def client(api: Running, **kwargs: Any) -> httpx.Client:
    return httpx.Client(base_url=api.url, timeout=TIMEOUT, **kwargs)


def ndjson(api: Running, body: dict[str, Any]) -> list[dict[str, Any]]:
    with client(api) as c, c.stream("POST", "/api/chat", json=body) as resp:
        assert resp.status_code == 200, resp.read()
        assert resp.headers["content-type"].startswith("application/x-ndjson")
        return [json.loads(line) for line in resp.iter_lines() if line]


def shape(events: list[dict[str, Any]]) -> list[tuple[str, frozenset[str]]]:
    return [(e["type"], frozenset(e)) for e in events if e["type"] not in TIMING]


# -- ask and chat ----------------------------------------------------------------------------
def test_ask_answers_the_ask_json_object(offline):
    session, api = offline
    question = "When did I finish the marathon?"
    with client(api) as c:
        resp = c.post("/v1/ask", json={"question": question})
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/json"
    got = resp.json()
    direct = asyncio.run(session.ask(question)).as_json()  # what `--ask --json` prints
    assert set(got) == set(direct)
    assert {"answer", "citations", "persona", "abstained", "grounding", "stages"} <= set(got)
    assert got["answer"] == direct["answer"] and got["citations"] == direct["citations"]
    assert got["offline"] is True and got["citations"]
    assert {"episode_id", "quote", "support"} <= set(got["citations"][0])


def test_chat_sse_events_in_order_and_the_messages_stored(model, server):
    session, api = model
    server.queue(Reply(split_pieces(REPLY, 5)))
    with client(api) as c:
        with connect_sse(c, "POST", "/v1/chat", json={"message": "How was my long run?"}) as src:
            assert src.response.headers["content-type"].startswith("text/event-stream")
            events = [(e.event, json.loads(e.data)) for e in src.iter_sse()]
        names = [name for name, _ in events]
        assert names[0] == "meta" and names[-1] == "done"
        assert names.count("citations") == 1 and "delta" in names
        first_delta = names.index("delta")
        last_delta = len(names) - 1 - names[::-1].index("delta")
        assert 0 < first_delta and last_delta < names.index("citations") < names.index("done")
        # The marker ends the prose: SSE says so at once, as `chat --ndjson` does.
        status = events.index(("status", {"value": "writing its sources…"}))
        assert last_delta < status < names.index("citations")
        meta, done = events[0][1], events[-1][1]
        assert meta["model"] == "qwen3:1.7b" and meta["conversation_id"]
        # The spec's shape: the citations event's data is the validated array itself; its
        # extras come right after it, in their own grounding event (issue 34, item 11).
        citations = dict(events)["citations"]
        assert isinstance(citations, list) and citations
        assert {"episode_id", "quote", "support"} <= set(citations[0])
        assert names[names.index("citations") + 1] == "grounding"
        grounding = dict(events)["grounding"]
        assert {"unsupported", "repaired", "tail", "found", "note"} <= set(grounding)
        assert {"message_id", "latency_ms", "chunks_considered", "status"} <= set(done)
        text = "".join(data["text"] for name, data in events if name == "delta")
        assert text.startswith("You ran 18 km along the Tagus")
        shown = c.get(f"/v1/conversations/{meta['conversation_id']}").json()
    user, reply = shown["messages"]
    assert user["role"] == "user" and user["content"] == "How was my long run?"
    assert reply["id"] == done["message_id"] == meta["message_id"]
    assert reply["status"] == "complete" and reply["content"].startswith(text.strip()[:20])


def test_api_chat_ndjson_is_chat_ndjson(offline):
    session, api = offline
    message = "How did the marathon go?"
    got = ndjson(api, {"message": message})

    async def direct() -> list[dict[str, Any]]:  # exactly what `sadie chat --ndjson` prints
        return [to_json(e) async for e in session.chat(ChatTurn(message))]

    want = asyncio.run(direct())
    assert got[0]["type"] == "meta" and got[-1]["type"] == "done"
    assert shape(got) == shape(want)
    tokens = lambda events: "".join(e["value"] for e in events if e["type"] == "token")  # noqa: E731
    assert tokens(got) == tokens(want)
    cid = got[0]["conversation_id"]
    follow = ndjson(api, {"message": "and after that?", "conversation_id": cid[:8]})
    assert follow[0]["conversation_id"] == cid
    assert len(session.call(ShowConversation(cid)).messages) == 4


def test_auto_continue_streams_from_the_first_event_when_attached_late(model, server):
    session, api = model
    server.queue(Reply(split_pieces(REPLY, 6), delay=0.2))
    body = {
        "message": "What did Ines and I do?",
        "chips": [{"kind": "wiki", "ref": "Ines"}],
        "auto_continue": True,
    }
    with client(api) as c:
        resp = c.post("/api/chat", json=body)
        assert resp.status_code == 202, resp.text
        started = resp.json()
        cid = started["conversation_id"]
        assert resp.headers["location"] == started["stream"] == f"/api/chat/{cid}/stream"
        # The turn is already talking to the model before anyone attaches.
        wait_for(lambda: any(r.get("stream", True) for r in server.requests), "the model call")

        def saved_piece() -> str:
            rows = session.call(ShowConversation(cid)).messages  # none until the request is out
            return rows[-1].content if rows else ""

        wait_for(saved_piece, "a first saved piece")
        with c.stream("GET", started["stream"]) as streamed:
            assert streamed.status_code == 200
            lines = [json.loads(line) for line in streamed.iter_lines() if line]
        again = [json.loads(line) for line in c.get(started["stream"]).text.splitlines()]
        chips = c.get(f"/v1/conversations/{cid}/chips").json()
    assert lines[0] == {**lines[0], "type": "meta", "conversation_id": cid}
    assert lines[0]["message_id"] == started["message_id"]
    types = [e["type"] for e in lines]
    assert types[1] == "emotion" and types[-1] == "done" and "citations" in types
    visible = "".join(e["value"] for e in lines if e["type"] == "token")
    assert visible.startswith("You ran 18 km along the Tagus with Ines")
    assert again == lines  # a reader attaching after the end still gets every event
    assert [chip["kind"] for chip in chips] == ["wiki"]
    briefing = server.requests[0]["messages"][0]["content"]
    assert "Runs with me on weekends" in briefing  # the chip was attached before the turn
    assert session.call(ShowConversation(cid)).messages[-1].status == "complete"


def test_auto_continue_with_a_bad_chip_creates_nothing(offline):
    session, api = offline
    body = {"message": "hello", "chips": [{"kind": "wiki", "ref": "nobody"}], "auto_continue": True}
    with client(api) as c:
        resp = c.post("/api/chat", json=body)
        assert resp.status_code == 404 and resp.json()["kind"] == "not_found"
        assert c.get("/v1/conversations").json() == []
        assert c.get("/api/chat/nope/stream").status_code == 404


@pytest.mark.parametrize("route", ["/v1/chat", "/api/chat"])
def test_a_client_that_disconnects_leaves_the_reply_interrupted(model, server, route):
    session, api = model
    server.queue(Reply([f"word{n} " for n in range(200)], delay=0.05))
    cid, pieces = None, 0
    with client(api) as c, c.stream("POST", route, json={"message": "Tell me a story"}) as resp:
        assert resp.status_code == 200
        for line in resp.iter_lines():
            if line.startswith("data:") or line.startswith("{"):
                data = json.loads(line.removeprefix("data:"))
                cid = cid or data.get("conversation_id")
                pieces += "text" in data or data.get("type") == "token"
                if pieces == 3:
                    break  # a few pieces in: hang up
    assert cid
    reply = wait_for(
        lambda: next(
            (m for m in session.call(ShowConversation(cid)).messages if m.status == "interrupted"),
            None,
        ),
        "the reply to be marked interrupted",
    )
    assert reply.role == "assistant" and reply.content.startswith("word0")
    assert len(reply.content) < len("".join(f"word{n} " for n in range(200)))


def test_twenty_concurrent_chats_and_asks_lose_nothing(offline):
    session, api = offline

    async def go() -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
        async with httpx.AsyncClient(base_url=api.url, timeout=TIMEOUT) as c:

            async def chat(n: int) -> list[dict[str, Any]]:
                body = {"message": f"How did the marathon go? ({n})"}
                async with c.stream("POST", "/api/chat", json=body) as resp:
                    assert resp.status_code == 200
                    return [json.loads(line) async for line in resp.aiter_lines() if line]

            async def ask(n: int) -> dict[str, Any]:
                resp = await c.post("/v1/ask", json={"question": f"Who is Ines? ({n})"})
                assert resp.status_code == 200, resp.text
                return resp.json()  # type: ignore[no-any-return]

            chats = [chat(n) for n in range(20)]
            asks = [ask(n) for n in range(10)]
            results = await asyncio.gather(*chats, *asks)
            return list(results[:20]), list(results[20:])

    chats, asks = asyncio.run(go())
    assert all(events[-1]["type"] == "done" for events in chats)
    assert all("answer" in a for a in asks)
    listed = session.call(ListConversations(limit=1000))
    assert len(listed) == 20
    messages = [m for c in listed for m in session.call(ShowConversation(c.id)).messages]
    assert len(messages) == 40
    done_ids = {events[-1]["message_id"] for events in chats}
    assert {m.id for m in messages if m.role == "assistant"} == done_ids
    assert {m.status for m in messages} == {"complete"}


# -- the memory's routes -----------------------------------------------------------------------
def test_conversations_chips_search_stats_health_and_openapi(offline):
    session, api = offline
    first = ndjson(api, {"message": "How did the marathon go?"})[0]["conversation_id"]
    second = ndjson(api, {"message": "What about my knee?"})[0]["conversation_id"]
    with client(api) as c:
        assert [x["id"] for x in c.get("/v1/conversations").json()] == [second, first]
        assert c.post(f"/v1/conversations/{first[:8]}/pin").json()["pinned"] is True
        assert [x["id"] for x in c.get("/v1/conversations").json()] == [first, second]
        assert [x["id"] for x in c.get("/v1/conversations?limit=1").json()] == [first]
        found = c.get("/v1/conversations", params={"search": "knee"}).json()
        assert [x["id"] for x in found] == [second]
        assert c.post(f"/v1/conversations/{first}/unpin").json()["pinned"] is False
        renamed = c.post(f"/v1/conversations/{second}/rename", json={"title": "Knee"}).json()
        assert renamed["title"] == "Knee"
        assert c.post(f"/v1/conversations/{second}/rename", json={"title": " "}).status_code == 400
        assert c.post(f"/v1/conversations/{second}/archive").json()["archived"] is True
        assert [x["id"] for x in c.get("/v1/conversations").json()] == [first]
        archived = c.get("/v1/conversations?archived=true").json()
        assert [x["id"] for x in archived] == [second]
        assert c.post(f"/v1/conversations/{second}/unarchive").json()["archived"] is False

        shown = c.get(f"/v1/conversations/{first}").json()
        assert set(shown) == {"conversation", "messages", "chips"}
        assert [m["role"] for m in shown["messages"]] == ["user", "assistant"]

        candidates = c.get("/v1/chips/find", params={"query": "Ines", "kind": "wiki"}).json()
        assert candidates and candidates[0]["kind"] == "wiki"
        added = c.post(
            f"/v1/conversations/{first}/chips",
            json={"kind": "wiki", "ref": candidates[0]["ref_id"], "label": "Ines"},
        )
        assert added.status_code == 201 and added.json()["label"] == "Ines"
        chip_id = added.json()["id"]
        assert [x["id"] for x in c.get(f"/v1/conversations/{first}/chips").json()] == [chip_id]
        assert c.delete(f"/v1/conversations/{first}/chips/{chip_id}").json()["id"] == chip_id
        assert c.get(f"/v1/conversations/{first}/chips").json() == []
        bad_chip = c.post(f"/v1/conversations/{first}/chips", json={"kind": "nope", "ref": "x"})
        assert bad_chip.status_code in (400, 404) and bad_chip.json()["error"]

        searched = c.get("/v1/search", params={"query": "marathon", "k": 3}).json()
        assert set(searched) == set(session.call(SearchMemory("marathon", k=3)).as_json())
        assert searched["chunks"] and len(searched["chunks"]) <= 3
        assert all(chunk["episode_id"] for chunk in searched["chunks"])
        assert c.get("/v1/search").status_code == 400

        stats = c.get("/v1/stats").json()
        assert stats["counts"] == session.call(GetStats()).counts and stats["home"] == str(
            session.home
        )
        health = c.get("/v1/health").json()
        assert health["ok"] is True and health["memory"] == str(session.home)
        assert {"online", "model", "host"} <= set(health["model"])

        spec = c.get("/openapi.json").json()
        assert spec["openapi"].startswith("3.1")
        routes = {(r.path, m.lower()) for r in api_routes(c) for m in r.methods - {"HEAD"}}
        described = {(p, m) for p, ops in spec["paths"].items() for m in ops}
        assert routes == described

        forgot = c.delete(f"/v1/conversations/{second}")
        assert forgot.status_code == 200 and forgot.json()["id"] == second
        gone = c.get(f"/v1/conversations/{second}")
        assert gone.status_code == 404
        assert gone.json() == {**gone.json(), "kind": "not_found"} and gone.json()["error"]


def api_routes(c: httpx.Client) -> list[Any]:
    from sadie_tui.serve import chat_routes, job_routes, memory_routes, openapi, operation_routes

    rooms = (chat_routes.api, memory_routes.api, job_routes.api, openapi.api)
    return [route for room in (*rooms, operation_routes.routes()) for route in room.routes]


def test_error_statuses_and_shapes(offline):
    _, api = offline
    with client(api) as c:
        malformed = c.post("/v1/ask", content=b"{not json", headers={"content-type": "x"})
        assert malformed.status_code == 400
        assert set(malformed.json()) == {"error", "fix", "kind"}
        assert c.post("/v1/ask", json=["a list"]).status_code == 400
        assert c.post("/v1/ask", json={}).status_code == 400
        assert c.post("/v1/ask", json={"question": 3}).status_code == 400
        assert c.post("/api/chat", json={"message": "  "}).status_code == 400
        big = c.post("/v1/ask", content=b'{"question": "' + b"x" * (1024 * 1024) + b'"}')
        assert big.status_code == 413 and big.json()["kind"] == "too_large"

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted while reading
            yield b'{"question": "'
            for _ in range(20):
                yield b"y" * 65536
            yield b'"}'

        assert c.post("/v1/ask", content=chunks()).status_code == 413
        missing = c.post("/v1/chat", json={"message": "hi", "conversation_id": "ffffffff"})
        assert missing.status_code == 404 and missing.json()["kind"] == "not_found"
        persona = c.post("/v1/ask", json={"question": "hi", "persona": "nobody"})
        assert persona.status_code == 400 and "unknown persona" in persona.json()["error"]
        assert c.get("/nowhere").json()["kind"] == "not_found"
        assert c.get("/v1/ask").status_code == 405
        episode = c.get("/v1/episodes/0123456789abcdef")
        assert episode.status_code == 404 and episode.json()["kind"] == "not_found"
        cid = c.post("/api/chat", json={"message": "hi"}).text.splitlines()[0]
        cid = json.loads(cid)["conversation_id"]
        export = c.get(f"/v1/conversations/{cid}/export", params={"format": "pdf"})
        assert export.status_code == 400 and "'md' or 'json'" in export.json()["error"]
        markdown = c.get(f"/v1/conversations/{cid}/export")
        assert markdown.headers["content-type"].startswith("text/markdown")
        assert "hi" in markdown.text
        assert c.get("/v1/conversations/ffffffff/export").status_code == 404
        latin1 = c.post("/v1/conversations/import", content='{"t": "é"}'.encode("latin-1"))
        assert latin1.status_code == 400 and "not UTF-8" in latin1.json()["error"]
        listed = c.post("/v1/conversations/import", content=b"[]")  # the CLI's own message
        assert listed.status_code == 400 and "not a sadie conversation export" in listed.text


@pytest.mark.parametrize(
    ("error", "status", "kind"),
    [
        (UsageError("u"), 400, "usage"),
        (ConfigError("c"), 400, "usage"),
        (NotFoundError("n"), 404, "not_found"),
        (StorageError("s"), 503, "storage"),
        (LockedError("l"), 503, "storage"),
        (ModelMissing("m", fix="ollama pull qwen3:1.7b"), 502, "model_missing"),
        (ModelTimeout("t"), 504, "timeout"),
        (SadieError("x"), 500, "error"),
    ],
)
def test_every_sadie_error_has_a_status_from_its_kind(error, status, kind):
    resp = sadie_error_response(error)
    assert resp.status_code == status
    assert json.loads(bytes(resp.body)) == {"error": error.message, "fix": error.fix, "kind": kind}


# -- safe by default -------------------------------------------------------------------------
def test_origin_and_host_rules(offline):
    _, api = offline
    with client(api) as c:
        assert c.get("/v1/stats").status_code == 200  # loopback, no token set: open
        own = [f"http://127.0.0.1:{api.port}", f"http://localhost:{api.port}"]
        for origin in own:
            assert c.get("/v1/stats", headers={"Origin": origin}).status_code == 200
        for origin in (
            "http://evil.example",
            f"http://evil.example:{api.port}",
            "http://127.0.0.1:1",
            "null",
        ):
            refused = c.get("/v1/stats", headers={"Origin": origin})
            assert refused.status_code == 403 and refused.json()["kind"] == "forbidden"
        for host in ("evil.example", f"evil.example:{api.port}", "192.168.1.20"):
            assert c.get("/v1/stats", headers={"Host": host}).status_code == 403
        assert c.get("/v1/stats", headers={"Host": f"localhost:{api.port}"}).status_code == 200
        chat = c.post("/v1/chat", json={"message": "hi"}, headers={"Origin": "http://x.example"})
        assert chat.status_code == 403


def test_a_token_is_required_on_every_request_when_set(memory_home, embedder, monkeypatch):
    monkeypatch.setenv("SADIE_REASONER", "offline")
    session = open_session(memory_home, embedder)
    try:
        with running(session, token="s3cret") as api, client(api) as c:
            bare = c.get("/v1/health")
            assert bare.status_code == 401 and bare.headers["www-authenticate"] == "Bearer"
            assert bare.json()["kind"] == "unauthorized"
            wrong = {"Authorization": "Bearer nope"}
            assert c.get("/openapi.json", headers=wrong).status_code == 401
            good = {"Authorization": "Bearer s3cret"}
            assert c.get("/v1/health", headers=good).status_code == 200
            assert c.post("/v1/ask", json={"question": "Ines?"}, headers=good).status_code == 200
            foreign = {**good, "Origin": "http://evil.example"}
            assert c.get("/v1/health", headers=foreign).status_code == 403
    finally:
        session.close()


def test_binding_beyond_loopback_needs_a_token():
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert is_loopback(host) and check_bind(host, None) is None
    for host in ("0.0.0.0", "192.168.1.20", "::", "example.com"):
        with pytest.raises(UsageError, match="without a token"):
            check_bind(host, None)
        with pytest.raises(UsageError):
            check_bind(host, "   ")
        assert check_bind(host, "t0k") == "t0k"
    wildcard = Guard("0.0.0.0", 8765, "t0k")
    assert wildcard.host_allowed("192.168.1.20") and not wildcard.host_allowed("evil.example")
    assert not Guard("127.0.0.1", 8765).host_allowed("192.168.1.20")


def test_the_command_refuses_a_public_address_without_a_token(tmp_home):
    env = {k: v for k, v in os.environ.items() if k != "SADIE_API_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", "serve", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=TIMEOUT,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("sadie: refusing to serve the memory on 0.0.0.0")
    assert "SADIE_API_TOKEN" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_home / "sadie.duckdb").exists()  # refused before opening the memory


# -- end to end ------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_sadie_serve_with_curl(memory_home, server):
    server.queue(Reply(split_pieces(REPLY, 5)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "sadie_tui.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True)
    reader.start()
    try:
        first = lines.get(timeout=120)
        assert first.startswith("sadie: serving on http://127.0.0.1:"), first
        url = first.split("serving on ", 1)[1].strip()
        body = json.dumps({"message": "How was my long run?"})
        curl = subprocess.run(
            [
                "curl",
                "-N",
                "-sS",
                "--fail",
                "-H",
                "Content-Type: application/json",
                "-d",
                body,
                f"{url}/v1/chat",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert curl.returncode == 0, curl.stderr
        names = [
            x.split(":", 1)[1].strip() for x in curl.stdout.splitlines() if x.startswith("event:")
        ]
        assert names[0] == "meta" and names[-1] == "done" and "delta" in names
        assert names.index("citations") > names.index("delta")
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        reader.join(10)
    rest = []
    while not lines.empty():
        rest.append(lines.get())
    assert code == 0, "".join(rest)
    assert "Traceback" not in "".join(rest)


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_sadie_serve_on_a_unix_socket_of_its_own(memory_home, tmp_path):
    api = tmp_path / "api.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sadie_tui.cli", "serve", "--socket", str(api)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert first.strip() == f"sadie: serving on unix:{api}", first
        assert oct(api.stat().st_mode & 0o777) == "0o600"
        assert (memory_home / "sadie.sock").is_socket()  # other sadies still find it
        curl = subprocess.run(
            ["curl", "-sS", "--fail", "--unix-socket", str(api), "http://sadie/v1/health"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert curl.returncode == 0, curl.stderr
        assert json.loads(curl.stdout)["ok"] is True
        again = subprocess.run(
            [sys.executable, "-m", "sadie_tui.cli", "serve", "--socket", str(api)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )  # the memory is held: this one is refused with one line
        assert again.returncode != 0 and len(again.stderr.strip().splitlines()) == 1, again
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    assert not api.exists() and not (memory_home / "sadie.sock").exists()


def test_sadie_serve_prints_no_raw_library_lines(memory_home):
    """Issue 34, item 25: garbage on the port printed uvicorn's "Invalid HTTP request
    received" (with its traceback), and an MCP call of add_note while it is off printed the
    SDK's "Tool 'add_note' not listed"; `sadie serve` prints only its own lines."""
    import socket

    proc = subprocess.Popen(
        [sys.executable, "-m", "sadie_tui.cli", "serve", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stderr is not None
    reader = threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True)
    reader.start()
    try:
        first = lines.get(timeout=120)
        assert first.startswith("sadie: serving on http://127.0.0.1:"), first
        url = first.split("serving on ", 1)[1].strip()
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=60) as raw:
            raw.sendall(b"\x16\x03\x01 not HTTP at all\r\n\r\n")
            raw.recv(1024)  # the server's answer, or its close
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "add_note", "arguments": {"text": "A note."}},
        }
        answered = httpx.post(
            f"{url}/mcp",
            json=call,
            headers={"Accept": "application/json, text/event-stream"},
            timeout=120,
        )
        assert answered.status_code == 200, answered.text
        assert answered.json()["result"]["isError"] is True
        assert httpx.get(f"{url}/v1/health", timeout=60).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        reader.join(10)
    rest = []
    while not lines.empty():
        rest.append(lines.get())
    said = "".join(rest)
    assert code == 0, said
    assert "Invalid HTTP request" not in said and "not listed" not in said, said
    assert "Traceback" not in said and "WARNING" not in said, said
