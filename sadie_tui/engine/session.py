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
from dataclasses import dataclass, replace
from datetime import date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from . import chips as chips_engine
from . import conversations as conv

if TYPE_CHECKING:
    from ..config import Settings
    from .chips import Candidate, Chip, NewChip
    from .conversations import Conversation, Message
    from .events import Event
    from .ingest.csvmap import CsvMap
    from .ingest.pipeline import IngestReport
    from .memory import Memory
    from .personas import Personas
    from .reasoners.base import Reasoner
    from .reasoners.choose import ServerSource
    from .reasoners.ollama import ModelInfo
    from .reflect.beliefs import Belief, BeliefDetail
    from .reflect.report import ReflectReport
    from .reflect.soul import SoulSuggestion
    from .retrieval.report import Search
    from .stats import Stats
    from .store.db import Database
    from .turns.ask import AskResult
    from .turns.context import ModelStatus

Progress = Callable[[str, int, int], None]  # (stage, done, total)
Stop = Callable[[], bool]  # asked between batches: True ends a reflection early


@dataclass(frozen=True)
class Episode:
    """One episode as a screen shows it."""

    id: str
    title: str
    date: str  # YYYY-MM-DD
    kind: str
    text: str


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
    def chat(
        self,
        message: str,
        *,
        conversation_id: str | None = None,
        persona: str | None = None,
        new: bool = False,
        regenerate: bool = False,
        model: str | None = None,
        chips: Sequence[NewChip] = (),
    ) -> AsyncGenerator[Event, None]: ...
    async def ask(self, question: str, *, persona: str | None = None) -> AskResult: ...
    def search(self, query: str, *, persona: str | None = None, k: int | None = None) -> Search: ...

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

    # -- conversations -----------------------------------------------------------------------
    def conversations(
        self, *, archived: bool = False, search: str | None = None, limit: int | None = None
    ) -> list[Conversation]: ...
    def conversation(self, conversation_id: str) -> Conversation: ...
    def messages(self, conversation_id: str) -> list[Message]: ...
    def pin(self, conversation_id: str, pinned: bool = True) -> None: ...
    def archive(self, conversation_id: str, archived: bool = True) -> None: ...
    def rename(self, conversation_id: str, title: str) -> None: ...
    def forget(self, conversation_id: str) -> None: ...
    def export(self, conversation_id: str, fmt: str) -> str: ...
    def import_conversation(self, text: str) -> Conversation: ...

    # -- chips -------------------------------------------------------------------------------
    def chips(self, conversation_id: str) -> list[Chip]: ...
    def add_chip(
        self, conversation_id: str, kind: str, ref: str, *, label: str | None = None
    ) -> Chip: ...
    def remove_chip(self, conversation_id: str, chip_id: str) -> Chip: ...
    def find_attachable(
        self, query: str, *, kind: str | None = None, limit: int = 20
    ) -> list[Candidate]: ...

    # -- the memory --------------------------------------------------------------------------
    def episode(self, episode_id: str) -> Episode | None: ...
    def soul(self) -> str: ...
    def stats(self) -> Stats: ...
    def compact(self) -> tuple[int, int]: ...
    def personas(self) -> Personas: ...
    def ingest(
        self,
        paths: Sequence[Path],
        progress: Progress | None = None,
        csv_map: CsvMap | None = None,
    ) -> IngestReport: ...
    def remove_notes(self, paths: Sequence[Path]) -> int: ...
    def close(self) -> None: ...

    # -- the learning loop -------------------------------------------------------------------
    def reflect(
        self,
        *,
        everything: bool = False,
        since: date | None = None,
        budget_minutes: float | None = None,
        progress: Progress | None = None,
        stop: Stop | None = None,
    ) -> ReflectReport: ...
    def beliefs(self, *, status: str | None = None, origin: str | None = None) -> list[Belief]: ...
    def belief(self, belief_id: str) -> BeliefDetail: ...
    def accept_belief(self, belief_id: str, *, reason: str | None = None) -> BeliefDetail: ...
    def reject_belief(self, belief_id: str, *, reason: str | None = None) -> BeliefDetail: ...
    def edit_belief(self, belief_id: str, statement: str) -> BeliefDetail: ...
    def suggest_soul(self) -> SoulSuggestion: ...
    def save_soul(self, text: str) -> None: ...


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
        from .retrieval.keyword import keep_current
        from .turns.context import TurnContext

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
    def chat(
        self,
        message: str,
        *,
        conversation_id: str | None = None,
        persona: str | None = None,
        new: bool = False,
        regenerate: bool = False,
        model: str | None = None,
        chips: Sequence[NewChip] = (),
    ) -> AsyncGenerator[Event, None]:
        """One turn's events. ``regenerate``: answer the conversation's last message again
        (``message`` empty) or an edit of it (``message``), the old exchange kept as
        superseded; ``model``: this turn's model instead of the configured one; ``chips``:
        attached to the conversation before the turn reads its chips, to the one the turn
        creates when there is none yet (a chip that cannot be attached fails the turn, and
        takes back the conversation it created)."""
        from .turns.chat import ChatRequest, chat_turn  # lazy: see __init__

        request = ChatRequest(
            message, conversation_id, persona, new, regenerate, model, tuple(chips)
        )
        return chat_turn(self.context, request)

    async def ask(self, question: str, *, persona: str | None = None) -> AskResult:
        from .turns.ask import ask_turn  # lazy: see __init__

        return await ask_turn(self.context, question, persona)

    def search(self, query: str, *, persona: str | None = None, k: int | None = None) -> Search:
        """The chunks retrieval picks, with every channel's score; logged as a turn (on a
        read-only memory, or when the write fails, a notice says it could not be)."""
        from .errors import StorageError  # lazy: see __init__
        from .retrieval import retrieve  # lazy: see __init__
        from .retrieval.report import search_report
        from .telemetry import record_turn
        from .turns.steps import persona_for

        chosen = persona_for(persona, self.settings.ask_persona)
        result = retrieve(self.memory, query, chosen, k=k)
        turn_id, unwritten = None, "the memory is open read-only"
        if not self.db.read_only:
            try:
                turn_id = record_turn(
                    self.db,
                    kind="search",
                    query=query,
                    model=None,
                    persona=chosen.name,
                    prompt_version=None,
                    grounding=None,
                    abstained=None,
                    latency_ms=result.elapsed_ms,
                    chunks=result.chunks,
                )
            except StorageError as exc:  # the file refused the write: the search stands
                unwritten = exc.message
        report = search_report(result, chosen.name, turn_id)
        if turn_id is None:
            notice = f"this search could not be written to telemetry: {unwritten}"
            report = replace(report, notices=(*report.notices, notice))
        return report

    # -- the model and the embedder ----------------------------------------------------------
    async def check_model(self, *, fresh: bool = False, model: str | None = None) -> ModelStatus:
        from .turns.context import check_model  # lazy: see __init__

        return await check_model(self.context, fresh=fresh, model=model)

    async def models(self) -> list[ModelInfo]:
        from .turns.context import models  # lazy: see __init__

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

    # -- conversations -----------------------------------------------------------------------
    def conversations(
        self, *, archived: bool = False, search: str | None = None, limit: int | None = None
    ) -> list[Conversation]:
        return conv.list_conversations(self.db, archived=archived, search=search, limit=limit)

    def conversation(self, conversation_id: str) -> Conversation:
        return conv.get_conversation(self.db, conversation_id)

    def messages(self, conversation_id: str) -> list[Message]:
        return conv.messages(self.db, conversation_id)

    def pin(self, conversation_id: str, pinned: bool = True) -> None:
        conv.pin(self.db, conversation_id, pinned)

    def archive(self, conversation_id: str, archived: bool = True) -> None:
        conv.archive(self.db, conversation_id, archived)

    def rename(self, conversation_id: str, title: str) -> None:
        conv.rename(self.db, conversation_id, title)

    def forget(self, conversation_id: str) -> None:
        conv.forget(self.db, conversation_id)

    def export(self, conversation_id: str, fmt: str) -> str:
        return conv.export(self.db, conversation_id, fmt)

    def import_conversation(self, text: str) -> Conversation:
        return conv.import_json(self.db, text)

    # -- chips -------------------------------------------------------------------------------
    def chips(self, conversation_id: str) -> list[Chip]:
        return chips_engine.list_chips(self.db, conversation_id)

    def add_chip(
        self, conversation_id: str, kind: str, ref: str, *, label: str | None = None
    ) -> Chip:
        return chips_engine.add_chip(self.db, conversation_id, kind, ref, label=label)

    def remove_chip(self, conversation_id: str, chip_id: str) -> Chip:
        return chips_engine.remove_chip(self.db, conversation_id, chip_id)

    def find_attachable(
        self, query: str, *, kind: str | None = None, limit: int = 20
    ) -> list[Candidate]:
        return chips_engine.find_attachable(self.db, query, kind=kind, limit=limit)

    # -- the memory --------------------------------------------------------------------------
    def episode(self, episode_id: str) -> Episode | None:
        # lazy: store.episodes loads only when episode runs, off the start-up path
        from .store.episodes import get_episode

        record = get_episode(self.db, episode_id)
        if record is None:
            return None
        return Episode(record.id, record.title, record.date, record.kind, record.text)

    def soul(self) -> str:
        return self.memory.soul()

    def stats(self) -> Stats:
        return self.memory.stats()

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

    def ingest(
        self,
        paths: Sequence[Path],
        progress: Progress | None = None,
        csv_map: CsvMap | None = None,
    ) -> IngestReport:
        return self.memory.ingest(paths, progress, csv_map)

    def remove_notes(self, paths: Sequence[Path]) -> int:
        """Take deleted files (or folders) out of the memory; how many episodes left. A
        citation to one of them still opens, as a note that was removed."""
        return self.memory.remove_notes(paths)

    def close(self) -> None:
        self.memory.close()

    # -- the learning loop -------------------------------------------------------------------
    def reflect(
        self,
        *,
        everything: bool = False,
        since: date | None = None,
        budget_minutes: float | None = None,
        progress: Progress | None = None,
        stop: Stop | None = None,
    ) -> ReflectReport:
        """Reflect on the episodes waiting (``everything``: on all of them; ``since``: on all
        dated that day or later) with the configured model, in batches committed one by one
        (blocking, and it runs its own event loop: call it from a worker thread). ``stop`` is
        asked between batches; ``budget_minutes`` bounds the run the same way."""
        # lazy: reflect.run loads only when reflect runs, off the start-up path
        from .reflect.run import reflect_memory

        return asyncio.run(
            reflect_memory(
                self.context,
                everything=everything,
                since=datetime.combine(since, time()) if since is not None else None,
                budget_seconds=budget_minutes * 60 if budget_minutes is not None else None,
                progress=progress,
                stop=stop,
            )
        )

    def beliefs(self, *, status: str | None = None, origin: str | None = None) -> list[Belief]:
        """Every belief (stated by the person, or derived), or those of one status / origin."""
        # lazy: reflect.views loads only when beliefs runs, off the start-up path
        from .reflect.views import list_beliefs

        return list_beliefs(self.db, status=status, origin=origin)

    def belief(self, belief_id: str) -> BeliefDetail:
        """One belief (its id or a unique prefix) with its evidence, links and history."""
        # lazy: reflect.views loads only when belief runs, off the start-up path
        from .reflect.views import detail

        return detail(self.db, belief_id)

    def accept_belief(self, belief_id: str, *, reason: str | None = None) -> BeliefDetail:
        """Keep a derived belief: sadie never retires or contests it afterwards."""
        # lazy: reflect.decisions loads only when accept_belief runs, off the start-up path
        from .reflect.decisions import accept

        return accept(self.db, belief_id, reason)

    def reject_belief(self, belief_id: str, *, reason: str | None = None) -> BeliefDetail:
        """Reject a derived belief: it is never proposed again."""
        # lazy: reflect.decisions loads only when reject_belief runs, off the start-up path
        from .reflect.decisions import reject

        return reject(self.db, belief_id, reason)

    def edit_belief(self, belief_id: str, statement: str) -> BeliefDetail:
        """Reword a derived belief: its evidence stays, and it counts as accepted."""
        # lazy: reflect.decisions loads only when edit_belief runs, off the start-up path
        from .reflect.decisions import edit

        embedder = self.memory.embedder
        return edit(self.db, belief_id, statement, lambda texts: embedder.encode(list(texts)))

    def suggest_soul(self) -> SoulSuggestion:
        """A drafted update of the soul summary (nothing is written; blocking, with its own
        event loop)."""

        # lazy: reflect.soul loads only when suggest_soul runs, off the start-up path
        from .reflect.soul import suggest

        return asyncio.run(suggest(self.context))

    def save_soul(self, text: str) -> None:
        """Write the soul summary (``soul.md`` in the home): the person accepted a draft."""
        # lazy: reflect.soul loads only when save_soul runs, off the start-up path
        from .reflect.soul import save

        save(self.home, text)
