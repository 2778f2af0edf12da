"""A turn's events on the wire: server-sent events for ``/v1/chat``, NDJSON for ``/api/chat``.

Both generators stop their turn when the client goes away (an owned turn: the engine keeps
the reply so far as ``interrupted``); the NDJSON response closes its generator itself,
as sse-starlette does, so that happens at once rather than when the generator is collected.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from ..engine.events import Event, to_json
from .turns import Turn

PING_SECONDS = 15


def dumps(data: object) -> str:
    """One line of JSON exactly as ``sadie chat --ndjson`` prints it."""
    return json.dumps(data, ensure_ascii=False, default=str)


def sse_events(event: Event, n: int) -> list[ServerSentEvent]:
    """``token`` becomes the spec's ``delta`` (``{"text": …}``); ``citations`` carries the
    validated array itself, as the spec says, and its extras (``unsupported``, ``repaired``,
    ``tail``, ``found``, ``note``) follow in a ``grounding`` event of their own; every other
    event keeps its type as the event name and its ``--ndjson`` fields (without ``type``) as
    data. ``n`` numbers the first; the caller counts what it gets back."""
    data = to_json(event)
    kind = str(data.pop("type"))
    if kind == "token":
        return [ServerSentEvent(data=dumps({"text": data["value"]}), event="delta", id=str(n))]
    if kind == "citations":
        array = data.pop("value")
        return [
            ServerSentEvent(data=dumps(array), event="citations", id=str(n)),
            ServerSentEvent(data=dumps(data), event="grounding", id=str(n + 1)),
        ]
    return [ServerSentEvent(data=dumps(data), event=kind, id=str(n))]


async def _sse(turn: Turn) -> AsyncIterator[ServerSentEvent]:
    n = 0
    try:
        async for event in turn.follow():
            for sent in sse_events(event, n):
                yield sent
                n += 1
    finally:
        if turn.owned:
            turn.stop()


async def _ndjson(turn: Turn) -> AsyncIterator[str]:
    try:
        async for event in turn.follow():
            yield dumps(to_json(event)) + "\n"
    finally:
        if turn.owned:
            turn.stop()


class NDJSONResponse(StreamingResponse):
    media_type = "application/x-ndjson"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            aclose = getattr(self.body_iterator, "aclose", None)
            if aclose is not None:
                with anyio.CancelScope(shield=True):
                    await aclose()


def sse_response(turn: Turn) -> EventSourceResponse:
    return EventSourceResponse(_sse(turn), ping=PING_SECONDS)


def ndjson_response(turn: Turn) -> NDJSONResponse:
    return NDJSONResponse(_ndjson(turn), headers={"Cache-Control": "no-store"})
