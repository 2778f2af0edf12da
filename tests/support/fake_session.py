"""A small typed stand-in for the engine's Session: scripted events and a few records, no
DuckDB and no embedding model. Widget tests use it to boot the app in milliseconds."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sadie_tui.config import Settings
from sadie_tui.engine.errors import NotFoundError
from sadie_tui.engine.events import Event
from sadie_tui.engine.session import Episode, Search
from sadie_tui.engine.turns.context import ModelStatus


@dataclass
class FakeSession:
    home: Path
    settings: Settings = field(default_factory=Settings)
    # One list per chat: its events, and any asyncio.Event in it a gate the turn waits at.
    replies: list[list[Event | asyncio.Event]] = field(default_factory=list)
    episodes: dict[str, Episode] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)
    waiting: asyncio.Event | None = None  # the gate the current turn waits at, if any

    async def chat(self, message: str, **_: Any) -> AsyncIterator[Event]:
        self.asked.append(message)
        for event in self.replies.pop(0) if self.replies else []:
            if isinstance(event, asyncio.Event):
                self.waiting = event
                await event.wait()
                self.waiting = None
                continue
            yield event

    async def ask(self, question: str, *, persona: str | None = None) -> Any:
        raise NotImplementedError

    def search(self, query: str, *, persona: str | None = None, k: int | None = None) -> Search:
        raise NotImplementedError

    async def check_model(self, *, fresh: bool = False, model: str | None = None) -> ModelStatus:
        return ModelStatus(True, model or "fake:1b", "http://fake", "")

    async def models(self) -> list[Any]:
        from sadie_tui.engine.reasoners.ollama import ModelInfo

        return [ModelInfo("fake:1b", 1_000_000_000, "fake", "1B", "Q4_K_M")]

    def warm(self) -> None:
        pass

    @property
    def embedder_ready(self) -> bool:
        return True

    @property
    def embedder_notice(self) -> str | None:
        return None

    def conversations(self, **_: Any) -> list[Any]:
        return []

    def conversation(self, conversation_id: str) -> Any:
        raise NotFoundError(f"no conversation {conversation_id}")

    def messages(self, conversation_id: str) -> list[Any]:
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

    def import_conversation(self, text: str) -> Any:
        raise NotImplementedError

    def chips(self, conversation_id: str) -> list[Any]:
        return []

    def add_chip(self, conversation_id: str, kind: str, ref: str, **_: Any) -> Any:
        raise NotImplementedError

    def remove_chip(self, conversation_id: str, chip_id: str) -> Any:
        raise NotImplementedError

    def find_attachable(self, query: str, **_: Any) -> list[Any]:
        return []

    def episode(self, episode_id: str) -> Episode | None:
        return self.episodes.get(episode_id)

    def soul(self) -> str:
        return ""

    def stats(self) -> dict[str, Any]:
        return {}

    def compact(self) -> tuple[int, int]:
        return (0, 0)

    def personas(self) -> list[Any]:
        return []

    def ingest(self, paths: Sequence[Path], progress: Any = None) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def reflect(self, **_: Any) -> Any:
        raise NotImplementedError

    def beliefs(self, **_: Any) -> list[Any]:
        return []

    def belief(self, belief_id: str) -> Any:
        raise NotFoundError(f"no belief {belief_id}")

    def accept_belief(self, belief_id: str, **_: Any) -> Any:
        raise NotFoundError(f"no belief {belief_id}")

    def reject_belief(self, belief_id: str, **_: Any) -> Any:
        raise NotFoundError(f"no belief {belief_id}")

    def edit_belief(self, belief_id: str, statement: str) -> Any:
        raise NotFoundError(f"no belief {belief_id}")

    def suggest_soul(self) -> Any:
        raise NotImplementedError

    def save_soul(self, text: str) -> None:
        pass


def now() -> datetime:
    return datetime(2026, 4, 5, 14, 30)
