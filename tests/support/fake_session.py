"""A small typed stand-in for the engine's Session: scripted events and a few records, no
DuckDB and no embedding model. Widget tests use it to boot the app in milliseconds.

Its members are ``Session``'s, with the same signatures (``tests/test_session_door.py``
checks), so a face written against the fake runs against the real door."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sadie_tui.config import Settings
from sadie_tui.engine.context import ModelStatus
from sadie_tui.engine.errors import NotFoundError, UsageError
from sadie_tui.engine.events import Event
from sadie_tui.engine.personas import Personas, load_personas
from sadie_tui.engine.session import Episode
from sadie_tui.engine.stats import Stats

if TYPE_CHECKING:
    from sadie_tui.engine.chips import Candidate, Chip, NewChip
    from sadie_tui.engine.conversations import Conversation, Message
    from sadie_tui.engine.ingest.csvmap import CsvMap
    from sadie_tui.engine.ingest.pipeline import IngestReport
    from sadie_tui.engine.reasoners.choose import ServerSource
    from sadie_tui.engine.reasoners.ollama import ModelInfo
    from sadie_tui.engine.reflect.beliefs import Belief, BeliefDetail
    from sadie_tui.engine.reflect.report import ReflectReport
    from sadie_tui.engine.reflect.soul import SoulSuggestion
    from sadie_tui.engine.retrieval.report import Search
    from sadie_tui.engine.session import Progress, Stop
    from sadie_tui.engine.turns.ask import AskResult


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
        return self._reply(message)

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

    def search(self, query: str, *, persona: str | None = None, k: int | None = None) -> Search:
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

    def conversations(
        self, *, archived: bool = False, search: str | None = None, limit: int | None = None
    ) -> list[Conversation]:
        return []

    def conversation(self, conversation_id: str) -> Conversation:
        raise NotFoundError(f"no conversation {conversation_id}")

    def messages(self, conversation_id: str) -> list[Message]:
        return []

    def pin(self, conversation_id: str, pinned: bool = True) -> None:
        pass

    def archive(self, conversation_id: str, archived: bool = True) -> None:
        pass

    def rename(self, conversation_id: str, title: str) -> None:
        pass

    def forget(self, conversation_id: str) -> None:
        pass

    def export(self, conversation_id: str, fmt: str) -> str:
        return ""

    def import_conversation(self, text: str) -> Conversation:
        raise NotImplementedError

    def chips(self, conversation_id: str) -> list[Chip]:
        return []

    def add_chip(
        self, conversation_id: str, kind: str, ref: str, *, label: str | None = None
    ) -> Chip:
        raise NotImplementedError

    def remove_chip(self, conversation_id: str, chip_id: str) -> Chip:
        raise NotImplementedError

    def find_attachable(
        self, query: str, *, kind: str | None = None, limit: int = 20
    ) -> list[Candidate]:
        return []

    def episode(self, episode_id: str) -> Episode | None:
        return self.episodes.get(episode_id)

    def soul(self) -> str:
        return ""

    def stats(self) -> Stats:
        return Stats(str(self.home), "", 0, {}, {}, None, None, {}, [], {}, False)

    def compact(self) -> tuple[int, int]:
        return (0, 0)

    def personas(self) -> Personas:
        return load_personas(self.home / "no-personas-of-its-own")  # the shipped four

    def ingest(
        self,
        paths: Sequence[Path],
        progress: Progress | None = None,
        csv_map: CsvMap | None = None,
    ) -> IngestReport:
        raise NotImplementedError

    def remove_notes(self, paths: Sequence[Path]) -> int:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def reflect(
        self,
        *,
        everything: bool = False,
        since: date | None = None,
        budget_minutes: float | None = None,
        progress: Progress | None = None,
        stop: Stop | None = None,
    ) -> ReflectReport:
        raise NotImplementedError

    def beliefs(self, *, status: str | None = None, origin: str | None = None) -> list[Belief]:
        return [
            d.belief
            for d in self.learned.values()
            if status in (None, d.belief.status) and origin in (None, d.belief.origin)
        ]

    def belief(self, belief_id: str) -> BeliefDetail:
        found = [d for key, d in self.learned.items() if key.startswith(belief_id)]
        if len(found) != 1:
            raise NotFoundError(f"no belief {belief_id!r}")
        return found[0]

    def _decide(self, belief_id: str, action: str, **changes: str) -> BeliefDetail:
        detail = self.belief(belief_id)
        if detail.belief.origin == "stated":
            raise UsageError("you stated this belief: change it in beliefs.jsonl")
        self.decided.append((action, detail.belief.id))
        decided = replace(detail, belief=replace(detail.belief, **changes))
        self.learned[detail.belief.id] = decided
        return decided

    def accept_belief(self, belief_id: str, *, reason: str | None = None) -> BeliefDetail:
        return self._decide(belief_id, "accept", status="accepted")

    def reject_belief(self, belief_id: str, *, reason: str | None = None) -> BeliefDetail:
        return self._decide(belief_id, "reject", status="rejected")

    def edit_belief(self, belief_id: str, statement: str) -> BeliefDetail:
        return self._decide(belief_id, "edit", status="accepted", statement=statement)

    def suggest_soul(self) -> SoulSuggestion:
        raise NotImplementedError

    def save_soul(self, text: str) -> None:
        pass


def now() -> datetime:
    return datetime(2026, 4, 5, 14, 30)
