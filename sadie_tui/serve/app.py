"""The Starlette app over one session: the routes, the guard, errors as JSON, and a lifespan
that warms the embedder and, on shutdown, stops running turns (kept as ``interrupted``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ExceptionHandler

from ..engine.errors import SadieError
from ..engine.session import SessionProtocol
from ..mcp_server import HttpEndpoint
from . import chat_routes, job_routes, memory_routes, openapi, operation_routes
from .errors import (
    HTTPProblem,
    error_response,
    problem_response,
    sadie_error_response,
)
from .guard import Guard, GuardMiddleware
from .turns import Turns

log = logging.getLogger("sadie.serve")


async def _on_sadie_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SadieError)
    return sadie_error_response(exc)


async def _on_problem(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPProblem)
    return problem_response(exc)


async def _on_http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "error")
    message = (
        f"no route {request.method} {request.url.path}"
        if exc.status_code == 404
        else (str(exc.detail))
    )
    return error_response(exc.status_code, message, kind=kind, headers=exc.headers)


async def _on_crash(request: Request, exc: Exception) -> Response:
    return error_response(500, f"internal error: {type(exc).__name__}", kind="error")


def _warm(session: SessionProtocol) -> None:
    try:
        session.warm()
    except SadieError as exc:
        log.warning("the embedding model did not load: %s", exc.one_line())


def create_app(
    session: SessionProtocol,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    warm: bool = True,
) -> Starlette:
    """The API over ``session`` as served on ``host:port`` (the guard checks requests'
    ``Host`` and ``Origin`` against them)."""
    turns = Turns()
    mcp = HttpEndpoint(session)  # the MCP tools at /mcp, behind the same guard

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        warming = asyncio.create_task(asyncio.to_thread(_warm, session)) if warm else None
        try:
            yield
        finally:
            await turns.stop_all()
            await mcp.close()
            if warming is not None:
                warming.cancel()

    handlers: dict[Any, ExceptionHandler] = {  # Any: Starlette's own key type
        SadieError: _on_sadie_error,
        HTTPProblem: _on_problem,
        HTTPException: _on_http,
        Exception: _on_crash,
    }
    app = Starlette(
        routes=[
            *chat_routes.api.routes,
            *memory_routes.api.routes,
            *operation_routes.routes().routes,
            *job_routes.api.routes,
            *openapi.api.routes,
            Route("/mcp", mcp),
        ],
        middleware=[Middleware(GuardMiddleware, guard=Guard(host, port, token))],
        exception_handlers=handlers,
        lifespan=lifespan,
    )
    app.state.session = session
    app.state.turns = turns
    app.state.on_change = None  # the holder's listener for what jobs changed (job_routes)
    return app
