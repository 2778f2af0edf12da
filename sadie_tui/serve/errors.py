"""Every failure as one JSON shape (``shapes.Error``: ``{"error", "fix", "kind"}``), with a
status from its kind."""

from __future__ import annotations

import json
from collections.abc import Mapping

from starlette.responses import Response

from ..engine.errors import (
    ConfigError,
    ErrorKind,
    ModelError,
    NotFoundError,
    SadieError,
    StorageError,
    UsageError,
)
from ..engine.wire import dump
from .shapes import Error

# An error event's ``code`` (``ErrorKind``) → the HTTP status of a request that failed with it.
STATUS_FOR_KIND: dict[str, int] = {
    ErrorKind.USAGE: 400,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.STORAGE: 503,
    ErrorKind.MODEL: 502,
    ErrorKind.UNREACHABLE: 502,
    ErrorKind.MODEL_MISSING: 502,
    ErrorKind.TIMEOUT: 504,
    ErrorKind.STREAM: 502,
    ErrorKind.NO_ANSWER: 502,
    ErrorKind.FAILURE: 500,
}


class HTTPProblem(Exception):
    """A request the API refuses before the session sees it (auth, origin, body)."""

    def __init__(self, status: int, message: str, *, kind: str, fix: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.kind, self.fix = status, message, kind, fix


def kind_of(exc: SadieError) -> str:
    code = getattr(exc, "code", None)
    if isinstance(code, str):
        return str(code)
    if isinstance(exc, UsageError | ConfigError):
        return ErrorKind.USAGE.value
    if isinstance(exc, NotFoundError):
        return ErrorKind.NOT_FOUND.value
    if isinstance(exc, StorageError):
        return ErrorKind.STORAGE.value
    if isinstance(exc, ModelError):
        return ErrorKind.MODEL.value
    return ErrorKind.FAILURE.value


def json_response(
    data: object, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    """JSON as the CLI prints it (``ensure_ascii=False``, dates as strings)."""
    body = json.dumps(data, ensure_ascii=False, default=str)
    return Response(body, status, headers=headers, media_type="application/json")


def error_response(
    status: int,
    message: str,
    *,
    kind: str,
    fix: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    return json_response(dump(Error(message, fix, kind)), status, headers)


def sadie_error_response(exc: SadieError) -> Response:
    kind = kind_of(exc)
    return error_response(STATUS_FOR_KIND.get(kind, 500), exc.message, kind=kind, fix=exc.fix)


def problem_response(exc: HTTPProblem) -> Response:
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    return error_response(exc.status, exc.message, kind=exc.kind, fix=exc.fix, headers=headers)
