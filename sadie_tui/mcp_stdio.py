"""The stdio transport of `sadie mcp`, answering every line: the SDK's own reads each line
with pydantic and hands what does not validate to the server as an exception, which answers
nothing for its id (the client waits for ever) and prints a multi-line dump on stderr.

Here each line is read first: JSON that does not parse is answered ``-32700``; lone surrogates
(valid JSON, not UTF-8) become U+FFFD; a request whose ``params`` is not an object, or does not
fit its method, is answered ``-32602``, an unknown method ``-32601``, anything else that is not
a JSON-RPC message ``-32600``, each with a one-line message. Only what validates reaches the
server. A notification that does not is dropped (JSON-RPC answers no notification).
"""

from __future__ import annotations

import json
import re
import sys
import typing
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
_SURROGATE = re.compile("[\ud800-\udfff]")


def mend(value: Any) -> Any:  # Any: whatever json.loads returned
    """``value`` with every lone surrogate in its strings (keys too) made U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [mend(v) for v in value]
    if isinstance(value, dict):
        return {mend(k): mend(v) for k, v in value.items()}
    return value


def _methods() -> frozenset[str]:
    """The request methods a client may send, from the SDK's own ``ClientRequest``."""
    # lazy: the MCP SDK loads only when `sadie mcp` runs
    import mcp.types as types

    union = types.ClientRequest.model_fields["root"].annotation
    return frozenset(
        name
        for request in typing.get_args(union)
        for name in typing.get_args(request.model_fields["method"].annotation)
    )


def _error(rid: object, code: int, message: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def _first_problem(exc: Exception) -> str:
    """A pydantic error's first problem on one line (where, and what)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        found = errors()
        if found:
            where = ".".join(str(p) for p in found[0].get("loc", ()))
            return f"{where}: {found[0].get('msg', '')}".strip(": ")
    return " ".join(str(exc).split())[:200]


def screen(line: str, methods: frozenset[str]) -> tuple[SessionMessage | None, dict | None]:
    """(the message for the server, or None; the answer to write back at once, or None)."""
    # lazy: the MCP SDK and pydantic load only when `sadie mcp` runs
    import mcp.types as types
    from mcp.shared.message import SessionMessage
    from pydantic import ValidationError

    if not line.strip():
        return None, None
    try:
        raw = mend(json.loads(line))
    except ValueError as exc:
        return None, _error(None, PARSE_ERROR, f"Parse error: {' '.join(str(exc).split())}")
    if not isinstance(raw, dict):
        return None, _error(None, INVALID_REQUEST, "Invalid Request: not a JSON object")
    rid = raw.get("id")
    request = "method" in raw and isinstance(rid, str | int) and not isinstance(rid, bool)
    answer_to = rid if request else None
    if "method" in raw:
        method = raw["method"]
        if "params" in raw and raw["params"] is not None and not isinstance(raw["params"], dict):
            problem = "Invalid params: params must be an object"
            return None, _error(answer_to, INVALID_PARAMS, problem) if request else None
        if request and method not in methods:
            return None, _error(rid, METHOD_NOT_FOUND, f"Method not found: {method}")
        if request:
            try:
                types.ClientRequest.model_validate(
                    {"method": method, **({"params": raw["params"]} if "params" in raw else {})}
                )
            except ValidationError as exc:
                return None, _error(rid, INVALID_PARAMS, f"Invalid params: {_first_problem(exc)}")
    try:
        message = types.JSONRPCMessage.model_validate(raw)
    except ValidationError as exc:
        if "method" in raw and not request:
            return None, None  # a notification: never answered
        valid = isinstance(rid, str | int) and not isinstance(rid, bool)
        problem = f"Invalid Request: {_first_problem(exc)}"
        return None, _error(rid if valid else None, INVALID_REQUEST, problem)
    return SessionMessage(message), None


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """The (read, write) streams of the MCP server over this process's stdin and stdout."""
    # lazy: anyio and the MCP SDK load only when `sadie mcp` runs
    import anyio
    import anyio.lowlevel
    from mcp.shared.message import SessionMessage

    stdin = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="replace"))
    methods = _methods()
    lock = anyio.Lock()
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def put(text: str) -> None:
        async with lock:
            await stdout.write(text + "\n")
            await stdout.flush()

    async def reader() -> None:
        try:
            async with read_writer:
                async for line in stdin:
                    message, answer = screen(line, methods)
                    if answer is not None:
                        await put(json.dumps(answer, ensure_ascii=False))
                    if message is not None:
                        await read_writer.send(message)
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async def writer() -> None:
        try:
            async with write_reader:
                async for sent in write_reader:
                    await put(sent.message.model_dump_json(by_alias=True, exclude_none=True))
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        yield read_stream, write_stream
