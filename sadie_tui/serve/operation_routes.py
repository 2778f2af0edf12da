"""Every operation of the door's table (``engine.operations``) served at its declared path:
one endpoint for all of them. The path's ``{fields}`` come from the URL; a GET or DELETE
reads the other fields from the query, any other method from the JSON body (or, for an
operation whose body is text, the body as sent). The request is read as the operation's own
shape (``wire``: a field missing, of the wrong type, empty or out of bounds is a 400 naming
it), run by the session in a worker thread, and its answer written by the wire.

The routes are made when an app is (``routes()``), from the table as it is then: an
operation declared anywhere (a test's own) is served, documented and reachable by every
face without a line here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import typing
from dataclasses import MISSING, Field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..engine import operations as _operations  # noqa: F401 - declares the table
from ..engine.door import OPERATIONS, Op, path_fields
from ..engine.jsonvalue import JSONObject
from ..engine.session import SessionProtocol
from ..engine.wire import Shape, ShapeError, dump_as, load
from .body import json_body, raw_body
from .errors import HTTPProblem, json_response
from .guard import socket_only
from .routing import Answer, Api, Handler, Param, Route

QUERY = ("GET", "DELETE")


def routes() -> Api:
    """The table's operations as routes, each described for the OpenAPI document."""
    api = Api()
    for cls in OPERATIONS.values():
        api.add(described(cls), _endpoint(cls))
    return api


def described(cls: type[Op[Any]]) -> Route:  # Any: an operation of any answer
    """The route of ``cls`` as the OpenAPI document shows it."""
    d = cls.declared
    fields = _fields(cls)
    in_path = path_fields(d.path)
    params = [Param(name, "path", _doc(cls, name), str, required=True) for name in in_path]
    request: Shape = None
    if d.method in QUERY:
        params += [
            Param(name, "query", _doc(cls, name), _query_shape(cls, name), required=_required(f))
            for name, f in fields.items()
            if name not in in_path
        ]
    elif d.body == "json" and len(fields) > len(in_path):
        request = cls
    elif d.body == "text":
        request = dict[str, object]
    answers = tuple(Answer(shape, d.status, media) for shape, media in d.answers) or (
        Answer(cls.answer, d.status),
    )
    summary = d.summary + (" (the Unix socket only)" if d.socket_only else "")
    return Route(d.method, d.path, summary, answers, tuple(params), request, d.errors)


def _fields(cls: type) -> dict[str, Field[Any]]:  # Any: a field of any type
    return {f.name: f for f in dataclasses.fields(cls)}


def _required(field: Field[Any]) -> bool:  # Any: as _fields
    return field.default is MISSING and field.default_factory is MISSING


def _query_shape(cls: type, name: str) -> Any:  # Any: a shape
    return typing.get_type_hints(cls, include_extras=True)[name]


def _doc(cls: type, name: str) -> str:
    """The field's description: its ``Field(description=…)``, if it has one."""
    for extra in getattr(typing.get_type_hints(cls, include_extras=True)[name], "__metadata__", ()):
        if getattr(extra, "description", None):
            return str(extra.description)
    return name.replace("_", " ")


def _endpoint(cls: type[Op[Any]]) -> Handler:  # Any: an operation of any answer
    d = cls.declared
    in_path = path_fields(d.path)
    fields = _fields(cls)

    async def endpoint(request: Request) -> Response:
        if d.socket_only:
            socket_only(request, cls.__name__)
        given: JSONObject = {}
        if d.method in QUERY:
            given.update({k: v for k, v in request.query_params.items() if k in fields})
        elif d.body == "text":
            (name,) = [f for f in fields if f not in in_path]
            given[name] = _text(await raw_body(request, d.body_limit or 1024 * 1024))
        else:
            given.update(await json_body(request))
        given.update({k: str(request.path_params[k]) for k in in_path})
        try:
            op: Op[Any] = load(cls, given)  # Any: as above
        except ShapeError as exc:
            raise HTTPProblem(400, exc.message, kind="usage") from None
        session: SessionProtocol = request.app.state.session
        answer = await asyncio.to_thread(session.call, op)
        if isinstance(answer, str):
            return Response(answer, status_code=d.status, media_type=op.media())
        return json_response(dump_as(cls.answer, answer), d.status)

    endpoint.__name__ = cls.__name__
    return endpoint


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPProblem(400, f"the body is not UTF-8 text: {exc.reason}", kind="usage") from exc
