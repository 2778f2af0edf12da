"""Chat turns running on their own tasks, their events buffered for any reader.

A ``Turn`` pumps one engine turn (``Session.chat``) into a list; readers ``follow`` it from the
first event, whenever they attach (auto-continue: the dock creates the turn, the client
attaches to its stream later). A turn owned by one response is stopped when that response's
client goes away; the engine then keeps the reply so far as ``interrupted``.

A turn may be stopped at any point: the engine keeps the message and what streamed of the
reply as ``interrupted`` wherever it is cancelled (``engine.turns.chat``).

A reply a policy rewrote or blocked (``Replace.by_policy``) is replayed without its tokens:
a reader that attaches afterwards gets the final text only, as the stored message holds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator

from ..engine.errors import SadieError
from ..engine.events import ErrorEvent, Event, Meta, Replace, Token
from .errors import kind_of

log = logging.getLogger("sadie.serve")
KEEP_FINISHED = 64  # finished turns kept for late readers


class Turn:
    def __init__(self, source: AsyncIterator[Event], *, owned: bool):
        self.events: list[Event] = []
        self.done = False
        self.failure: SadieError | None = None
        self.owned = owned
        self.ready = asyncio.Event()  # the first event is in, or done
        self._source = source
        self._changed = asyncio.Event()
        self._withheld = 0  # the events before this one streamed text a policy withheld
        self.task: asyncio.Task[None] | None = None

    def start(self) -> Turn:
        self.task = asyncio.create_task(self._pump())
        return self

    @property
    def meta(self) -> Meta | None:
        first = self.events[0] if self.events else None
        return first if isinstance(first, Meta) else None

    async def _pump(self) -> None:
        try:
            try:
                async for event in self._source:
                    self._append(event)
                    self.ready.set()
            finally:
                aclose = getattr(self._source, "aclose", None)
                if aclose is not None:
                    await aclose()
        except SadieError as exc:
            self._fail(exc)
        except Exception as exc:  # a bug: logged with its traceback, reported as a failure
            log.exception("chat turn failed")
            self._fail(SadieError(f"internal error: {type(exc).__name__}: {exc}"))
        finally:
            self.done = True
            self.ready.set()
            self._notify()

    def _fail(self, exc: SadieError) -> None:
        self.failure = exc
        if self.events:  # its stream has begun: it ends with an error event, as any other
            meta = self.meta
            message_id = meta.message_id if meta is not None else None
            self._append(ErrorEvent(exc.message, kind_of(exc), exc.fix, message_id))

    def _append(self, event: Event) -> None:
        if isinstance(event, Replace) and event.by_policy:
            self._withheld = len(self.events)
        self.events.append(event)
        self._notify()

    def _notify(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def stop(self) -> None:
        """Stop the turn at once (the engine keeps its reply as ``interrupted``)."""
        if not self.done and self.task is not None:
            self.task.cancel()

    async def wait(self, timeout: float | None = None) -> None:
        if self.task is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.task), timeout)

    async def follow(self) -> AsyncIterator[Event]:
        """Every event of the turn from the first, then the new ones as they come."""
        seen = 0
        while True:
            changed = self._changed
            while seen < len(self.events):
                event = self.events[seen]
                seen += 1
                if not (seen <= self._withheld and isinstance(event, Token)):
                    yield event
            if self.done:
                return
            await changed.wait()


class Turns:
    """The turns of this server by conversation id (the latest per conversation)."""

    def __init__(self) -> None:
        self._by_conversation: OrderedDict[str, Turn] = OrderedDict()
        self._running: set[Turn] = set()

    def start(self, source: AsyncIterator[Event], *, owned: bool) -> Turn:
        turn = Turn(source, owned=owned).start()
        self._running.add(turn)
        assert turn.task is not None
        turn.task.add_done_callback(lambda _task: self._running.discard(turn))
        return turn

    def register(self, turn: Turn) -> None:
        meta = turn.meta
        if meta is None:
            return
        self._by_conversation.pop(meta.conversation_id, None)
        self._by_conversation[meta.conversation_id] = turn
        finished = [cid for cid, t in self._by_conversation.items() if t.done]
        for cid in finished[: max(0, len(self._by_conversation) - KEEP_FINISHED)]:
            del self._by_conversation[cid]

    def get(self, conversation_id: str) -> Turn | None:
        return self._by_conversation.get(conversation_id)

    async def stop_all(self, timeout: float = 5.0) -> None:
        """On shutdown: every running turn stopped, its reply kept as ``interrupted``."""
        running = list(self._running)
        for turn in running:
            turn.stop()
        for turn in running:
            await turn.wait(timeout)
