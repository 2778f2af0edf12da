"""The Session: the one door the faces (CLI, TUI, HTTP server) use into an open memory.

A face never runs SQL, never touches ``memory.db`` and never imports the store: it asks the
session. ``SessionProtocol`` is the session's public surface, so another implementation can
stand in for it (a client of the process that holds the memory, or a small typed fake in
widget tests).

Every method is synchronous and may block (DuckDB, the embedding model) except ``chat``,
``ask`` and ``check_model``, which are async; a face calls the blocking ones from a worker
thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Callable, Sequence
from datetime import datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from ..config import Settings
    from .context import ModelStatus
    from .door import Op
    from .events import Event
    from .ingest.pipeline import IngestReport
    from .memory import Memory
    from .personas import Personas
    from .reasoners.base import Reasoner
    from .reasoners.choose import ServerSource
    from .reasoners.ollama import ModelInfo
    from .reflect.report import ReflectReport
    from .requests import ChatTurn, IngestJob, ReflectJob
    from .store.db import Database
    from .turns.ask import AskResult

A = TypeVar("A")
Progress = Callable[[str, int, int], None]  # (stage, done, total)
Stop = Callable[[], bool]  # asked between batches: True ends a reflection early


def prewarm_embedder() -> None:
    """Start loading the process's shared embedding model in a daemon thread, before a session
    exists: opening the memory (mostly imports) and loading the model take about as long each,
    and ONNX Runtime loads without holding the interpreter. A failure is left for the session's
    own ``warm()`` to report."""

    # lazy: ingest.embedder loads only when prewarm_embedder runs, off the start-up path
    from .ingest.embedder import shared_embedder

    embedder = shared_embedder()

    def load() -> None:
        try:
            embedder.warm()
        except Exception:  # noqa: BLE001 - warm() says it again, where it can be shown
            pass

    threading.Thread(target=load, name="sadie-prewarm", daemon=True).start()


@runtime_checkable
class SessionProtocol(Protocol):
    """What the faces may ask of a memory."""

    home: Path
    settings: Settings

    # -- answers ---------------------------------------------------------------------------
    def chat(self, request: ChatTurn) -> AsyncGenerator[Event, None]: ...
    async def ask(self, question: str, *, persona: str | None = None) -> AskResult: ...
    def call(self, op: Op[A]) -> A:
        """One operation of the door's table (``engine.operations``), answered (blocking)."""
        ...

    # -- the model and the embedder ----------------------------------------------------------
    async def check_model(
        self, *, fresh: bool = False, model: str | None = None
    ) -> ModelStatus: ...
    async def models(self) -> list[ModelInfo]: ...
    def model_server(self) -> ServerSource: ...
    def use_model_server(self, address: str) -> ServerSource: ...
    def warm(self) -> None: ...
    @property
    def embedder_ready(self) -> bool: ...
    @property
    def embedder_notice(self) -> str | None: ...

    # -- the memory --------------------------------------------------------------------------
    def compact(self) -> tuple[int, int]: ...
    def personas(self) -> Personas: ...
    def ingest(self, paths: Sequence[Path], job: IngestJob | None = None) -> IngestReport: ...
    def remove_notes(self, paths: Sequence[Path]) -> int: ...
    def close(self) -> None: ...

    # -- the learning loop -------------------------------------------------------------------
    def reflect(self, job: ReflectJob | None = None) -> ReflectReport: ...


class Session:
    """The in-process session over one open memory."""

    def __init__(
        self,
        memory: Memory,
        settings: Settings,
        *,
        wait_for_embedder: bool = True,
        reasoner: Reasoner | None = None,
    ) -> None:
        """``wait_for_embedder=False`` (the TUI): while the embedding model is still loading,
        a turn retrieves with the keyword and graph channels instead of waiting for it;
        ``reasoner``: one fixed reasoner for every turn (a test's, a bench's)."""
        # Lazy, like the turns below: they bring retrieval, numpy and the model clients, and
        # a client of another sadie (serve.remote) imports this module only for its types.
        from .context import TurnContext
        from .retrieval.keyword import keep_current

        keep_current(memory)  # the keyword index rebuilt after each ingest or removal
        self.memory = memory
        self.home = memory.home
        self.settings = settings
        self.context = TurnContext.of(
            memory, settings, reasoner=reasoner, wait_for_embedder=wait_for_embedder
        )

    @classmethod
    def open(
        cls,
        home: Path,
        settings: Settings,
        *,
        read_only: bool = False,
        wait_for_embedder: bool = True,
        reasoner: Reasoner | None = None,
    ) -> Session:
        """The session over the memory in ``home`` (the rest as ``__init__``'s)."""
        # lazy: memory loads only when open runs, off the start-up path
        from .memory import Memory

        return cls(
            Memory.open(home, read_only=read_only),
            settings,
            wait_for_embedder=wait_for_embedder,
            reasoner=reasoner,
        )

    @property
    def db(self) -> Database:
        return self.memory.db

    # -- answers ---------------------------------------------------------------------------
    def chat(self, request: ChatTurn) -> AsyncGenerator[Event, None]:
        """One turn's events (``ChatTurn`` says what each field asks)."""
        from .turns.chat import chat_turn  # lazy: see __init__

        return chat_turn(self.context, request)

    async def ask(self, question: str, *, persona: str | None = None) -> AskResult:
        from .turns.ask import ask_turn  # lazy: see __init__

        return await ask_turn(self.context, question, persona)

    def call(self, op: Op[A]) -> A:
        """One operation of the door's table (``engine.operations``), run here (blocking)."""
        return op.run(self)

    # -- the model and the embedder ----------------------------------------------------------
    async def check_model(self, *, fresh: bool = False, model: str | None = None) -> ModelStatus:
        from .context import check_model  # lazy: see __init__

        return await check_model(self.context, fresh=fresh, model=model)

    async def models(self) -> list[ModelInfo]:
        from .context import models  # lazy: see __init__

        return await models(self.context)

    def model_server(self) -> ServerSource:
        """The model server's address in use and where it came from (the environment,
        config.toml, the default, or set in the app), with any disagreement between them."""
        from .reasoners.choose import server_source  # lazy: see __init__

        return server_source(self.settings)

    def use_model_server(self, address: str) -> ServerSource:
        """Use the model server at ``address`` from the next check and turn on, whatever the
        environment says (a ``ConfigError`` for a malformed one). The caller saves it."""
        from .reasoners.choose import use_server  # lazy: see __init__

        source = use_server(self.settings, address)
        self.context.checks.forget()
        return source

    def warm(self) -> None:
        """Load the embedding model and the emotion prototypes (blocking; run it in a
        thread)."""
        self.memory.embedder.warm()
        self.context.emotions.warm()

    @property
    def embedder_ready(self) -> bool:
        return bool(self.memory.embedder.loaded)

    @property
    def embedder_notice(self) -> str | None:
        """Why embeddings run through sentence-transformers instead of ONNX, when they do."""
        return self.memory.embedder.notice

    # -- the memory --------------------------------------------------------------------------
    def compact(self) -> tuple[int, int]:
        return self.memory.compact()

    def personas(self) -> Personas:
        """The personas a face may offer (shipped, and the person's own from the config
        folder); ``problems``: the files that did not load, each with a one-line reason, for
        the face to show. Read afresh each time: the person may have just edited one."""
        # lazy: paths loads only when personas runs, off the start-up path
        from ..paths import config_dir
        from .personas import load_personas

        return load_personas(config_dir() / "personas")

    def ingest(self, paths: Sequence[Path], job: IngestJob | None = None) -> IngestReport:
        """Read ``paths`` (files or folders) into the memory (``IngestJob``: its progress and
        CSV mapping)."""
        from .requests import IngestJob  # lazy: as reflect's ReflectJob, made when none is given

        job = job or IngestJob()
        return self.memory.ingest(paths, job.progress, job.csv_map)

    def remove_notes(self, paths: Sequence[Path]) -> int:
        """Take deleted files (or folders) out of the memory; how many episodes left. A
        citation to one of them still opens, as a note that was removed."""
        return self.memory.remove_notes(paths)

    def close(self) -> None:
        self.memory.close()

    # -- the learning loop -------------------------------------------------------------------
    def reflect(self, job: ReflectJob | None = None) -> ReflectReport:
        """Reflect with the configured model (``ReflectJob`` says on what, and how it is
        bounded), in batches committed one by one (blocking, and it runs its own event loop:
        call it from a worker thread)."""
        # lazy: reflect.run loads only when reflect runs, off the start-up path
        from .reflect.run import reflect_memory
        from .requests import ReflectJob

        job = job or ReflectJob()
        return asyncio.run(
            reflect_memory(
                self.context,
                everything=job.everything,
                since=datetime.combine(job.since, time()) if job.since is not None else None,
                budget_seconds=job.budget_minutes * 60 if job.budget_minutes is not None else None,
                progress=job.progress,
                stop=job.stop,
            )
        )
