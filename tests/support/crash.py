"""The crash-consistency driver (issue 23): sadie in a subprocess on a memory, killed with
SIGKILL at a seeded random instant, then the memory reopened and checked (``crash_checks``).

A case is a scenario (``ingest``, ``chat`` or ``serve``) on a memory (``new``: its first
session, created and migrated by the process that is killed; ``existing``: a copy of one built
once) with a seed. The seed decides everything random in the case: the kill's delay after the
process has the memory file open (uniform within the scenario's span), and for chats whether
the scripted Ollama server or the offline reasoner answers and whether the existing
conversation goes on. The driver reads what the process reported as done (ingest's summary,
the chat events, the HTTP responses) to know what was committed. The promise checked, after
SQLite's crash tests: a committed write survives any crash; an uncommitted one leaves no trace.

Replay one case with ``bench/crash.py --seed N --scenario S --memory M``.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support.crash_notes import write_notes
from tests.support.ollama_server import FakeOllama, Reply, default_responder

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ("ingest", "chat", "serve")
MEMORIES = ("new", "existing")
# Seconds after the process has the memory open within which it is killed: a little more than
# each one runs on an unloaded 2-core machine, so that about one in ten ends first (and is
# checked all the same: everything it reported done must be there). `serve` runs until killed.
SPANS = {
    ("ingest", "new"): 4.5,
    ("ingest", "existing"): 2.5,
    ("chat", "new"): 2.0,
    ("chat", "existing"): 3.0,
    ("serve", "new"): 5.0,
    ("serve", "existing"): 5.0,
}
WAIT = 180.0  # for a process to open the memory, or to die: generous, never an assumption
PIECE_DELAY = 0.03  # the scripted model's pause before each piece: replies stream ~1 s
QUESTIONS = (
    "How was the pottery class?",
    "What did Ines say about the ferry?",
    "What about the week before?",
    "Was I worried about the promotion?",
)


@dataclass(frozen=True)
class Case:
    scenario: str
    memory: str
    seed: int

    def __str__(self) -> str:
        return f"{self.scenario}-{self.memory}-{self.seed}"

    def rng(self) -> random.Random:
        return random.Random(str(self))


def cases(count: int, first_seed: int = 0) -> list[Case]:
    """``count`` cases, every scenario on both memories in turn, seeds from ``first_seed``."""
    combos = [(s, m) for m in MEMORIES for s in SCENARIOS]
    return [Case(*combos[i % len(combos)], first_seed + i) for i in range(count)]


@dataclass
class Reported:
    """What the killed process said was done before it died: committed, by its own account."""

    ingest_done: bool = False  # ingest printed its summary: every episode of the folder is in
    conversations: set[str] = field(default_factory=set)  # meta seen: the conversation exists
    users: dict[str, str] = field(default_factory=dict)  # reply id → the person's message id
    shown: set[str] = field(default_factory=set)  # replies with a token shown: rows written
    done: set[str] = field(default_factory=set)  # replies finished (``done``)
    pinned: set[str] = field(default_factory=set)  # conversations pinned (HTTP 200)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def event(self, event: dict[str, Any]) -> None:
        """One chat event (``chat --ndjson`` line or ``/api/chat`` line)."""
        kind = event.get("type")
        with self.lock:
            if kind == "meta":
                self.conversations.add(event["conversation_id"])
                self.users[event["message_id"]] = event["user_message_id"]
            elif kind == "token" and self.users:
                self.shown.add(list(self.users)[-1])
            elif kind == "done":
                self.done.add(event["message_id"])

    def summary(self) -> str:
        parts = ["ingest done"] if self.ingest_done else []
        for name in ("conversations", "shown", "done", "pinned"):
            if getattr(self, name):
                parts.append(f"{len(getattr(self, name))} {name}")
        return ", ".join(parts) or "nothing"


@dataclass
class Workspace:
    """Built once per run of cases: the notes (version 2), the existing memory (built from
    version 1, with a conversation), what each version's episodes hash to, the model."""

    root: Path
    notes: Path
    base: Path
    embedder: Any
    ollama_url: str
    first: dict[str, str]  # source key → content hash in version 1
    second: dict[str, str]  # and in version 2
    base_conversation: str
    base_messages: set[str]

    def env(self, home: Path, *, offline: bool = False) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("SADIE_MODEL", "COLUMNS")}
        env.update(
            SADIE_HOME=str(home),
            SADIE_CONFIG=str(self.root / "config"),
            PYTHONPATH=str(ROOT),
            OLLAMA_HOST="http://127.0.0.1:9" if offline else self.ollama_url,
            SADIE_REASONER="offline" if offline else "ollama",
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            HF_HUB_DISABLE_PROGRESS_BARS="1",
            TOKENIZERS_PARALLELISM="false",
        )
        return env


def _hashes(folder: Path) -> dict[str, str]:
    from sadie_tui.engine.ingest.readers import read_all

    return {ep.source_key: ep.content_hash for ep in read_all([folder]).episodes}


def _slow_reply(body: dict) -> Reply:
    reply = default_responder(body)
    reply.delay = PIECE_DELAY
    return reply


@contextmanager
def workspace(root: Path, embedder: Any) -> Iterator[Workspace]:
    """The notes and the existing memory under ``root``, and the scripted model, meanwhile."""
    from sadie_tui.engine.conversations import lifecycle, message_log
    from sadie_tui.engine.memory import Memory

    notes = write_notes(root / "notes", 1)
    first = _hashes(notes)
    base = root / "base"
    with Memory.open(base, embedder=embedder) as memory:
        memory.ingest([notes])
        conversation = lifecycle.create_conversation(memory.db, "The pottery class")
        messages = {
            message_log.add_message(memory.db, conversation.id, "user", "How was pottery?"),
            message_log.add_message(memory.db, conversation.id, "assistant", "You loved it."),
        }
    write_notes(notes, 2)
    with FakeOllama(responder=_slow_reply) as server:
        yield Workspace(
            root,
            notes,
            base,
            embedder,
            server.url,
            first,
            _hashes(notes),
            conversation.id,
            messages,
        )


# --------------------------------------------------------------------------- the processes


class Run:
    """One sadie subprocess, its output read line by line as it comes."""

    def __init__(self, ws: Workspace, home: Path, rng: random.Random) -> None:
        self.ws, self.home, self.rng = ws, home, rng
        self.reported = Reported()
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.threads: list[threading.Thread] = []
        self.proc: subprocess.Popen[str] | None = None

    def args(self) -> list[str]:
        raise NotImplementedError

    def env(self) -> dict[str, str]:
        return self.ws.env(self.home)

    def on_stdout(self, line: str) -> None:
        pass

    def on_stderr(self, line: str) -> None:
        pass

    def start(self) -> subprocess.Popen[str]:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sadie_tui.cli", *self.args()],
            cwd=ROOT,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._read(self.proc.stdout, self.stdout, self.on_stdout)
        self._read(self.proc.stderr, self.stderr, self.on_stderr)
        return self.proc

    def _read(self, stream: Any, into: list[str], each: Callable[[str], None]) -> None:
        def pump() -> None:
            for line in stream:
                into.append(line)
                each(line)

        thread = threading.Thread(target=pump, daemon=True)
        thread.start()
        self.threads.append(thread)

    def finish(self) -> None:
        """After the process is gone: every line read (and any client stopped)."""
        for thread in self.threads:
            thread.join(WAIT)


class IngestRun(Run):
    def args(self) -> list[str]:
        return ["ingest", "--json", str(self.ws.notes)]

    def finish(self) -> None:
        super().finish()
        assert self.proc is not None
        try:
            summary = json.loads("".join(self.stdout))
        except ValueError:
            return
        self.reported.ingest_done = self.proc.returncode == 0 and "added" in summary


class ChatRun(Run):
    def __init__(self, ws: Workspace, home: Path, rng: random.Random, existing: bool) -> None:
        super().__init__(ws, home, rng)
        self.offline = rng.random() < 0.25
        self.goes_on = existing and rng.random() < 0.5
        self.question = rng.choice(QUESTIONS)

    def args(self) -> list[str]:
        more = ["--conversation", self.ws.base_conversation] if self.goes_on else []
        return ["chat", "--ndjson", self.question, *more]

    def env(self) -> dict[str, str]:
        return self.ws.env(self.home, offline=self.offline)

    def on_stdout(self, line: str) -> None:
        try:
            self.reported.event(json.loads(line))
        except ValueError:
            pass


_SERVING = re.compile(r"serving on (http://\S+)")


class ServeRun(Run):
    """`sadie serve`, and a client that chats with it (and pins) until it dies."""

    def __init__(self, ws: Workspace, home: Path, rng: random.Random, existing: bool) -> None:
        super().__init__(ws, home, rng)
        self.existing = existing
        self.client_rng = random.Random(rng.random())
        self.stopped = threading.Event()

    def args(self) -> list[str]:
        return ["serve", "--port", "0"]

    def on_stderr(self, line: str) -> None:
        found = _SERVING.search(line)
        if found:
            client = threading.Thread(target=self._client, args=(found.group(1),), daemon=True)
            client.start()
            self.threads.append(client)

    def _client(self, url: str) -> None:
        rng = self.client_rng
        conversation = self.ws.base_conversation if self.existing else None
        try:
            with httpx.Client(base_url=url, timeout=WAIT) as client:
                while not self.stopped.is_set():
                    body: dict[str, Any] = {"message": rng.choice(QUESTIONS)}
                    if conversation and rng.random() < 0.6:
                        body["conversation_id"] = conversation
                    conversation = self._chat(client, body) or conversation
                    if conversation and rng.random() < 0.3:
                        if client.post(f"/v1/conversations/{conversation}/pin").is_success:
                            with self.reported.lock:
                                self.reported.pinned.add(conversation)
        except httpx.HTTPError:
            pass  # the server died: that is the point

    def _chat(self, client: httpx.Client, body: dict[str, Any]) -> str | None:
        conversation = None
        with client.stream("POST", "/api/chat", json=body) as response:
            for line in response.iter_lines():
                if line.strip():
                    event = json.loads(line)
                    self.reported.event(event)
                    conversation = event.get("conversation_id", conversation)
        return conversation

    def finish(self) -> None:
        self.stopped.set()
        super().finish()


def _run_for(case: Case, ws: Workspace, home: Path, rng: random.Random) -> Run:
    existing = case.memory == "existing"
    if case.scenario == "ingest":
        return IngestRun(ws, home, rng)
    if case.scenario == "chat":
        return ChatRun(ws, home, rng, existing)
    return ServeRun(ws, home, rng, existing)


# --------------------------------------------------------------------------- one case


@dataclass
class Outcome:
    case: Case
    delay: float  # seconds after the process had the memory open
    killed: bool  # still running when the kill came (else it had ended by itself)
    ran: float  # seconds from opening the memory to its end
    reported: Reported
    problems: list[str]
    output: str  # the process's last lines, for the report

    @property
    def lost(self) -> bool:
        """Something committed is not there (or cannot be reached: the memory does not open)."""
        return any(p.startswith(("lost", "does not open")) for p in self.problems)

    @property
    def reopened(self) -> bool:
        return not any(p.startswith(("does not open", "doctor")) for p in self.problems)

    def describe(self) -> str:
        how = "killed" if self.killed else "it ended first"
        head = (
            f"case {self.case} (seed {self.case.seed}): SIGKILL {self.delay:.3f} s after it"
            f" opened the memory ({how}); reported: {self.reported.summary()}"
        )
        lines = [head, *(f"  - {p}" for p in self.problems)]
        if self.problems and self.output:
            lines.append("  output:\n" + self.output)
        return "\n".join(lines)


def holds(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open (Linux's /proc; elsewhere: the file exists)."""
    fds = Path(f"/proc/{pid}/fd")
    if not fds.is_dir():
        return path.exists()
    target = os.path.realpath(path)
    try:
        return any(os.readlink(fd) == target for fd in fds.iterdir())
    except OSError:  # an fd closed while we looked
        return False


def wait_until_open(proc: subprocess.Popen[str], path: Path) -> None:
    deadline = time.monotonic() + WAIT
    while proc.poll() is None and not holds(proc.pid, path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the process did not open {path} in {WAIT:.0f} s")
        time.sleep(0.005)


def run_case(ws: Workspace, case: Case, workdir: Path, scale: float = 1.0) -> Outcome:
    """Run ``case`` in ``workdir`` (its home is ``workdir/home``) and check the memory."""
    from tests.support.crash_checks import check

    home = workdir / "home"
    if case.memory == "existing":
        shutil.copytree(ws.base, home)
    rng = case.rng()
    delay = rng.uniform(0.0, SPANS[case.scenario, case.memory] * scale)
    run = _run_for(case, ws, home, rng)
    proc = run.start()
    try:
        wait_until_open(proc, home / "sadie.duckdb")
        opened = time.monotonic()
        try:
            proc.wait(timeout=delay)
            killed = False
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            killed = True
        proc.wait(WAIT)
        ran = time.monotonic() - opened
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    run.finish()
    output = "".join((run.stderr + run.stdout)[-12:])
    problems = check(ws, case, home, run.reported)
    return Outcome(case, delay, killed, ran, run.reported, problems, output)
