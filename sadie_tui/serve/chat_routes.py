"""``POST /v1/ask``, ``POST /v1/chat`` (SSE), ``POST /api/chat`` (NDJSON, auto-continue) and
``GET /api/chat/{id}/stream``."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response

from ..engine.events import ErrorEvent, WireEvent
from ..engine.requests import ChatTurn
from ..engine.session import SessionProtocol
from ..engine.turns.ask import AskResult
from ..engine.wire import dump
from .body import body_as
from .errors import STATUS_FOR_KIND, HTTPProblem, error_response, json_response
from .routing import NDJSON, SSE, Answer, Api, Param, ok
from .shapes import ApiChatRequest, AskRequest, AutoContinue, ChatRequest
from .streams import ndjson_response, sse_response
from .turns import Turn, Turns

api = Api()
_EVENTS = Answer(WireEvent, media=NDJSON, text="one event a line, as `sadie chat --ndjson`")
_SSE = Answer(
    str,
    media=SSE,
    text="server-sent events: meta, delta…, citations, grounding, done (or error); also"
    " emotion, status, context, waiting, thinking, checking, replace. Each data line is the"
    " event's `--ndjson` object without its type (delta: {text}; citations: the validated"
    " array itself, its extras in grounding)",
)


def _session(request: Request) -> SessionProtocol:
    return request.app.state.session


def _turns(request: Request) -> Turns:
    return request.app.state.turns


@api.route(
    "POST",
    "/v1/ask",
    "Answer one question (one-shot, the persona's stages)",
    ok(AskResult),
    request=AskRequest,
    errors=(400, 413, 502, 503),
)
async def ask(request: Request) -> Response:
    asked = await body_as(request, AskRequest)
    result = await _session(request).ask(asked.question, persona=asked.persona)
    return json_response(dump(result))


def _message(body: ChatRequest) -> str:
    """The turn's message: required and not blank, unless the turn regenerates the last one."""
    if body.regenerate:
        if not body.conversation_id:
            raise HTTPProblem(400, "'regenerate' needs a 'conversation_id'", kind="usage")
        return body.message or ""
    if body.message is None:
        raise HTTPProblem(400, "'message' is required", kind="usage")
    if not body.message.strip():
        raise HTTPProblem(400, "'message' is empty", kind="usage")
    return body.message


async def _start(request: Request, body: ChatRequest, *, owned: bool) -> Turn | Response:
    """The turn started and past its first event, or the error response of a turn that
    failed before streaming (an unknown conversation or persona, a bad chip)."""
    session = _session(request)
    source = session.chat(
        ChatTurn(
            _message(body),
            conversation_id=body.conversation_id,
            persona=body.persona,
            regenerate=body.regenerate,
            model=body.model or None,
            chips=tuple(body.chips or ()),
        )
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


@api.route(
    "POST",
    "/v1/chat",
    "One chat turn, streamed as server-sent events",
    (_SSE,),
    request=ChatRequest,
    errors=(400, 404, 413),
)
async def chat_sse(request: Request) -> Response:
    started = await _start(request, await body_as(request, ChatRequest), owned=True)
    return started if isinstance(started, Response) else sse_response(started)


@api.route(
    "POST",
    "/api/chat",
    "One chat turn, streamed as NDJSON; auto_continue answers 202 at once",
    (_EVENTS, Answer(AutoContinue, 202, text="The turn is running", headers=("Location",))),
    request=ApiChatRequest,
    errors=(400, 404, 413),
)
async def chat_ndjson(request: Request) -> Response:
    body = await body_as(request, ApiChatRequest)
    auto = body.auto_continue
    started = await _start(request, body, owned=not auto)
    if isinstance(started, Response):
        return started
    if not auto:
        return ndjson_response(started)
    meta = started.meta
    assert meta is not None
    stream = f"/api/chat/{meta.conversation_id}/stream"
    running = AutoContinue(meta.conversation_id, meta.message_id, stream)
    return json_response(dump(running), 202, headers={"Location": stream})


@api.get(
    "/api/chat/{conversation_id}/stream",
    "The latest turn of a conversation from its first event (auto-continue)",
    (_EVENTS,),
    (Param("conversation_id", "path", "full id", required=True),),
    errors=(404,),
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
