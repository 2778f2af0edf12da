"""A small typed stand-in for the engine's Session: scripted events and a few records, no
DuckDB and no embedding model. Widget tests use it to boot the app in milliseconds.

Its members are ``Session``'s, with the same signatures (``tests/test_session_door.py``
checks), so a face written against the fake runs against the real door; the table's
operations (``engine.operations``) come through one ``call``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from sadie_tui.config import Settings
from sadie_tui.engine.context import ModelStatus
from sadie_tui.engine.door import Op
from sadie_tui.engine.episodes import Episode
from sadie_tui.engine.errors import NotFoundError, UsageError
from sadie_tui.engine.events import Event
from sadie_tui.engine.operations import (
    AcceptBelief,
    Archive,
    EditBelief,
    FindAttachable,
    GetEpisode,
    GetSoul,
    GetStats,
    ListBeliefs,
    ListChips,
    ListConversations,
    Pin,
    RejectBelief,
    Rename,
    ShowBelief,
    ShowConversation,
    Soul,
    Unarchive,
    Unpin,
)
from sadie_tui.engine.personas import Personas, load_personas
from sadie_tui.engine.requests import ChatTurn, IngestJob, ReflectJob
from sadie_tui.engine.stats import Stats

if TYPE_CHECKING:
    from sadie_tui.engine.ingest.pipeline import IngestReport
    from sadie_tui.engine.reasoners.choose import ServerSource
    from sadie_tui.engine.reasoners.ollama import ModelInfo
    from sadie_tui.engine.reflect.beliefs import BeliefDetail
    from sadie_tui.engine.reflect.report import ReflectReport
    from sadie_tui.engine.turns.ask import AskResult

A = TypeVar("A")


@dataclass
class FakeSession:
    home: Path
    settings: Settings = field(default_factory=Settings)
    # One list per chat: its events, and any asyncio.Event in it a gate the turn waits at.
    replies: list[list[Event | asyncio.Event]] = field(default_factory=list)
    episodes: dict[str, Episode] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)
    waiting: asyncio.Event | None = None  # the gate the current turn waits at, if any
    learned: dict[str, BeliefDetail] = field(default_factory=dict)  # belief id -> detail
    decided: list[tuple[str, str]] = field(default_factory=list)  # (action, belief id)

    def chat(self, request: ChatTurn) -> AsyncGenerator[Event, None]:
        return self._reply(request.message)

    async def _reply(self, message: str) -> AsyncGenerator[Event, None]:
        self.asked.append(message)
        for event in self.replies.pop(0) if self.replies else []:
            if isinstance(event, asyncio.Event):
                self.waiting = event
                await event.wait()
                self.waiting = None
                continue
            yield event

    async def ask(self, question: str, *, persona: str | None = None) -> AskResult:
        raise NotImplementedError

    async def check_model(self, *, fresh: bool = False, model: str | None = None) -> ModelStatus:
        return ModelStatus(True, model or "fake:1b", "http://fake", "")

    async def models(self) -> list[ModelInfo]:
        from sadie_tui.engine.reasoners.ollama import ModelInfo

        return [ModelInfo("fake:1b", 1_000_000_000, "fake", "1B", "Q4_K_M")]

    def model_server(self) -> ServerSource:
        from sadie_tui.engine.reasoners.choose import ServerSource

        return ServerSource("ollama", "http://fake", "ollama_host", "OLLAMA_HOST", "default")

    def use_model_server(self, address: str) -> ServerSource:
        raise NotImplementedError

    def warm(self) -> None:
        pass

    @property
    def embedder_ready(self) -> bool:
        return True

    @property
    def embedder_notice(self) -> str | None:
        return None

    def compact(self) -> tuple[int, int]:
        return (0, 0)

    def personas(self) -> Personas:
        return load_personas(self.home / "no-personas-of-its-own")  # the shipped four

    def ingest(self, paths: Sequence[Path], job: IngestJob | None = None) -> IngestReport:
        raise NotImplementedError

    def remove_notes(self, paths: Sequence[Path]) -> int:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def reflect(self, job: ReflectJob | None = None) -> ReflectReport:
        raise NotImplementedError

    def call(self, op: Op[A]) -> A:
        """The operations a widget test meets, answered from the fake's records; the rest as
        an empty memory would (no conversations, no chips) or not at all."""
        answer: object
        match op:
            case ListConversations() | ListChips() | FindAttachable():
                answer = []
            case ShowConversation() | Pin() | Unpin() | Archive() | Unarchive() | Rename():
                raise NotFoundError(f"no conversation {op.conversation_id}")
            case GetEpisode(episode_id=episode_id):
                if episode_id not in self.episodes:
                    raise NotFoundError(f"no episode {episode_id!r} in this memory")
                answer = self.episodes[episode_id]
            case GetSoul():
                answer = Soul("")
            case GetStats():
                answer = Stats(str(self.home), "", 0, {}, {}, None, None, {}, [], {}, False)
            case ListBeliefs(status=status, origin=origin):
                answer = [
                    d.belief
                    for d in self.learned.values()
                    if status in (None, d.belief.status) and origin in (None, d.belief.origin)
                ]
            case ShowBelief(belief_id=belief_id):
                answer = self._belief(belief_id)
            case AcceptBelief(belief_id=belief_id):
                answer = self._decide(belief_id, "accept", status="accepted")
            case RejectBelief(belief_id=belief_id):
                answer = self._decide(belief_id, "reject", status="rejected")
            case EditBelief(belief_id=belief_id, statement=statement):
                answer = self._decide(belief_id, "edit", status="accepted", statement=statement)
            case _:
                raise NotImplementedError(type(op).__name__)
        return cast(A, answer)

    def _belief(self, belief_id: str) -> BeliefDetail:
        found = [d for key, d in self.learned.items() if key.startswith(belief_id)]
        if len(found) != 1:
            raise NotFoundError(f"no belief {belief_id!r}")
        return found[0]

    def _decide(self, belief_id: str, action: str, **changes: str) -> BeliefDetail:
        detail = self._belief(belief_id)
        if detail.belief.origin == "stated":
            raise UsageError("you stated this belief: change it in beliefs.jsonl")
        self.decided.append((action, detail.belief.id))
        decided = replace(detail, belief=replace(detail.belief, **changes))
        self.learned[detail.belief.id] = decided
        return decided


def now() -> datetime:
    return datetime(2026, 4, 5, 14, 30)
