"""The memory as Model Context Protocol tools, for the assistants people already use: over
stdio (``sadie mcp``) and over streamable HTTP at ``/mcp`` inside ``sadie serve``.

A face like the others: it talks to a ``SessionProtocol`` (the memory held here, or a client
of the sadie that holds it), never to the store. The tools are the operations of the door's
table marked with a ``Tool`` (``engine.operations``: ``search_memory``,
``list_conversations``, ``get_episode``; ``add_note`` only when ``mcp_write = true``), each
with its request shape's own input schema, so HTTP and MCP take the same fields within the
same bounds; and ``ask_memory`` (the ``--ask --json`` object: policed citations, unsupported
details, abstention). A failure is a tool error whose text is the one-line message sadie
prints elsewhere.

Built on the official SDK's low-level ``Server`` (FastMCP would prefix every error with
"Error executing tool …"); the SDK is imported when a server is made, not with this module.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import __version__
from .engine.door import OPERATIONS, Op
from .engine.errors import SadieError, UsageError
from .engine.operations import AskRequest
from .engine.wire import dump_as, load, schema_of

if TYPE_CHECKING:
    import mcp.types
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import Receive, Scope, Send

    from .engine.jsonvalue import JSONObject
    from .engine.session import SessionProtocol

ASK = "ask_memory"
ASK_TEXT = (
    "Answer a question from the memory. Returns the answer, citations policed against the "
    "notes, the answer's unsupported details, and whether sadie abstained for lack of "
    "evidence. persona: analyst (default), coach, friend, skeptic, or one of the person's own."
)
INSTRUCTIONS = (
    "One person's own memory: their notes, journal, voice memos and records. search_memory "
    "finds passages; ask_memory answers a question from them with citations sadie has "
    "checked against the notes (a 'verbatim' quote is word for word in the cited note; "
    "'unsupported' lists details of the answer that no shown note holds)."
)


def _tools() -> dict[str, type[Op[Any]]]:  # Any: operations of every answer
    """The table's operations offered as tools (``engine.operations``), by tool name."""
    found: dict[str, type[Op[Any]]] = {}  # Any: as above
    for cls in OPERATIONS.values():
        if cls.declared.tool is not None:
            found[cls.declared.tool.name] = cls
    return found


def input_schema(shape: object) -> JSONObject:
    """A tool's input schema: its request shape's own (``wire``), as HTTP reads it too."""
    schema: JSONObject = {**schema_of(shape, "validation"), "additionalProperties": False}
    schema.pop("title", None)
    schema.pop("description", None)
    return schema


class Tools:
    """The tools over one session; ``write`` adds those that change the memory."""

    def __init__(self, session: SessionProtocol, *, write: bool = False) -> None:
        self.session = session
        self.write = write

    def names(self) -> list[str]:
        return [ASK, *(name for name, cls in _tools().items() if self._allowed(cls))]

    def _allowed(self, cls: type[Op[Any]]) -> bool:  # Any: an operation of any answer
        tool = cls.declared.tool
        return tool is not None and (self.write or not tool.writes)

    def definitions(self) -> list[mcp.types.Tool]:
        """The tools as ``tools/list`` describes them."""
        # lazy: mcp.types loads only when definitions runs, off the start-up path
        import mcp.types as types

        tools = _tools()
        found = []
        for name in self.names():
            cls = tools.get(name)
            tool = cls.declared.tool if cls is not None else None
            writes = tool is not None and tool.writes
            found.append(
                types.Tool(
                    name=name,
                    description=tool.description if tool is not None else ASK_TEXT,
                    inputSchema=input_schema(cls if cls is not None else AskRequest),
                    annotations=types.ToolAnnotations(
                        readOnlyHint=not writes,
                        destructiveHint=False,
                        idempotentHint=not writes,
                        openWorldHint=False,
                    ),
                )
            )
        return found

    async def call(self, name: str, args: Mapping[str, object]) -> JSONObject:
        """One tool's structured answer; a ``SadieError`` when it cannot give one (arguments
        that do not fit the tool's shape: the one line HTTP gives for them)."""
        if name == ASK:
            asked: AskRequest = load(AskRequest, dict(args))
            result = await self.session.ask(asked.question, persona=asked.persona)
            return result.as_json()
        cls = _tools().get(name)
        if cls is None:
            raise UsageError(f"no tool {name!r}; the tools are {', '.join(self.names())}")
        if not self._allowed(cls):
            raise UsageError(
                f"{name} is off: other assistants may only read this memory",
                fix="set mcp_write = true in config.toml to let them add notes",
            )
        op: Op[Any] = load(cls, dict(args))  # Any: as above
        answer = await asyncio.to_thread(self.session.call, op)
        tool = cls.declared.tool
        if tool is not None and tool.present is not None:
            return tool.present(answer)
        data: JSONObject = dump_as(cls.answer, answer)
        return data


def build_server(session: SessionProtocol, *, write: bool = False) -> Server:
    """The MCP server over ``session``: its tools listed and called, errors as tool errors."""
    # lazy: mcp.types loads only when build_server runs, off the start-up path
    import mcp.types as types
    from mcp.server.lowlevel import Server

    # The SDK's warnings are its own lines ("Tool 'add_note' not listed, no validation will
    # be performed" for a call of a tool that is off): the client gets the tool error instead.
    logging.getLogger("mcp").setLevel(logging.ERROR)
    tools = Tools(session, write=write)
    server: Server = Server("sadie", version=__version__, instructions=INSTRUCTIONS)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return tools.definitions()

    @server.call_tool()
    async def call_tool(
        name: str,
        arguments: dict[str, Any],  # Any: the SDK's CallToolRequest arguments, as it types them
    ) -> JSONObject | types.CallToolResult:
        try:
            return await tools.call(name, arguments)
        except SadieError as exc:
            text = types.TextContent(type="text", text=exc.one_line())
            return types.CallToolResult(content=[text], isError=True)

    return server


async def run_stdio(session: SessionProtocol, *, write: bool = False) -> None:
    """Serve ``session`` on stdin/stdout until the client closes them."""
    # lazy: the transport (and the SDK) load only when run_stdio runs, off the start-up path
    from .mcp_stdio import stdio_transport

    server = build_server(session, write=write)
    async with stdio_transport() as (read, written):
        await server.run(read, written, server.create_initialization_options())


class HttpEndpoint:
    """The streamable HTTP transport as an ASGI app (``sadie serve`` mounts it at ``/mcp``,
    behind its guard). Built on its first request: the SDK costs ~0.3 s to import, which
    a server that never sees an MCP client should not pay. ``close`` ends it (the app's
    lifespan calls it on shutdown)."""

    def __init__(self, session: SessionProtocol) -> None:
        self.session = session
        self._manager: StreamableHTTPSessionManager | None = None
        self._lock = asyncio.Lock()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = await self._started()
        await manager.handle_request(scope, receive, send)

    async def _started(self) -> StreamableHTTPSessionManager:
        async with self._lock:
            if self._manager is None:
                # lazy: mcp.server.streamable_http_manager loads only when _started runs, off the start-up path
                from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

                write = bool(getattr(self.session.settings, "mcp_write", False))
                manager = StreamableHTTPSessionManager(
                    build_server(self.session, write=write), stateless=True, json_response=True
                )
                ready = asyncio.Event()
                task = asyncio.create_task(self._run(manager, ready))
                await ready.wait()
                if task.done():
                    task.result()  # it could not start: its error, for this request
                self._task, self._manager = task, manager
            return self._manager

    async def _run(self, manager: StreamableHTTPSessionManager, ready: asyncio.Event) -> None:
        # The SDK's task group is entered and left in this one task, as anyio requires.
        try:
            async with manager.run():
                ready.set()
                await self._stop.wait()
        finally:
            ready.set()

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task
