"""One declaration per route: the decorator over a handler both registers it with Starlette
and describes it for the OpenAPI document (``openapi.py`` builds the document from every
room's ``api.documented``), so a route and its description cannot be in two places or drift.

    api = Api()

    @api.get("/v1/soul", "The memory's summary of who the person is", ok(Soul))
    async def soul(request: Request) -> Response: ...
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route as StarletteRoute

from ..engine.wire import Shape

JSON = "application/json"
NDJSON = "application/x-ndjson"
SSE = "text/event-stream"

Method = Literal["GET", "POST", "PUT", "DELETE"]
Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class Param:
    """A path or query parameter; its schema is ``shape``'s."""

    name: str
    where: Literal["path", "query"]
    text: str
    shape: Shape = str
    required: bool = False


@dataclass(frozen=True)
class Answer:
    """One answer of a route: a status, the shape of its body in ``media`` (for NDJSON, the
    shape of one line), and the headers it sets."""

    shape: Shape
    status: int = 200
    media: str = JSON
    text: str = "OK"
    headers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Route:
    """One route of the API as the document describes it."""

    method: Method
    path: str
    summary: str
    answers: tuple[Answer, ...]
    params: tuple[Param, ...] = ()
    request: Shape = None  # None: no body
    errors: tuple[int, ...] = ()


def ok(shape: Shape, status: int = 200) -> tuple[Answer, ...]:
    """The one JSON answer of most routes."""
    return (Answer(shape, status),)


class Api:
    """The routes of one room of the server, each declared once over its handler."""

    def __init__(self) -> None:
        self.documented: list[Route] = []
        self.routes: list[StarletteRoute] = []

    def add(self, route: Route, handler: Handler) -> Handler:
        """Serve ``handler`` at ``route`` and describe it."""
        self.documented.append(route)
        self.routes.append(StarletteRoute(route.path, handler, methods=[route.method]))
        return handler

    def route(
        self,
        method: Method,
        path: str,
        summary: str,
        answers: tuple[Answer, ...],
        params: tuple[Param, ...] = (),
        *,
        request: Shape = None,
        errors: tuple[int, ...] = (),
    ) -> Callable[[Handler], Handler]:
        """The decorator: ``@api.route("POST", "/v1/ask", "…", ok(AskResult), request=…)``."""
        described = Route(method, path, summary, answers, params, request, errors)
        return lambda handler: self.add(described, handler)

    def get(
        self,
        path: str,
        summary: str,
        answers: tuple[Answer, ...],
        params: tuple[Param, ...] = (),
        *,
        errors: tuple[int, ...] = (),
    ) -> Callable[[Handler], Handler]:
        """``route("GET", …)``: a GET has no body."""
        return self.route("GET", path, summary, answers, params, errors=errors)
