"""The memory as Model Context Protocol tools, for the assistants people already use: over
stdio (``sadie mcp``) and over streamable HTTP at ``/mcp`` inside ``sadie serve``.

A face like the others: it talks to a ``SessionProtocol`` (the memory held here, or a client
of the sadie that holds it), never to the store. Tools: ``search_memory``, ``ask_memory``
(the ``--ask --json`` object: policed citations, unsupported details, abstention),
``list_conversations``, ``get_episode``; ``add_note`` only when ``mcp_write = true``. A
failure is a tool error whose text is the one-line message sadie prints elsewhere.

Built on the official SDK's low-level ``Server`` (FastMCP would prefix every error with
"Error executing tool …"); the SDK is imported when a server is made, not with this module.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypedDict, TypeVar

from . import __version__
from .engine.errors import NotFoundError, SadieError, UsageError

if TYPE_CHECKING:
    import mcp.types
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import Receive, Scope, Send

    from .engine.jsonvalue import JSON, JSONObject
    from .engine.session import SessionProtocol

P = ParamSpec("P")
R = TypeVar("R")


class ToolSpec(TypedDict):
    """One tool as ``tools/list`` describes it: what it does, and its input's JSON Schema."""

    description: str
    properties: JSONObject
    required: list[str]


NOTES = "notes"  # the memory's folder for notes added by other assistants
MAX_NOTE = 100_000
INSTRUCTIONS = (
    "One person's own memory: their notes, journal, voice memos and records. search_memory "
    "finds passages; ask_memory answers a question from them with citations sadie has "
    "checked against the notes (a 'verbatim' quote is word for word in the cited note; "
    "'unsupported' lists details of the answer that no shown note holds)."
)

_TEXT: JSONObject = {"type": "string", "minLength": 1}
TOOLS: dict[str, ToolSpec] = {
    "search_memory": {
        "description": "The passages of the memory that best match a query (hybrid retrieval: "
        "vectors, keywords, the people and places named), each with its episode id, date, "
        "title, text and score.",
        "properties": {
            "query": _TEXT,
            "k": {"type": "integer", "minimum": 1, "maximum": 50, "description": "how many"},
        },
        "required": ["query"],
    },
    "ask_memory": {
        "description": "Answer a question from the memory. Returns the answer, citations "
        "policed against the notes, the answer's unsupported details, and whether sadie "
        "abstained for lack of evidence.",
        "properties": {
            "question": _TEXT,
            "persona": {
                "type": "string",
                "description": "analyst (default), coach, friend, skeptic, or one of the "
                "person's own",
            },
        },
        "required": ["question"],
    },
    "list_conversations": {
        "description": "The person's conversations with sadie, pinned first, then recent.",
        "properties": {
            "archived": {"type": "boolean"},
            "search": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500},
        },
        "required": [],
    },
    "get_episode": {
        "description": "One episode (a note, journal entry, memo or record) by its id.",
        "properties": {"id": _TEXT},
        "required": ["id"],
    },
    "add_note": {
        "description": "Add a note to the memory (it is searchable at once).",
        "properties": {"text": _TEXT, "title": {"type": "string"}},
        "required": ["text"],
    },
}


async def _blocking(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """A blocking session call, in a thread (the session's database serialises them)."""
    return await asyncio.to_thread(lambda: fn(*args, **kwargs))


class Tools:
    """The tools over one session; ``write`` adds ``add_note``."""

    def __init__(self, session: SessionProtocol, *, write: bool = False) -> None:
        self.session = session
        self.write = write

    def names(self) -> list[str]:
        return [n for n in TOOLS if n != "add_note" or self.write]

    def definitions(self) -> list[mcp.types.Tool]:
        """The tools as ``tools/list`` describes them."""
        # lazy: mcp.types loads only when definitions runs, off the start-up path
        import mcp.types as types

        return [
            types.Tool(
                name=name,
                description=TOOLS[name]["description"],
                inputSchema={
                    "type": "object",
                    "properties": TOOLS[name]["properties"],
                    "required": TOOLS[name]["required"],
                    "additionalProperties": False,
                },
                annotations=types.ToolAnnotations(
                    readOnlyHint=name != "add_note",
                    destructiveHint=False,
                    idempotentHint=name != "add_note",
                    openWorldHint=False,
                ),
            )
            for name in self.names()
        ]

    async def call(self, name: str, args: Mapping[str, object]) -> JSONObject:
        """One tool's structured answer; a ``SadieError`` when it cannot give one."""
        if name == "add_note" and not self.write:
            raise UsageError(
                "add_note is off: other assistants may only read this memory",
                fix="set mcp_write = true in config.toml to let them add notes",
            )
        if name not in TOOLS:
            raise UsageError(f"no tool {name!r}; the tools are {', '.join(self.names())}")
        answer: JSONObject = await getattr(self, name)(**args)
        return answer

    async def search_memory(self, query: str, k: int | None = None) -> JSONObject:
        found = (await _blocking(self.session.search, query, k=k)).as_json()
        keep = ("rank", "episode_id", "date", "title", "kind", "text")
        listed = found.get("chunks")
        chunks: list[JSON] = [
            {**{key: c.get(key) for key in keep}, "score": _score(c.get("final"))}
            for c in (listed if isinstance(listed, list) else [])
            if isinstance(c, dict)
        ]
        return {
            "query": query,
            "persona": found.get("persona"),
            "window": found.get("window"),
            "notices": found.get("notices") or [],
            "chunks": chunks,
        }

    async def ask_memory(self, question: str, persona: str | None = None) -> JSONObject:
        result = await self.session.ask(question, persona=persona)
        return result.as_json()

    async def list_conversations(
        self, archived: bool = False, search: str | None = None, limit: int | None = 50
    ) -> JSONObject:
        found = await _blocking(
            self.session.conversations, archived=archived, search=search or None, limit=limit
        )
        return {"conversations": [c.to_json() for c in found]}

    async def get_episode(self, id: str) -> JSONObject:
        episode = await _blocking(self.session.episode, id.strip())
        if episode is None:
            raise NotFoundError(f"no episode {id.strip()!r} in this memory")
        return {
            "id": episode.id,
            "title": episode.title,
            "date": episode.date,
            "kind": episode.kind,
            "text": episode.text,
        }

    async def add_note(self, text: str, title: str | None = None) -> JSONObject:
        return await _blocking(add_note, self.session, text, title)


def add_note(session: SessionProtocol, text: str, title: str | None = None) -> JSONObject:
    """Write the note into the memory's ``notes`` folder and ingest that file (the path every
    note takes: ``Session.ingest``). A note that does not go in leaves no file behind."""
    # lazy: yaml loads only when add_note runs, off the start-up path
    import yaml

    # lazy: engine.ingest.readers loads only when add_note runs, off the start-up path
    from .engine.ingest.readers import episode_id
    from .engine.titles import make_title
    from .paths import make_private_folder, write_private

    text = text.strip()
    if not text:
        raise UsageError("the note is empty")
    if len(text) > MAX_NOTE:
        raise UsageError(f"the note is longer than {MAX_NOTE:,} characters")
    title = " ".join((title or "").split()) or make_title(text)
    now = datetime.now()
    folder = session.home / NOTES
    make_private_folder(folder)
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40] or "note"
    path = _free(folder / f"{now:%Y-%m-%d-%H%M%S}-{slug}.md")
    front = {"title": title, "date": now.isoformat(timespec="seconds"), "kind": "note"}
    header = yaml.safe_dump(front, allow_unicode=True, sort_keys=False)
    write_private(path, f"---\n{header}---\n{text}\n")
    try:
        report = session.ingest([path])
        if report.skipped:
            raise UsageError(f"the note was not taken: {report.skipped[0].reason}")
        episode = session.episode(episode_id(str(path.resolve())))
        if episode is None:
            raise SadieError("the note was written but is not in the memory")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return {"id": episode.id, "title": episode.title, "date": episode.date, "path": str(path)}


def _score(value: JSON) -> float:
    """A chunk's final score to four places (0 when it has none)."""
    return round(float(value), 4) if isinstance(value, (int, float)) else 0.0


def _free(path: Path) -> Path:
    n = 1
    while path.exists():
        n += 1
        path = path.with_name(f"{path.stem.rsplit('~', 1)[0]}~{n}{path.suffix}")
    return path


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
