"""A hostile trial's defects (issue 23, items 2–12), each reproduced with the input the trial
used: text a policy withheld, non-UTF-8 names and arguments, a holder that dies under its
client, hostile JSON bodies, signals in a stream, exports' file mode, forged citations in an
import, and "first" in retrieval.

Real parts throughout (a DuckDB memory, the project's Ollama-protocol server, the real HTTP
server and clients, subprocesses); a scripted ``FakeSession`` where the memory is not the
point.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from sadie_tui.config import load_settings
from sadie_tui.display import safe
from sadie_tui.engine.errors import ExitCode
from sadie_tui.engine.events import (
    CitationsEvent,
    CitationView,
    Done,
    EmotionEvent,
    Event,
    Meta,
    Replace,
    Token,
    to_json,
)
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.operations import (
    Export,
    ImportConversation,
    ListChips,
    ListConversations,
    ShowConversation,
)
from sadie_tui.engine.requests import ChatTurn
from sadie_tui.engine.session import Session
from tests.conftest import write_notes
from tests.support.fake_session import FakeSession
from tests.support.ollama_server import FakeOllama, Reply, split_pieces
from tests.support.serve import running
from tests.support.tui import copy_home
from tests.support.turns import episode_of, run_chat

ROOT = Path(__file__).resolve().parent.parent
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
    comp = Session(memory, load_settings())
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
        shown = json.dumps(
            [m.to_json() for m in session.call(ShowConversation(cid)).messages]
        )  # show --json, GET
        exported = session.call(Export(cid, "json"))  # export --format json, GET …/export
        for text in (shown, exported, session.call(Export(cid, "md"))):
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


# --------------------------------------------------------------------------- items 3 and 7: names


def _cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    """``sadie ARGS`` in a subprocess on a home under ``tmp_path``; output kept as bytes."""
    environ = dict(os.environ, SADIE_HOME=str(tmp_path / "home"), SADIE_REASONER="offline")
    environ.update(SADIE_CONFIG=str(tmp_path / "config"), OLLAMA_HOST="http://127.0.0.1:9")
    environ.pop("COLUMNS", None)
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", *args],
        capture_output=True,
        env=environ,
        cwd=ROOT,
        timeout=300,
    )


def test_names_that_are_not_utf8_are_skipped_named_and_escaped(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "fine.md").write_text("A fine note about the knee.", "utf-8")
    (notes / os.fsdecode(b"bad\xff.md")).write_text("A note with a bad name.", "utf-8")
    (notes / os.fsdecode(b"csi\x9b31m.png")).write_bytes(b"\x89PNG")  # 0x9B: 8-bit CSI
    folder = tmp_path / os.fsdecode(b"more\xff")
    folder.mkdir()
    (folder / "inside.md").write_text("A note in a folder with a bad name.", "utf-8")

    done = _cli(tmp_path, "ingest", str(notes), str(folder))
    assert done.returncode == 6, done.stderr.decode(errors="replace")  # partial: some skipped
    assert b"Traceback" not in done.stderr
    assert b"\x9b" not in done.stdout and b"\xff" not in done.stdout
    out = done.stdout.decode("utf-8")
    assert re.search(r"^added\s+1$", out, re.M), out
    skipped = {line for line in out.splitlines() if line.startswith("skipped /")}
    assert skipped == {
        f"skipped {notes}/bad\\xff.md: the file name is not UTF-8",
        f"skipped {notes}/csi\\x9b31m.png: unsupported file type (.png)",
        f"skipped {tmp_path}/more\\xff: the folder name is not UTF-8",
    }


def test_a_byte_that_is_not_utf8_is_shown_as_an_escape() -> None:
    assert safe(os.fsdecode(b"csi\x9b31m \xff")) == "csi\\x9b31m \\xff"
    assert safe("half a pair \ud800") == "half a pair ⟨U+D800⟩"


# --------------------------------------------------------------------------- item 4: holder dies


def _holder_that_dies(path: Path) -> threading.Thread:
    """A holder on the Unix socket ``path`` that answers one chat with its ``meta`` line and
    then dies: the connection closes in the middle of the chunked NDJSON body."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    meta = Meta("c" * 32, "fake:1b", "friend", False, "m2", "m1", "hello")
    line = (json.dumps(to_json(meta)) + "\n").encode()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn, listener:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\n"
                b"transfer-encoding: chunked\r\n\r\n" + b"%x\r\n%s\r\n" % (len(line), line)
            )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def test_a_client_whose_holder_dies_gets_one_line_and_an_error_event(
    tmp_path: Path, capsys
) -> None:
    from sadie_tui.commands.context import Context
    from sadie_tui.commands.headless import chat
    from sadie_tui.serve.remote import RemoteSession

    sock = tmp_path / "sadie.sock"
    holder = _holder_that_dies(sock)
    ctx = Context(home=tmp_path, settings=load_settings())
    ctx._session = RemoteSession(tmp_path, ctx.settings, sock, holder="another sadie (pid 1)")
    try:
        code = chat(ctx, "hello", conversation_id=None, persona=None, new=False, ndjson=True)
    finally:
        ctx.close()
    holder.join(TIMEOUT)
    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["type"] for e in events] == ["meta", "error"]
    assert events[-1]["code"] == "stream"
    assert code == ExitCode.MODEL  # as when the connection to the model breaks mid-reply
    (line,) = err.splitlines()  # one line, no traceback
    assert line.startswith("sadie: lost the memory's holder, another sadie (pid 1) (")
    assert line.endswith("(run the command again)")


# --------------------------------------------------------------------------- item 5: not text

NOT_UTF8 = os.fsdecode(b"knee \xff")  # what `sadie search $'knee \xff'` gets in argv


def test_arguments_that_are_not_utf8_are_one_usage_line(memory_home: Path, tmp_path) -> None:
    env = {"SADIE_HOME": str(memory_home)}
    for args in (
        ["search", NOT_UTF8],
        ["--ask", NOT_UTF8],
        ["chat", NOT_UTF8],
        ["conversations", "show", os.fsdecode(b"abcd\x9b")],
    ):
        done = _cli(tmp_path, *args, **env)
        lines = done.stderr.decode("utf-8").splitlines()
        assert done.returncode == 2 and len(lines) == 1, (args, done.stderr)
        assert lines[0].startswith("sadie: Invalid value for ") and "not UTF-8 text" in lines[0]
        assert "\\xff" in lines[0] or "\\x9b" in lines[0]
    listed = _cli(tmp_path, "conversations", "list", "--json", **env)
    assert json.loads(listed.stdout) == []  # the chat left no conversation behind


def test_an_export_with_a_lone_surrogate_is_one_usage_line(tmp_path: Path) -> None:
    forged = tmp_path / "forged.json"
    body = '"conversation": {"title": "Knee"}, "messages": [{"role": "user", "content": "\\ud800"}]'
    forged.write_text("{" + body + "}", "utf-8")
    done = _cli(tmp_path, "conversations", "import", str(forged))
    assert done.returncode == 2, done.stderr
    assert done.stderr.decode().splitlines() == [
        "sadie: not a sadie conversation export: a string holds a lone surrogate (such as \\ud800)"
    ]
    listed = _cli(tmp_path, "conversations", "list", "--json")
    assert json.loads(listed.stdout) == []


@pytest.fixture
def offline_api(memory_home: Path, embedder, monkeypatch):  # type: ignore[no-untyped-def]
    """The real server over the small memory, answering with the offline reasoner."""
    monkeypatch.setenv("SADIE_REASONER", "offline")
    session = Session(Memory.open(memory_home, embedder=embedder), load_settings())
    try:
        with running(session) as api, httpx.Client(base_url=api.url, timeout=TIMEOUT) as c:
            yield session, c
    finally:
        session.close()


def _post(c: httpx.Client, url: str, body: str) -> httpx.Response:
    return c.post(url, content=body.encode(), headers={"Content-Type": "application/json"})


def test_a_lone_surrogate_in_a_body_is_400_and_leaves_nothing(offline_api) -> None:
    session, c = offline_api
    cid = c.post("/api/chat", json={"message": "hello"}).text.splitlines()
    cid = json.loads(cid[0])["conversation_id"]
    before = [x.id for x in session.call(ListConversations())]
    for url, body in (
        ("/v1/ask", '{"question": "knee \\ud800"}'),
        (f"/v1/conversations/{cid}/chips", '{"kind": "wiki", "ref": "\\ud800"}'),
        ("/api/chat", '{"message": "knee \\ud800"}'),
        ("/v1/chat", '{"message": "knee \\ud800"}'),
    ):
        answer = _post(c, url, body)
        assert answer.status_code == 400, (url, answer.text)
        assert answer.json()["kind"] == "usage" and "surrogate" in answer.json()["error"]
    assert [x.id for x in session.call(ListConversations())] == before
    assert session.call(ListChips(cid)) == []


class _Failing(FakeSession):
    async def chat(self, request: ChatTurn) -> AsyncIterator[Event]:
        yield Meta("f" * 32, "fake:1b", "friend", False, "m2", "m1", request.message)
        yield EmotionEvent("curious")
        await asyncio.sleep(0)  # the engine's next step runs in a thread: the stream has begun
        raise TypeError("TextEncodeInput must be Union[TextInputSequence, …]")


def test_a_stream_whose_turn_fails_ends_with_an_error_event(tmp_path: Path) -> None:
    with running(_Failing(tmp_path)) as api, httpx.Client(base_url=api.url, timeout=TIMEOUT) as c:
        lines = [
            json.loads(x) for x in c.post("/api/chat", json={"message": "x"}).text.splitlines()
        ]
    assert [e["type"] for e in lines] == ["meta", "emotion", "error"]
    assert lines[-1]["code"] == "error" and lines[-1]["message_id"] == "m2"


# --------------------------------------------------------------------------- item 9: bodies


def test_json_nested_100k_deep_is_a_400(tmp_path: Path) -> None:
    deep = '{"question": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with running(FakeSession(tmp_path)) as api, httpx.Client(base_url=api.url) as c:
        answer = _post(c, "/v1/ask", deep)
    assert answer.status_code == 400, answer.text
    assert answer.json() == {
        "error": "the body nests more than 32 levels deep",
        "fix": None,
        "kind": "usage",
    }


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_client_that_hangs_up_mid_body_logs_no_traceback(tmp_path: Path) -> None:
    records = _Records()
    with running(FakeSession(tmp_path)) as api, httpx.Client(base_url=api.url) as c:
        logging.getLogger("uvicorn.error").addHandler(records)
        try:
            for _ in range(3):
                with socket.create_connection(("127.0.0.1", api.port)) as hangs_up:
                    hangs_up.sendall(
                        b"POST /v1/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n"
                        b'Content-Type: application/json\r\n\r\n{"question": '
                    )
            # Nothing answers a client that is gone: give the server a second to handle the
            # three hang-ups (a traceback was logged within milliseconds), still serving.
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline and not records.records:
                assert c.get("/v1/health").status_code == 200
        finally:
            logging.getLogger("uvicorn.error").removeHandler(records)
    assert [r.getMessage() for r in records.records] == []


# --------------------------------------------------------------------------- item 10


def test_a_signal_ends_the_ndjson_stream_with_an_error_event(tmp_path: Path) -> None:
    home = copy_home(tmp_path)
    with FakeOllama() as slow:
        slow.queue(Reply([f"word{n} " for n in range(60)], delay=2.0))
        env = dict(os.environ, SADIE_HOME=str(home), SADIE_CONFIG=str(tmp_path / "config"))
        env.update(OLLAMA_HOST=slow.url, SADIE_REASONER="ollama")
        proc = subprocess.Popen(
            [sys.executable, "-m", "sadie_tui.cli", "chat", "How was the pottery class?"]
            + ["--ndjson"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None
            lines = []
            while not any("word1" in line for line in lines):
                line = proc.stdout.readline()
                assert line, "the stream ended before the second word"
                lines.append(line)
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
    events = [json.loads(line) for line in [*lines, *out.splitlines()]]
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert events[-1] == {
        "type": "error",
        "message": "stopped by SIGTERM: the reply so far is kept as interrupted",
        "code": "interrupted",
        "fix": None,
        "message_id": events[0]["message_id"],
    }
    assert err.strip().splitlines() == ["sadie: stopped by SIGTERM"]


def test_an_export_file_is_private_whatever_the_umask(tmp_home: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sadie_tui import cli

    session = Session.open(tmp_home, load_settings())
    try:
        exported = {
            "conversation": {"title": "Pottery"},
            "messages": [{"role": "user", "content": "hi"}],
        }
        cid = session.call(ImportConversation(json.dumps(exported))).id
    finally:
        session.close()
    target = tmp_path / "pottery.json"
    mask = os.umask(0)
    try:
        done = CliRunner().invoke(
            cli.main_group, ["conversations", "export", cid, "--format", "json", "-o", str(target)]
        )
    finally:
        os.umask(mask)
    assert done.exit_code == 0, done.output
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert json.loads(target.read_text("utf-8"))["messages"][0]["content"] == "hi"


# --------------------------------------------------------------------------- item 6: forged cites


def test_an_import_polices_its_citations_against_the_memory(memory) -> None:  # type: ignore[no-untyped-def]
    race, _ = episode_of(memory, "Race day")
    forged = {"episode_id": race, "quote": "Finished the Lisbon marathon in 2:59"}
    true = {"episode_id": race, "quote": "Cried at the finish line."}
    stranger = {"episode_id": "3f7f7a68-0b1c-4d2e-9f00-1234567890ab", "quote": "Never written"}
    export = {
        "format": "sadie-conversation",
        "version": 1,
        "conversation": {"title": "Race day"},
        "messages": [
            {"role": "user", "content": "How was the marathon?"},
            {
                "role": "assistant",
                "content": "You ran it in 2:59.",
                "citations": [
                    {**forged, "support": "verbatim", "label": "verbatim", "title": "Race day"},
                    {**true, "support": "paraphrase", "title": "Made up", "date": "1999-01-01"},
                    {**stranger, "support": "verbatim", "title": "Nowhere"},
                ],
                "metadata": {
                    "found_by_sadie": [
                        {**forged, "support": "verbatim", "origin": "sadie"},
                        {**true, "support": "verbatim", "origin": "sadie"},
                    ]
                },
            },
        ],
    }
    session = Session(memory, load_settings())
    cid = session.call(ImportConversation(json.dumps(export))).id
    reply = session.call(ShowConversation(cid)).messages[-1]
    shown = [CitationView.from_json(c) for c in reply.citations]  # as a screen shows them
    assert [(c.quote, c.support, c.label) for c in shown] == [
        (forged["quote"], "paraphrase", "paraphrase"),
        (true["quote"], "verbatim", "verbatim"),
    ]
    assert {(c["title"], c["date"]) for c in reply.citations} == {("Race day", "2026-10-11")}
    assert [c["quote"] for c in reply.metadata["found_by_sadie"]] == [true["quote"]]


# --------------------------------------------------------------------------- item 8: import sizes


def _export_of(size: int) -> str:
    """A valid export of about ``size`` bytes (messages of 4 KB)."""
    text = "The long walk home, again. " * 150
    messages = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": text}
        for n in range(size // len(text) + 1)
    ]
    return json.dumps({"conversation": {"title": "A long one"}, "messages": messages})


def test_import_has_the_same_limits_with_and_without_a_holder(
    tmp_home: Path, tmp_path: Path
) -> None:
    from sadie_tui.engine.conversations.export_format import MAX_EXPORT_BYTES
    from sadie_tui.serve.holder import hold

    big = tmp_path / "big.json"  # over the API's 1 MB for other bodies
    big.write_text(_export_of(1_500_000), "utf-8")
    huge = tmp_path / "huge.json"  # over the limit of an export
    huge.write_text(_export_of(MAX_EXPORT_BYTES + 1), "utf-8")
    env = {"SADIE_HOME": str(tmp_home)}

    def both() -> list[tuple[int, str]]:
        done = [_cli(tmp_path, "conversations", "import", str(f), **env) for f in (big, huge)]
        return [(d.returncode, d.stderr.decode()) for d in done]

    session = Session.open(tmp_home, load_settings())
    try:
        holder = hold(session)
        assert holder is not None
        try:
            held = both()
        finally:
            holder.stop()
    finally:
        session.close()
    alone = both()
    limit = f"larger than {MAX_EXPORT_BYTES // 2**20} MB"
    assert held[0] == alone[0] == (0, "")
    assert held[1][0] == alone[1][0] == 2 and limit in held[1][1] and limit in alone[1][1]
    assert held[1][1] == alone[1][1]


# --------------------------------------------------------------------------- item 11: "first"


def _journal(day: str, title: str, text: str) -> tuple[str, str]:
    return f"journal/{day}.md", f"---\ntitle: {title}\ndate: {day}\nkind: journal\n---\n{text}"


GREENHOUSE = dict(
    [
        _journal(
            "2026-02-08",
            "Sunday at Dad's",
            "Long lunch at Dad's. He talked about the allotment committee, the leek competition"
            " and a plan to build a greenhouse from the old windows the neighbours threw out."
            " I mostly listened. Ife slept on my lap through all of it.",
        ),
        _journal(
            "2026-07-14",
            "First tomatoes",
            "First tomatoes planted in the greenhouse today. The greenhouse smells of warm soil"
            " and tomato leaves; I could sit in the greenhouse all afternoon.",
        ),
        _journal(
            "2026-06-03",
            "Planting",
            "Dad walked me round his allotment on the phone, the greenhouse full of seedlings.",
        ),
        _journal(
            "2026-05-26",
            "Estuary, a shape",
            "I wrote for an hour about the estuary. Writing first thing is the only way I write"
            " at all; the first page is always about light on the water.",
        ),
        _journal(
            "2026-01-31",
            "Sixteen kilometres",
            "First long run of the year, sixteen kilometres. I want to write down the route.",
        ),
    ]
)


def test_first_means_the_oldest_note_on_the_topic(tmp_path: Path, tmp_home: Path, embedder) -> None:
    from sadie_tui.engine.personas import get_persona
    from sadie_tui.engine.retrieval import retrieve
    from sadie_tui.engine.retrieval.recency import by_date

    notes = write_notes(tmp_path / "notes", GREENHOUSE)
    with Memory.open(tmp_home, embedder=embedder) as memory:
        memory.ingest([notes])
        result = retrieve(
            memory, "When did I first write about the greenhouse?", get_persona("analyst")
        )
    assert result.recency is not None and result.recency.order == "oldest"
    ranked = [c.title for c in result.chunks]
    on_topic = ["Sunday at Dad's", "Planting", "First tomatoes"]  # the notes with a greenhouse
    assert ranked[:3] == on_topic, ranked  # in date order: "first" is the oldest of them
    assert [c.title for c in by_date(result.chunks, result.recency)][:3] == on_topic
