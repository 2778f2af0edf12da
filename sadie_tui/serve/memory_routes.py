"""The routes that are not an operation of the door's table: the personas this holder
answers with, its model server's models, and its health (the server, the model, the
memory). The table's operations are served by ``operation_routes``."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response

from .. import __version__
from ..engine.reasoners.ollama import ModelInfo
from ..engine.session import SessionProtocol
from ..engine.wire import dump, dump_each
from .body import query_bool
from .errors import json_response
from .routing import Api, Param, ok
from .shapes import Health, PersonasAnswer

api = Api()


def _session(request: Request) -> SessionProtocol:
    return request.app.state.session


@api.get(
    "/v1/personas", "The personas this memory answers with, and broken files", ok(PersonasAnswer)
)
async def personas(request: Request) -> Response:
    """``GET /v1/personas``: the personas this holder answers with, and the persona files it
    set aside (``Personas.to_json``)."""
    return json_response((await asyncio.to_thread(_session(request).personas)).to_json())


@api.get(
    "/v1/models", "The models the Ollama server has pulled", ok(list[ModelInfo]), errors=(502,)
)
async def models(request: Request) -> Response:
    """``GET /v1/models``: the models the holder's Ollama server has pulled."""
    return json_response(dump_each(await _session(request).models()))


@api.get(
    "/v1/health",
    "The server, the model and the memory",
    ok(Health),
    (
        Param("model", "query", "check this model (default: the configured)"),
        Param("fresh", "query", "ask the server again now", bool),
    ),
)
async def health(request: Request) -> Response:
    session = _session(request)
    model = await session.check_model(
        fresh=query_bool(request, "fresh"), model=request.query_params.get("model") or None
    )
    found = Health(True, __version__, model, str(session.home), session.embedder_ready)
    return json_response(dump(found))
