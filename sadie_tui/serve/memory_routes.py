"""Conversations, chips, search, stats, personas and health: each a blocking session call,
run in a thread (the session's database serialises its statements)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import __version__
from ..engine.chips import NewChip
from ..engine.conversations import ConversationShow
from ..engine.conversations.export_format import MAX_EXPORT_BYTES
from ..engine.session import SessionProtocol
from ..engine.wire import dump, dump_each
from .body import body_as, query_bool, query_int, raw_body
from .errors import HTTPProblem, error_response, json_response
from .shapes import Health, RenameRequest, Soul

T = TypeVar("T")


def _session(request: Request) -> SessionProtocol:
    return request.app.state.session


async def blocking(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await asyncio.to_thread(partial(fn, *args, **kwargs))


def _cid(request: Request) -> str:
    return str(request.path_params["conversation_id"])


# -- conversations -------------------------------------------------------------------------
async def list_conversations(request: Request) -> Response:
    found = await blocking(
        _session(request).conversations,
        archived=query_bool(request, "archived"),
        search=request.query_params.get("search") or None,
        limit=query_int(request, "limit", high=10_000),
    )
    return json_response(dump_each(found))


def _show(session: SessionProtocol, conversation_id: str) -> Any:
    c = session.conversation(conversation_id)
    return dump(ConversationShow(c, session.messages(c.id), session.chips(c.id)))


async def show_conversation(request: Request) -> Response:
    return json_response(await blocking(_show, _session(request), _cid(request)))


def _changed(action: str) -> Callable[[Request], Any]:
    """``POST …/pin|unpin|archive|unarchive``: the change, then the conversation as it is."""

    def change(session: SessionProtocol, cid: str) -> dict[str, Any]:
        c = session.conversation(cid)
        if action in ("pin", "unpin"):
            session.pin(c.id, action == "pin")
        else:
            session.archive(c.id, action == "archive")
        return dump(session.conversation(c.id))

    async def endpoint(request: Request) -> Response:
        return json_response(await blocking(change, _session(request), _cid(request)))

    return endpoint


async def rename_conversation(request: Request) -> Response:
    title = (await body_as(request, RenameRequest)).title
    session = _session(request)

    def rename(cid: str) -> dict[str, Any]:
        c = session.conversation(cid)
        session.rename(c.id, title)
        return dump(session.conversation(c.id))

    return json_response(await blocking(rename, _cid(request)))


async def forget_conversation(request: Request) -> Response:
    session = _session(request)

    def forget(cid: str) -> dict[str, Any]:
        c = session.conversation(cid)
        session.forget(c.id)
        return dump(c)

    return json_response(await blocking(forget, _cid(request)))


EXPORT_TYPES = {"md": "text/markdown; charset=utf-8", "json": "application/json"}


async def export_conversation(request: Request) -> Response:
    """``GET …/export?format=md|json``: the text ``sadie conversations export`` writes."""
    fmt = request.query_params.get("format", "md")
    if fmt not in EXPORT_TYPES:
        raise HTTPProblem(400, "'format' must be md or json", kind="usage")
    text = await blocking(_session(request).export, _cid(request), fmt)
    return Response(text, media_type=EXPORT_TYPES[fmt])


async def import_conversation(request: Request) -> Response:
    """``POST /v1/conversations/import`` with a JSON export as the body: a new conversation.
    The body goes to the engine as it came, so a malformed file gets the CLI's own error; it
    may be as large as an export file the CLI imports (``MAX_EXPORT_BYTES``)."""
    data = await raw_body(request, MAX_EXPORT_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPProblem(400, f"the export is not UTF-8 text: {exc.reason}", kind="usage") from exc
    c = await blocking(_session(request).import_conversation, text)
    return json_response(dump(c), 201)


# -- chips ---------------------------------------------------------------------------------
async def list_chips(request: Request) -> Response:
    found = await blocking(_session(request).chips, _cid(request))
    return json_response(dump_each(found))


async def add_chip(request: Request) -> Response:
    new = await body_as(request, NewChip)
    chip = await blocking(
        _session(request).add_chip, _cid(request), new.kind, new.ref, label=new.label
    )
    return json_response(dump(chip), 201)


async def remove_chip(request: Request) -> Response:
    chip = await blocking(
        _session(request).remove_chip, _cid(request), str(request.path_params["chip_id"])
    )
    return json_response(dump(chip))


async def find_chips(request: Request) -> Response:
    found = await blocking(
        _session(request).find_attachable,
        request.query_params.get("q", ""),
        kind=request.query_params.get("kind") or None,
        limit=query_int(request, "limit", high=500) or 20,
    )
    return json_response(dump_each(found))


# -- the memory ----------------------------------------------------------------------------
async def search(request: Request) -> Response:
    query = request.query_params.get("q", "")
    if not query.strip():
        raise HTTPProblem(400, "'q' is required", kind="usage")
    found = await blocking(
        _session(request).search,
        query,
        persona=request.query_params.get("persona") or None,
        k=query_int(request, "k", high=100),
    )
    return json_response(dump(found))


async def episode(request: Request) -> Response:
    """``GET /v1/episodes/{episode_id}``: one note as a citation opens it."""
    found = await blocking(_session(request).episode, str(request.path_params["episode_id"]))
    if found is None:
        return error_response(404, "no such episode in this memory", kind="not_found")
    return json_response(dump(found))


async def soul(request: Request) -> Response:
    """``GET /v1/soul``: the summary of who the person is, as the memory keeps it."""
    return json_response(dump(Soul(await blocking(_session(request).soul))))


async def stats(request: Request) -> Response:
    return json_response(dump(await blocking(_session(request).stats)))


async def personas(request: Request) -> Response:
    """``GET /v1/personas``: the personas this holder answers with, and the persona files it
    set aside (``Personas.to_json``)."""
    return json_response((await blocking(_session(request).personas)).to_json())


async def models(request: Request) -> Response:
    """``GET /v1/models``: the models the holder's Ollama server has pulled."""
    return json_response(dump_each(await _session(request).models()))


async def health(request: Request) -> Response:
    session = _session(request)
    model = await session.check_model(
        fresh=query_bool(request, "fresh"), model=request.query_params.get("model") or None
    )
    found = Health(True, __version__, model, str(session.home), session.embedder_ready)
    return json_response(dump(found))


_C = "/v1/conversations/{conversation_id}"
routes = [
    Route("/v1/conversations", list_conversations, methods=["GET"]),
    Route("/v1/conversations/import", import_conversation, methods=["POST"]),
    Route(_C, show_conversation, methods=["GET"]),
    Route(f"{_C}/export", export_conversation, methods=["GET"]),
    Route(_C, forget_conversation, methods=["DELETE"]),
    *(Route(f"{_C}/{a}", _changed(a), methods=["POST"]) for a in ("pin", "unpin")),
    *(Route(f"{_C}/{a}", _changed(a), methods=["POST"]) for a in ("archive", "unarchive")),
    Route(f"{_C}/rename", rename_conversation, methods=["POST"]),
    Route(f"{_C}/chips", list_chips, methods=["GET"]),
    Route(f"{_C}/chips", add_chip, methods=["POST"]),
    Route(f"{_C}/chips/{{chip_id}}", remove_chip, methods=["DELETE"]),
    Route("/v1/chips/find", find_chips, methods=["GET"]),
    Route("/v1/episodes/{episode_id}", episode, methods=["GET"]),
    Route("/v1/soul", soul, methods=["GET"]),
    Route("/v1/search", search, methods=["GET"]),
    Route("/v1/stats", stats, methods=["GET"]),
    Route("/v1/personas", personas, methods=["GET"]),
    Route("/v1/models", models, methods=["GET"]),
    Route("/v1/health", health, methods=["GET"]),
]
