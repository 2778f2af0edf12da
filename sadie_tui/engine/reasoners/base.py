"""The reasoner contract: one streaming method yielding content and thinking pieces."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from ..prompt import Briefing


@dataclass(frozen=True)
class Piece:
    kind: Literal["content", "thinking"]
    text: str


@dataclass(frozen=True)
class Usage:
    tokens: int = 0
    seconds: float = 0.0


class Reasoner(Protocol):
    model: str
    offline: bool

    def stream(self, briefing: Briefing, query: str) -> AsyncIterator[Piece]: ...
