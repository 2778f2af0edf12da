"""``POST /v1/ask``, ``POST /v1/chat`` (SSE), ``POST /api/chat`` (NDJSON, auto-continue) and
``GET /api/chat/{id}/stream``."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..engine.events import ErrorEvent
from ..engine.session import SessionProtocol
from .body import bool_field, chips_field, json_body, text_field
from .errors import STATUS_FOR_KIND, HTTPProblem, error_response, json_response
from .streams import ndjson_response, sse_response
from .turns import Turn, Turns


def _session(request: Request) -> SessionProtocol:
    return request.app.state.session


def _turns(request: Request) -> Turns:
    return request.app.state.turns


async def ask(request: Request) -> Response:
    body = await json_body(request)
    question = text_field(body, "question", required=True)
    assert question is not None
    result = await _session(request).ask(question, persona=text_field(body, "persona"))
    return json_response(result.as_json())


async def _start(request: Request, body: dict[str, Any], *, owned: bool) -> Turn | Response:
    """The turn started and past its first event, or the error response of a turn that
    failed before streaming (an unknown conversation or persona, a bad chip)."""
    session = _session(request)
    regenerate = bool_field(body, "regenerate")
    message = text_field(body, "message", required=not regenerate) or ""
    conversation_id = text_field(body, "conversation_id")
    if regenerate and not conversation_id:
        raise HTTPProblem(400, "'regenerate' needs a 'conversation_id'", kind="usage")
    persona = text_field(body, "persona")
    model = text_field(body, "model")
    source = session.chat(
        message,
        conversation_id=conversation_id,
        persona=persona,
        regenerate=regenerate,
        model=model or None,
        chips=chips_field(body),
    )
    turn = _turns(request).start(source, owned=owned)
    try:
        await turn.ready.wait()
    except asyncio.CancelledError:
        if owned:
            turn.stop()
        raise
    if turn.failure is not None:
        raise turn.failure
    first = turn.events[0] if turn.events else None
    if isinstance(first, ErrorEvent):
        status = STATUS_FOR_KIND.get(first.code, 500)
        return error_response(status, first.message, kind=first.code, fix=first.fix)
    if first is None:
        raise HTTPProblem(500, "the turn ended without an event", kind="error")
    _turns(request).register(turn)
    return turn


async def chat_sse(request: Request) -> Response:
    started = await _start(request, await json_body(request), owned=True)
    return started if isinstance(started, Response) else sse_response(started)


async def chat_ndjson(request: Request) -> Response:
    body = await json_body(request)
    auto = bool_field(body, "auto_continue")
    started = await _start(request, body, owned=not auto)
    if isinstance(started, Response):
        return started
    if not auto:
        return ndjson_response(started)
    meta = started.meta
    assert meta is not None
    stream = f"/api/chat/{meta.conversation_id}/stream"
    return json_response(
        {
            "conversation_id": meta.conversation_id,
            "message_id": meta.message_id,
            "stream": stream,
        },
        202,
        headers={"Location": stream},
    )


async def chat_stream(request: Request) -> Response:
    cid = request.path_params["conversation_id"]
    turn = _turns(request).get(cid)
    if turn is None:
        raise HTTPProblem(
            404,
            f"no turn of conversation {cid!r} on this server",
            kind="not_found",
            fix='start one with POST /api/chat {..., "auto_continue": true}',
        )
    return ndjson_response(turn)


routes = [
    Route("/v1/ask", ask, methods=["POST"]),
    Route("/v1/chat", chat_sse, methods=["POST"]),
    Route("/api/chat", chat_ndjson, methods=["POST"]),
    Route("/api/chat/{conversation_id}/stream", chat_stream, methods=["GET"]),
]
