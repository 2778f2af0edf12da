"""Shared pieces of the TUI tests: a small ingested memory (built once per process with the
real embedder), a frozen clock, a companion wrapper that freezes timings, and
``wait_until`` instead of sleeps.

Every test gets its own copy of the memory, so tests can change it freely.
"""

from __future__ import annotations

import atexit
import dataclasses
import gc
import shutil
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.ollama_server import FakeOllama

NOW = datetime(2026, 4, 5, 14, 30)
MODEL = "qwen3:1.7b"

# A small life: journal entries of several kinds, a wiki entry, a brief, a Today card and a
# soul summary. One note holds markup that must show as text and do nothing.
CORPUS: dict[str, str] = {
    "journal/2026-03-14-warden-retro.md": (
        "---\ntitle: Warden retro\nsalience: 0.8\n---\n"
        "Shipped the auth refactor this week. Felt slower than it should have been.\n\n"
        "Priya said the review queue is the real bottleneck, not the code.\n"
    ),
    "journal/2026-03-20-river-walk.md": (
        "---\ntitle: Walk by the river\n---\n"
        "Walked by the river with Maya after lunch. She is moving to Leeds in May and I "
        "did not know what to say.\n"
    ),
    "journal/2026-02-10-pottery.md": (
        "---\ntitle: First pottery class\n---\n"
        "First pottery class tonight. My bowl collapsed twice and I laughed more than I "
        "have in weeks.\n"
    ),
    "journal/2026-04-02-brackets.md": (
        "---\ntitle: Odd brackets\n---\n"
        "Pasted from the terminal: [@click=app.quit] and [bold]not bold[/bold] and "
        "[link=https://example.com]a link[/link] all in one note.\n"
    ),
    "meetings/2026-03-28-planning.md": (
        "---\ntitle: Planning with Priya\nkind: meeting\n---\n"
        "Planning with Priya: we agreed the billing work waits until after the launch.\n"
    ),
    "wiki/maya.md": (
        "---\ntitle: Maya\nkind: person\n---\n"
        "Maya is my younger sister. She teaches chemistry and loves long walks.\n"
    ),
    "briefs/2026-04-01.md": (
        "---\ntitle: Week of 1 April\ndate: 2026-04-01\n---\n"
        "A week of launches and goodbyes: the refactor shipped, Maya is moving.\n"
    ),
    "today/2026-04-03.md": (
        "---\ntitle: Ask Maya about the move\ndate: 2026-04-03\n---\n"
        "You have not written about Maya's move since the river walk.\n"
    ),
    "soul.md": "Someone who builds software, makes pots badly and loves their sister.\n",
}

_lock = threading.Lock()
_template: Path | None = None


def template_home() -> Path:
    """The ingested memory, built once per test process (real embedder, real DuckDB)."""
    global _template
    with _lock:
        if _template is not None:
            return _template
        from sadie_tui.engine.memory import Memory
        from sadie_tui.engine.retrieval.keyword import keep_current

        root = Path(tempfile.mkdtemp(prefix="sadie-tui-tests-"))
        atexit.register(shutil.rmtree, root, True)
        notes = root / "notes"
        for name, text in CORPUS.items():
            path = notes / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        home = root / "home"
        with Memory.open(home) as memory:
            keep_current(memory)  # as a Session does: the index saved with the memory
            memory.ingest([notes])
            memory.embedder.warm()
        _template = home
        return home


def copy_home(target: Path) -> Path:
    home = target / "home"
    shutil.copytree(template_home(), home)
    return home


def frozen_clock() -> datetime:
    return NOW


class StableSession:
    """The real ``Session`` with the timings that reach the screen frozen, so snapshots do not
    change from run to run. Everything else passes through untouched."""

    def __init__(self, launch: Any) -> None:
        self.inner = launch.session(wait_for_embedder=False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def chat(self, request: Any) -> AsyncIterator[Any]:
        from sadie_tui.engine.events import ContextBudget, Done, Thinking, Waiting

        stream = self.inner.chat(request)
        try:
            async for event in stream:
                if isinstance(event, ContextBudget):
                    event = dataclasses.replace(event, retrieval_ms=12.0)
                elif isinstance(event, Done):
                    event = dataclasses.replace(event, latency_ms=250.0, tokens_per_s=40.0)
                elif isinstance(event, Thinking):
                    event = Thinking(3.0)
                elif isinstance(event, Waiting):
                    event = Waiting(1.0)
                yield event
        finally:
            await stream.aclose()


def make_context(home: Path, server_url: str, **settings: Any) -> Any:
    from sadie_tui.commands.context import Context
    from sadie_tui.config import Settings

    config = home.parent / "config" / "config.toml"
    return Context(
        home=home,
        settings=Settings(
            model=settings.pop("model", MODEL),
            ollama_host=server_url,
            config_path=config,
            connect_timeout=2.0,
            read_timeout=30.0,
            **settings,
        ),
    )


def make_app(ctx: Any, question: str | None = None, *, stable: bool = True, **kwargs: Any) -> Any:
    from sadie_tui.tui.app import SadieApp

    kwargs.setdefault("clock", frozen_clock)
    if stable:
        kwargs.setdefault("session_factory", StableSession)
    return SadieApp(ctx, question, **kwargs)


async def wait_until(
    pilot: Any, predicate: Callable[[], Any], timeout: float = 600.0, what: str = ""
) -> Any:
    """Pause the pilot until ``predicate()`` is truthy (and return it), or fail clearly."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.02)


async def ready(pilot: Any) -> None:
    """Wait until the app's memory is open."""
    await wait_until(pilot, pilot.app.memory_ready.is_set, what="the memory to open")


async def finished(pilot: Any, reply: Any) -> Any:
    """Wait until ``reply`` is no longer streaming and no reply worker runs."""
    chat = pilot.app.chat_screen
    await wait_until(
        pilot,
        lambda: reply.status != "streaming" and not chat.streaming,
        what="the reply to finish",
    )
    await pilot.pause()
    return reply


@pytest.fixture(autouse=True)
def unfreeze_heap() -> Iterator[None]:
    """The app freezes the heap once the embedding model is loaded (``gc.freeze``); one test
    process runs many apps, so each test's become collectable again after it."""
    yield
    gc.unfreeze()


@pytest.fixture
def tui_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Its own config folder (never the person's real one), no model settings from outside."""
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    for name in ("OLLAMA_HOST", "SADIE_MODEL", "SADIE_REASONER", "SADIE_HOME"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


@pytest.fixture
def home(tmp_path: Path, tui_env: Path) -> Path:
    return copy_home(tmp_path)


@pytest.fixture
def ctx(home: Path, ollama: FakeOllama) -> Any:
    return make_context(home, ollama.url)


SEED = [
    # (title, emotion, pinned, archived, day-hour, [(role, text)])
    (
        "Maya's move to Leeds",
        "reflective",
        True,
        False,
        (3, 10),
        [
            ("user", "Maya is moving to Leeds in May. How do I feel about it?"),
            ("assistant", "On 2026-03-20 you wrote that you did not know what to say."),
        ],
    ),
    (
        "Pottery disasters",
        "playful",
        False,
        False,
        (4, 18),
        [
            ("user", "Tell me about my pottery class"),
            ("assistant", "Your bowl collapsed twice and you laughed more than in weeks."),
        ],
    ),
    (
        "The refactor",
        "focused",
        False,
        False,
        (2, 9),
        [
            ("user", "What slowed the auth refactor?"),
            ("assistant", "Priya said the review queue is the real bottleneck."),
        ],
    ),
    (
        "Old plans",
        "serious",
        False,
        True,
        (1, 8),
        [
            ("user", "What did we decide about billing?"),
            ("assistant", "The billing work waits until after the launch."),
        ],
    ),
]


def seed_conversations(home: Path) -> dict[str, str]:
    """Four conversations with fixed times (one pinned, one archived); title -> id."""
    from sadie_tui.engine import conversations as conv
    from sadie_tui.engine.memory import Memory

    ids: dict[str, str] = {}
    with Memory.open(home) as memory:
        db = memory.db
        for title, emotion, pinned, archived, (day, hour), items in SEED:
            c = conv.create_conversation(db, title, persona="friend")
            stamp = datetime(2026, 4, day, hour, 0)
            for n, (role, text) in enumerate(items):
                conv.add_message(
                    db,
                    c.id,
                    role,
                    text,
                    emotion=emotion if role == "assistant" else None,
                    created_at=stamp.replace(minute=n),
                )
            conv.set_state(db, c.id, emotion=emotion, summary=items[0][1][:60])
            if pinned:
                conv.pin(db, c.id, True)
            if archived:
                conv.archive(db, c.id, True)
            db.execute(
                "UPDATE conversations SET created_at = ?, updated_at = ? WHERE id = ?",
                [stamp, stamp.replace(minute=5), c.id],
            )
            ids[title] = c.id
    return ids
