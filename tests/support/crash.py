"""The crash-consistency driver (issue 23): sadie in a subprocess on a memory, killed with
SIGKILL at a seeded random instant, then the memory reopened and checked (``crash_checks``).

A case is a scenario (``ingest``, ``chat``, ``serve``, ``encrypt`` or ``backup``) on a memory (``new``: its first
session, created and migrated by the process that is killed; ``existing``: a copy of one built
once; ``older``: the same a schema step behind, so the process killed upgrades it first) with a
seed. The seed decides everything random in the case: the kill's delay after the
process has the memory file open (uniform within the scenario's span), and for chats whether
the scripted Ollama server or the offline reasoner answers and whether the existing
conversation goes on. The driver reads what the process reported as done (ingest's summary,
the chat events, the HTTP responses) to know what was committed. The promise checked, after
SQLite's crash tests: a committed write survives any crash; an uncommitted one leaves no trace.

Replay one case with ``bench/crash.py --seed N --scenario S --memory M``.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.crash_notes import write_notes
from tests.support.crash_runs import ROOT, WAIT, Reported, run_for
from tests.support.ollama_server import FakeOllama, Reply, default_responder

SCENARIOS = ("ingest", "chat", "serve", "encrypt", "backup")
MEMORIES = ("new", "existing", "older")
# `sadie encrypt` and `sadie backup` work on a memory that exists: killed anywhere in them,
# the memory opens (plain or encrypted, whole) and a backup file is either whole or absent.
ON_EXISTING_ONLY = ("encrypt", "backup")
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
    ("ingest", "older"): 2.5,
    ("chat", "older"): 3.0,
    ("serve", "older"): 5.0,
    ("encrypt", "existing"): 0.5,
    ("backup", "existing"): 0.2,
}
PIECE_DELAY = 0.03  # the scripted model's pause before each piece: replies stream ~1 s


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
    """``count`` cases, every scenario on every kind of memory in turn, seeds from ``first_seed``."""
    combos = [
        (s, m) for m in MEMORIES for s in SCENARIOS if s not in ON_EXISTING_ONLY or m == "existing"
    ]
    return [Case(*combos[i % len(combos)], first_seed + i) for i in range(count)]


@dataclass
class Workspace:
    """Built once per run of cases: the notes (version 2), the existing memory (built from
    version 1, with a conversation), what each version's episodes hash to, the model."""

    root: Path
    notes: Path
    base: Path
    older: Path  # ``base`` without its last schema step
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
    from sadie_tui.engine.retrieval.keyword import keep_current

    notes = write_notes(root / "notes", 1)
    first = _hashes(notes)
    base = root / "base"
    with Memory.open(base, embedder=embedder) as memory:
        keep_current(memory)  # as a Session does: the index saved with the memory
        memory.ingest([notes])
        conversation = lifecycle.create_conversation(memory.db, "The pottery class")
        messages = {
            message_log.add_message(memory.db, conversation.id, "user", "How was pottery?"),
            message_log.add_message(memory.db, conversation.id, "assistant", "You loved it."),
        }
    write_notes(notes, 2)
    older = _older(base, root / "older")
    with FakeOllama(responder=_slow_reply) as server:
        yield Workspace(
            root,
            notes,
            base,
            older,
            embedder,
            server.url,
            first,
            _hashes(notes),
            conversation.id,
            messages,
        )


def _older(base: Path, older: Path) -> Path:
    """A copy of ``base`` as sadie left it before migration 006 (its columns dropped, its row
    deleted): the next open upgrades it."""
    from sadie_tui.engine.store.db import connect

    shutil.copytree(base, older)
    with connect(older / "sadie.duckdb") as db:
        for column in ("tail", "repaired", "citation_pass", "unsupported", "cut"):
            db.execute(f"ALTER TABLE turns DROP COLUMN {column}")
        db.execute("DELETE FROM schema_migrations WHERE name = '006_turn_grounding'")
    return older


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
    if case.memory != "new":
        shutil.copytree(ws.older if case.memory == "older" else ws.base, home)
    rng = case.rng()
    delay = rng.uniform(0.0, SPANS[case.scenario, case.memory] * scale)
    run = run_for(case.scenario, case.memory, ws, home, rng)
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
    if home.exists():  # the checks write to it: keep the home as the kill left it
        shutil.copytree(home, workdir / "as-killed", ignore=shutil.ignore_patterns("*.sock"))
    problems = check(ws, case, home, run.reported)
    return Outcome(case, delay, killed, ran, run.reported, problems, output)
