"""The sadie processes a crash case kills, and what each reported as done before it died.

``ingest --json`` prints its summary once everything is committed; ``chat --ndjson`` and
``serve``'s ``/api/chat`` stream the turn's events (``meta`` once the conversation exists,
the first ``token`` once both messages are written, ``done`` once the reply is stored); a pin
answered 200 is stored. Output is read line by line as it comes, in threads.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from tests.support.crash import Workspace

ROOT = Path(__file__).resolve().parents[2]
WAIT = 180.0  # for a process to open the memory, or to die: generous, never an assumption
QUESTIONS = (
    "How was the pottery class?",
    "What did Ines say about the ferry?",
    "What about the week before?",
    "Was I worried about the promotion?",
)


@dataclass
class Reported:
    """What the killed process said was done before it died: committed, by its own account."""

    ingest_done: bool = False  # ingest printed its summary: every episode of the folder is in
    conversations: set[str] = field(default_factory=set)  # meta seen: the conversation exists
    users: dict[str, str] = field(default_factory=dict)  # reply id → the person's message id
    shown: set[str] = field(default_factory=set)  # replies with a token shown: rows written
    done: set[str] = field(default_factory=set)  # replies finished (``done``)
    pinned: set[str] = field(default_factory=set)  # conversations pinned (HTTP 200)
    encrypted: bool = False  # `sadie encrypt` said it was done: the memory must be encrypted
    backed_up: bool = False  # `sadie backup` said it was done: the file must restore whole
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
        parts += ["encrypted"] if self.encrypted else []
        parts += ["backed up"] if self.backed_up else []
        for name in ("conversations", "shown", "done", "pinned"):
            if getattr(self, name):
                parts.append(f"{len(getattr(self, name))} {name}")
        return ", ".join(parts) or "nothing"


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
        try:
            summary = json.loads("".join(self.stdout))
        except ValueError:
            return  # cut short: nothing said
        # Printed once everything is committed (killed later, while closing, it still counts).
        self.reported.ingest_done = isinstance(summary, dict) and "added" in summary


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
        except (httpx.HTTPError, ValueError):
            pass  # the server died (a line cut short with it): that is the point

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


#: The passphrase `sadie encrypt` is given in a crash case (and the checks open it with).
PASSPHRASE = "crash passphrase"


class EncryptRun(Run):
    """`sadie encrypt` of the existing memory (the passphrase from SADIE_PASSPHRASE)."""

    def args(self) -> list[str]:
        return ["encrypt", "--no-keyring"]

    def env(self) -> dict[str, str]:
        return {**self.ws.env(self.home), "SADIE_PASSPHRASE": PASSPHRASE}

    def on_stdout(self, line: str) -> None:
        if line.startswith("encrypted the memory"):
            self.reported.encrypted = True


def backup_file(home: Path) -> Path:
    return home.parent / "memory.backup"


class BackupRun(Run):
    """`sadie backup` of the existing memory, beside its home."""

    def args(self) -> list[str]:
        return ["backup", str(backup_file(self.home))]

    def on_stdout(self, line: str) -> None:
        if line.startswith("backed up"):
            self.reported.backed_up = True


def run_for(scenario: str, memory: str, ws: Workspace, home: Path, rng: random.Random) -> Run:
    """The process of a case."""
    existing = memory != "new"
    if scenario == "ingest":
        return IngestRun(ws, home, rng)
    if scenario == "chat":
        return ChatRun(ws, home, rng, existing)
    if scenario == "encrypt":
        return EncryptRun(ws, home, rng)
    if scenario == "backup":
        return BackupRun(ws, home, rng)
    return ServeRun(ws, home, rng, existing)
