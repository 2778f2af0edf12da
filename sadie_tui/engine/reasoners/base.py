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


async def paced(pieces: AsyncIterator[Piece], every: float) -> AsyncIterator[Piece | None]:
    """The pieces, with ``None`` each ``every`` seconds that passes without one (so a caller
    can say how long the model has been reading). Never cancels the pending read."""
    import asyncio

    iterator = pieces.__aiter__()
    try:
        while True:
            task = asyncio.ensure_future(iterator.__anext__())
            try:
                while True:
                    done, _ = await asyncio.wait({task}, timeout=every)
                    if done:
                        break
                    yield None
            except BaseException:
                task.cancel()
                raise
            try:
                yield task.result()
            except StopAsyncIteration:
                return
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()
