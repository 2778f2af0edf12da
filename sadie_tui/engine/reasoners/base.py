"""The reasoner contract: one streaming method yielding content and thinking pieces (and,
for a model server, one structured answer); ``paced`` ticks while the first piece is slow."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from ..errors import ModelTimeout

if TYPE_CHECKING:
    from ..jsonvalue import JSONObject
    from ..prompt import Briefing
    from .rates import Budget


@dataclass(frozen=True)
class Piece:
    kind: Literal["content", "thinking"]
    text: str


class Reasoner(Protocol):
    """What a turn asks of a model: both reasoners (Ollama, offline) implement it, and so can
    a test's scripted one. ``messages`` replaces the briefing's own (a revision: the briefing
    byte for byte, then the draft and the note); ``sent`` is called once the request is on
    its way (written to the server; the offline one calls it at once)."""

    model: str
    offline: bool

    def stream(
        self,
        briefing: Briefing,
        query: str = "",
        messages: list[dict[str, str]] | None = None,
        *,
        sent: Callable[[], None] | None = None,
    ) -> AsyncIterator[Piece]: ...


class StructuredReasoner(Reasoner, Protocol):
    """A reasoner that can also answer once, constrained to a JSON schema (the citation
    pass); the offline one cannot."""

    async def structured(
        self,
        briefing: Briefing,
        messages: list[dict[str, str]],
        schema: JSONObject,
        *,
        budget: Budget,
        max_tokens: int = 256,
    ) -> str: ...


async def within(
    pieces: AsyncIterator[T], budget: Budget, deadline: float, started: Callable[[], bool]
) -> AsyncGenerator[T, None]:
    """``pieces`` as they come: the first within ``budget.first``, each next within
    ``budget.stall``, all by ``deadline`` (the running loop's clock). A wait that runs out
    raises ``ModelTimeout``, saying whether the model did not start or stopped writing
    (``started``: whether the answer had begun), or that it hit the cap."""
    loop = asyncio.get_running_loop()
    wait = budget.first_wait()
    while True:
        left = deadline - loop.time()
        bound = max(0.0, min(wait, left))
        try:
            piece = await asyncio.wait_for(pieces.__anext__(), bound)
        except StopAsyncIteration:
            return
        except TimeoutError as exc:
            if bound >= left:
                raise ModelTimeout(
                    f"the model did not finish within the {budget.cap:g} s cap",
                    fix="raise citation_pass_timeout in config.toml",
                ) from exc
            what = "stopped writing" if started() else "did not start"
            spent = budget.cap - left + bound
            raise ModelTimeout(f"the model {what} within its budget ({spent:.0f} s)") from exc
        wait = budget.stall_wait()
        yield piece


async def paced(pieces: AsyncIterator[Piece], every: float) -> AsyncGenerator[Piece | None, None]:
    """The pieces, with ``None`` each ``every`` seconds that passes without one (so a caller
    can say how long the model has been reading). Never cancels the pending read."""
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


T = TypeVar("T")


class _End:
    """The end of a stream, as ``_next`` says it (a piece itself may be anything)."""


_END = _End()


async def _next(pieces: AsyncIterator[T]) -> T | _End:
    try:
        return await pieces.__anext__()
    except StopAsyncIteration:
        return _END


class Ahead(Generic[T]):
    """A stream whose first read is already under way: made before anyone asks for a piece,
    so the request goes out while the caller still has other work to do. Iterate it (once)
    and close it like the generator it wraps; closing it early cancels the pending read."""

    def __init__(self, pieces: AsyncGenerator[T, None]) -> None:
        self._pieces = pieces
        self._first: asyncio.Future[T | _End] | None = asyncio.ensure_future(_next(pieces))
        self._closed = False

    async def started(self, sent: asyncio.Event) -> None:
        """Wait until ``sent`` is set, or the first read has ended (a piece or a failure:
        either way, nothing more to wait for)."""
        first = self._first
        if first is None or first.done() or sent.is_set():
            return
        waiting = asyncio.ensure_future(sent.wait())
        # Any: asyncio.wait takes one future type; these two have results of different types
        either: set[asyncio.Future[Any]] = {first, waiting}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()

    def __aiter__(self) -> Ahead[T]:
        return self

    async def __anext__(self) -> T:
        first, self._first = self._first, None
        item = await (first if first is not None else _next(self._pieces))
        if isinstance(item, _End):
            raise StopAsyncIteration
        return item

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        first, self._first = self._first, None
        if first is not None and not first.done():
            first.cancel()
        if first is not None:
            try:
                await first  # its failure ends here: the stream is closed
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # the closer itself is being cancelled, not just the read
            except Exception:  # noqa: BLE001, S110 - a closed stream's last failure is moot
                pass
        await self._pieces.aclose()
