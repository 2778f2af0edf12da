"""The OpenAPI 3.1 document of every route (``GET /openapi.json``), generated, never written.

The schemas are the shapes' own (``wire.components`` over the dataclasses the routes read
and answer with); the paths come from ``ROUTES``, one entry per route: method, path,
summary, parameters, request shape, answers and error statuses. A new field shows up here by
itself; a new route is one more entry (``tests/test_openapi.py`` checks the table against the
app's real routes and the document against real answers).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from .. import __version__
from ..engine.chips import Candidate, Chip, NewChip
from ..engine.conversations import Conversation, ConversationShow
from ..engine.events import WireEvent
from ..engine.reasoners.ollama import ModelInfo
from ..engine.retrieval.report import Search
from ..engine.session import Episode
from ..engine.turns.ask import AskResult
from ..engine.wire import Mode, components
from .shapes import (
    ApiChatRequest,
    AskRequest,
    AutoContinue,
    ChatRequest,
    Error,
    Health,
    PersonasAnswer,
    RenameRequest,
    Soul,
    Stats,
)

JSON = "application/json"
NDJSON = "application/x-ndjson"
SSE = "text/event-stream"
Document = dict[str, Any]

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


@dataclass(frozen=True)
class Param:
    """A path or query parameter; its schema is ``shape``'s."""

    name: str
    where: Literal["path", "query"]
    text: str
    shape: Any = str
    required: bool = False


@dataclass(frozen=True)
class Answer:
    """One answer of a route: a status, the shape of its body in ``media`` (for NDJSON, the
    shape of one line), and the headers it sets."""

    shape: Any
    status: int = 200
    media: str = JSON
    text: str = "OK"
    headers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Route:
    """One route of the API as the document describes it."""

    method: Literal["GET", "POST", "DELETE"]
    path: str
    summary: str
    answers: tuple[Answer, ...]
    params: tuple[Param, ...] = ()
    request: Any = None
    errors: tuple[int, ...] = ()


def ok(shape: Any, status: int = 200) -> tuple[Answer, ...]:
    """The one JSON answer of most routes."""
    return (Answer(shape, status),)


_C = "/v1/conversations/{conversation_id}"
_CID = Param("conversation_id", "path", "id or unique prefix", required=True)
_EVENTS = Answer(WireEvent, media=NDJSON, text="one event a line, as `sadie chat --ndjson`")
_SSE = Answer(
    str,
    media=SSE,
    text="server-sent events: meta, delta…, citations, done (or error); also emotion, status,"
    " context, waiting, thinking, checking, replace. Each data line is the event's"
    " `--ndjson` object without its type (delta: {text})",
)


def _changes(verb: str) -> Route:
    summary = f"{verb.capitalize()} a conversation"
    return Route("POST", f"{_C}/{verb}", summary, ok(Conversation), (_CID,), errors=(404,))


# One entry a route, laid out as a table (the formatter would give each a dozen lines).
# fmt: off
ROUTES: tuple[Route, ...] = (
    Route("POST", "/v1/ask", "Answer one question (one-shot, the persona's stages)",
          ok(AskResult), request=AskRequest, errors=(400, 413, 502, 503)),
    Route("POST", "/v1/chat", "One chat turn, streamed as server-sent events", (_SSE,),
          request=ChatRequest, errors=(400, 404, 413)),
    Route("POST", "/api/chat",
          "One chat turn, streamed as NDJSON; auto_continue answers 202 at once",
          (_EVENTS, Answer(AutoContinue, 202, text="The turn is running", headers=("Location",))),
          request=ApiChatRequest, errors=(400, 404, 413)),
    Route("GET", "/api/chat/{conversation_id}/stream",
          "The latest turn of a conversation from its first event (auto-continue)", (_EVENTS,),
          (Param("conversation_id", "path", "full id", required=True),), errors=(404,)),
    Route("GET", "/v1/conversations", "Conversations, pinned first, then by last activity",
          ok(list[Conversation]),
          (Param("archived", "query", "only archived ones", bool),
           Param("search", "query", "title, summary or messages contain"),
           Param("limit", "query", "at most this many", int))),
    Route("POST", "/v1/conversations/import",
          "Read a JSON export back in, as a new conversation", ok(Conversation, 201),
          request=dict[str, Any], errors=(400, 413)),
    Route("GET", f"{_C}/export", "A conversation as Markdown or as JSON that can be imported again",
          (Answer(str, media="text/markdown"), Answer(dict[str, Any])),
          (_CID, Param("format", "query", "default md", Literal["md", "json"])),
          errors=(400, 404)),
    Route("GET", _C, "A conversation with its messages and chips", ok(ConversationShow), (_CID,),
          errors=(404,)),
    Route("DELETE", _C, "Forget a conversation with its messages and chips", ok(Conversation),
          (_CID,), errors=(404,)),
    *(_changes(verb) for verb in ("pin", "unpin", "archive", "unarchive")),
    Route("POST", f"{_C}/rename", "Rename a conversation", ok(Conversation), (_CID,),
          request=RenameRequest, errors=(400, 404)),
    Route("GET", f"{_C}/chips", "The chips attached to a conversation", ok(list[Chip]), (_CID,),
          errors=(404,)),
    Route("POST", f"{_C}/chips", "Attach a chip", ok(Chip, 201), (_CID,), request=NewChip,
          errors=(400, 404)),
    Route("DELETE", f"{_C}/chips/{{chip_id}}", "Detach a chip", ok(Chip),
          (_CID, Param("chip_id", "path", "chip id or unique prefix", required=True)),
          errors=(404,)),
    Route("GET", "/v1/chips/find", "What can be attached", ok(list[Candidate]),
          (Param("q", "query", "text to look for"),
           Param("kind", "query", "wiki, source, brief, graph_entity, discourse"),
           Param("limit", "query", "default 20", int))),
    Route("GET", "/v1/search", "The chunks retrieval picks, with every channel's score",
          ok(Search),
          (Param("q", "query", "the query", required=True),
           Param("persona", "query", "default: the ask persona"),
           Param("k", "query", "how many chunks (1-100)", int)),
          errors=(400,)),
    Route("GET", "/v1/episodes/{episode_id}", "One note, as a citation opens it", ok(Episode),
          (Param("episode_id", "path", "the episode id", required=True),), errors=(404,)),
    Route("GET", "/v1/soul", "The memory's summary of who the person is", ok(Soul)),
    Route("GET", "/v1/personas", "The personas this memory answers with, and broken files",
          ok(PersonasAnswer)),
    Route("GET", "/v1/stats", "What the memory holds, as `sadie stats --json`", ok(Stats)),
    Route("GET", "/v1/models", "The models the Ollama server has pulled", ok(list[ModelInfo]),
          errors=(502,)),
    Route("GET", "/v1/health", "The server, the model and the memory", ok(Health),
          (Param("model", "query", "check this model (default: the configured)"),
           Param("fresh", "query", "ask the server again now", bool))),
    Route("GET", "/openapi.json", "This description", ok(Document)),
)
# fmt: on


def _shapes() -> list[tuple[Any, Mode]]:
    found: list[tuple[Any, Mode]] = [(Error, "serialization")]
    for route in ROUTES:
        found += [(answer.shape, "serialization") for answer in route.answers]
        found += [(param.shape, "validation") for param in route.params]
        if route.request is not None:
            found.append((route.request, "validation"))
    return found


def _operation(route: Route, schemas: dict[tuple[Any, Mode], Document]) -> Document:
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


@cache
def spec() -> Document:
    """The document (built once per process: the shapes do not change while it runs)."""
    schemas, defs = components(_shapes())
    paths: Document = {}
    for route in ROUTES:
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
