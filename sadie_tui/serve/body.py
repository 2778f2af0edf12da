"""Reading a request: a JSON object body of at most ``MAX_BODY`` bytes (a route may allow
more: an import takes an export's own limit) read as its shape (``serve.shapes``), and typed
query parameters, each failure a 400 (or 413) with the API's error shape."""

from __future__ import annotations

import json
from typing import TypeVar

from starlette.requests import ClientDisconnect, Request

from ..engine.jsonvalue import JSON, JSONObject
from ..engine.wire import ShapeError, load
from .errors import HTTPProblem

T = TypeVar("T")

MAX_BODY = 1024 * 1024
MAX_DEPTH = 32  # a request body nests a few levels (chips: 3); the ingest's JSONL bound


def _bad(message: str) -> HTTPProblem:
    return HTTPProblem(400, message, kind="usage")


async def raw_body(request: Request, limit: int = MAX_BODY) -> bytes:
    """The body's bytes, refused with 413 as soon as they pass ``limit``."""
    declared = request.headers.get("content-length")
    # ASCII digits only: "²".isdigit() is true, yet int("²") fails.
    if declared and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    data = bytearray()
    try:
        async for chunk in request.stream():
            data.extend(chunk)
            if len(data) > limit:
                raise _too_large(limit)
    except ClientDisconnect:
        # Nobody is left to answer; a refusal, not a crash logged with its traceback.
        raise _bad("the client hung up before the body ended") from None
    return bytes(data)


async def json_body(request: Request) -> JSONObject:
    data = await raw_body(request)
    if not data.strip():
        return {}
    try:
        value = json.loads(data)
    except RecursionError:  # the decoder's own limit, far past ours
        raise _bad(f"the body nests more than {MAX_DEPTH} levels deep") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise _bad(f"the body is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise _bad("the body must be a JSON object")
    _check_text(value)
    return value


def _check_text(value: JSON) -> None:
    """Refuse a body nested more than ``MAX_DEPTH`` deep or holding a string that is not text:
    JSON may escape half a surrogate pair (``"\\ud800"``), which no database, tokenizer or
    UTF-8 stream takes. Without recursion: the decoder's own limit is far deeper."""
    todo: list[tuple[JSON, int]] = [(value, 0)]
    while todo:
        item, depth = todo.pop()
        if depth > MAX_DEPTH:
            raise _bad(f"the body nests more than {MAX_DEPTH} levels deep")
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise _bad("the body holds a lone surrogate (such as \\ud800): not text") from None
        elif isinstance(item, dict):
            todo.extend((part, depth + 1) for pair in item.items() for part in pair)
        elif isinstance(item, list):
            todo.extend((part, depth + 1) for part in item)


def _too_large(limit: int) -> HTTPProblem:
    return HTTPProblem(413, f"the body is larger than {limit} bytes", kind="too_large")


async def body_as(request: Request, shape: type[T]) -> T:
    """The body read as the request ``shape`` (``serve.shapes``): besides ``json_body``'s
    refusals, a field missing, of the wrong type or empty is a 400 naming it (``'question' is
    required``, ``'chips[0].kind' is empty``)."""
    body = await json_body(request)
    try:
        return load(shape, body)
    except ShapeError as exc:
        raise _bad(exc.message) from None


def query_int(request: Request, name: str, *, low: int = 1, high: int = 1000) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError as exc:
        raise _bad(f"{name!r} must be an integer") from exc
    if not low <= value <= high:
        raise _bad(f"{name!r} must be between {low} and {high}")
    return value


def query_bool(request: Request, name: str) -> bool:
    raw = (request.query_params.get(name) or "").lower()
    if raw in ("", "0", "false", "no"):
        return False
    if raw in ("1", "true", "yes"):
        return True
    raise _bad(f"{name!r} must be true or false")
