"""The OpenAPI 3.1 document of every route (``GET /openapi.json``), generated, never written.

The schemas are the shapes' own (``wire.components`` over the dataclasses the routes read
and answer with); the paths come from each route's own declaration over its handler
(``routing.Api``: method, path, summary, parameters, request shape, answers and error
statuses). A new field shows up here by itself, and so does a new route
(``tests/test_openapi.py`` checks the declarations against the app's real routes and the
document against real answers).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from .. import __version__
from ..engine.door import OPERATIONS
from ..engine.wire import Mode, Shape, components
from . import chat_routes, job_routes, memory_routes, operation_routes
from .errors import json_response
from .routing import JSON, Api, Route, ok
from .shapes import Error

Document = dict[str, Any]  # Any: a JSON document

ERROR_TEXT = {
    400: "Usage: a malformed body or parameter",
    401: "No or wrong bearer token",
    403: "Foreign Origin or Host",
    404: "Not found",
    413: "Body over 1 MB (an import: over 10 MB)",
    502: "The model failed",
    503: "The memory failed",
}
EVERY_ROUTE_ERRORS = (401, 403)  # the guard's, on every route

api = Api()


@api.get("/openapi.json", "This description", ok(Document))
async def openapi(request: Request) -> Response:
    return json_response(spec())


def routes() -> tuple[Route, ...]:
    """Every route of the server, in the order they are served (the table's as it is now)."""
    return (
        *chat_routes.api.documented,
        *memory_routes.api.documented,
        *operation_routes.routes().documented,
        *job_routes.api.documented,
        *api.documented,
    )


def _shapes(routes: tuple[Route, ...]) -> list[tuple[Shape, Mode]]:
    found: list[tuple[Shape, Mode]] = [(Error, "serialization")]
    for route in routes:
        found += [(answer.shape, "serialization") for answer in route.answers]
        found += [(param.shape, "validation") for param in route.params]
        if route.request is not None:
            found.append((route.request, "validation"))
    return found


def _operation(route: Route, schemas: dict[tuple[Shape, Mode], Document]) -> Document:
    responses: Document = {}
    for answer in route.answers:
        entry = responses.setdefault(str(answer.status), {"description": answer.text})
        schema = schemas[(answer.shape, "serialization")]
        entry.setdefault("content", {})[answer.media] = {"schema": schema}
        if answer.headers:
            entry["headers"] = {h: {"schema": {"type": "string"}} for h in answer.headers}
    error = {"schema": schemas[(Error, "serialization")]}
    for status in (*route.errors, *EVERY_ROUTE_ERRORS):
        responses[str(status)] = {"description": ERROR_TEXT[status], "content": {JSON: error}}
    operation: Document = {"summary": route.summary, "responses": responses}
    if route.params:
        operation["parameters"] = [
            {
                "name": p.name,
                "in": p.where,
                "required": p.required,
                "schema": schemas[(p.shape, "validation")],
                "description": p.text,
            }
            for p in route.params
        ]
    if route.request is not None:
        body = {"schema": schemas[(route.request, "validation")]}
        operation["requestBody"] = {"required": True, "content": {JSON: body}}
    return operation


def spec() -> Document:
    """The document, for the table as it is (built once per table: the shapes do not change
    while it runs)."""
    return _spec(tuple(OPERATIONS))


@cache
def _spec(operations: tuple[str, ...]) -> Document:
    found = routes()
    schemas, defs = components(_shapes(found))
    paths: Document = {}
    for route in found:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route, schemas)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "sadie",
            "version": __version__,
            "description": "The HTTP API of `sadie serve`: one memory, many clients.",
        },
        "components": {
            "schemas": defs,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{}, {"bearer": []}],
        "paths": paths,
    }
