"""The reasoner contract: one streaming method yielding content and thinking pieces (and,
for a model server, one structured answer); ``paced`` ticks while the first piece is slow."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from ..prompt import Briefing


@dataclass(frozen=True)
class Piece:
    kind: Literal["content", "thinking"]
    text: str


class Reasoner(Protocol):
    """What a turn asks of a model: both reasoners (Ollama, offline) implement it, and so can
    a test's scripted one. ``messages`` replaces the briefing's own (a revision: the briefing
    byte for byte, then the draft and the note)."""

    model: str
    offline: bool

    def stream(
        self, briefing: Briefing, query: str = "", messages: list[dict[str, str]] | None = None
    ) -> AsyncIterator[Piece]: ...


class StructuredReasoner(Reasoner, Protocol):
    """A reasoner that can also answer once, constrained to a JSON schema (the citation
    pass); the offline one cannot."""

    async def structured(
        self,
        briefing: Briefing,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        *,
        timeout: float,
        max_tokens: int = 768,
    ) -> str: ...


async def paced(
    pieces: AsyncIterator[Piece], every: float
) -> AsyncGenerator[Piece | None, None]:
    """The pieces, with ``None`` each ``every`` seconds that passes without one (so a caller
    can say how long the model has been reading). Never cancels the pending read."""
    import asyncio
    import contextlib

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
                # Stopped (escape, a closed stream): end the pending read before closing.
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                raise
            try:
                yield task.result()
            except StopAsyncIteration:
                return
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()
