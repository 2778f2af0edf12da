"""The OpenAPI 3.1 description of every route, written by hand (``GET /openapi.json``)."""

from __future__ import annotations

from typing import Any

from .. import __version__


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _errors(*statuses: int) -> dict[str, Any]:
    return {str(s): _json(_ref("Error"), _ERROR_TEXT[s]) for s in statuses}


_ERROR_TEXT = {
    400: "Usage: a malformed body or parameter",
    401: "No or wrong bearer token",
    403: "Foreign Origin or Host",
    404: "Not found",
    413: "Body over 1 MB (an import: over 10 MB)",
    502: "The model failed",
    503: "The memory failed",
}
_COMMON = (401, 403)


def _param(name: str, where: str, schema: dict[str, Any], text: str, required: bool = False):
    return {"name": name, "in": where, "required": required, "schema": schema, "description": text}


_CID = _param("conversation_id", "path", {"type": "string"}, "id or unique prefix", True)
_STR = {"type": "string"}
_OBJ = {"type": "object", "additionalProperties": True}
_TURN_OPTIONS: dict[str, Any] = {
    "regenerate": {
        "type": "boolean",
        "default": False,
        "description": "answer the conversation's last message again (message may be empty)"
        " or, with a message, an edit of it; the old exchange is kept as superseded",
    },
    "model": {"type": "string", "description": "this turn's model (default: the configured)"},
}


def _op(summary: str, responses: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"summary": summary, "responses": {**responses, **_errors(*_COMMON)}, **extra}


def _conversation_action(verb: str) -> dict[str, Any]:
    return {
        "post": _op(
            f"{verb.capitalize()} a conversation",
            {"200": _json(_ref("Conversation")), **_errors(404)},
            parameters=[_CID],
        )
    }


def _schemas() -> dict[str, Any]:
    citation = {
        "type": "object",
        "properties": {
            k: _STR
            for k in (
                "episode_id", "quote", "support", "claimed", "title", "date", "origin", "backs"
            )
        }
        | {"label": _STR, "unbacked": {"type": "array", "items": _STR}},
        "required": ["episode_id", "quote", "support"],
    }
    return {
        "Error": {
            "type": "object",
            "properties": {"error": _STR, "fix": {"type": ["string", "null"]}, "kind": _STR},
            "required": ["error", "kind"],
        },
        "Citation": citation,
        "ModelInfo": {
            "type": "object",
            "properties": {
                "name": _STR,
                "size": {"type": "integer"},
                "family": _STR,
                "parameter_size": _STR,
                "quantization": _STR,
            },
            "required": ["name"],
        },
        "Episode": {
            "type": "object",
            "properties": {k: _STR for k in ("id", "title", "date", "kind", "text")},
            "required": ["id", "title", "date", "kind", "text"],
        },
        "AskRequest": {
            "type": "object",
            "properties": {"question": _STR, "persona": _STR},
            "required": ["question"],
        },
        "AskResult": {
            "type": "object",
            "description": "exactly the object of `sadie --ask --json`",
            "properties": {
                "question": _STR,
                "answer": _STR,
                "citations": {"type": "array", "items": _ref("Citation")},
                "found_by_sadie": {"type": "array", "items": _ref("Citation")},
                "persona": _STR,
                "abstained": {"type": "boolean"},
                "grounding": _OBJ,
                "stages": {"type": "array", "items": _OBJ},
                "reframed_question": {"type": ["string", "null"]},
                "opinion": {"type": ["string", "null"]},
                "emotion": _STR,
                "model": _STR,
                "offline": {"type": "boolean"},
                "chunks_considered": {"type": "integer"},
                "latency_ms": {"type": "number"},
                "notices": {"type": "array", "items": _STR},
            },
        },
        "ChatRequest": {
            "type": "object",
            "properties": {
                "message": _STR,
                "conversation_id": _STR,
                "persona": _STR,
                "chips": {"type": "array", "items": _ref("ChipRef")},
                **_TURN_OPTIONS,
            },
            "required": ["message"],
        },
        "ApiChatRequest": {
            "type": "object",
            "properties": {
                "message": _STR,
                "conversation_id": _STR,
                "persona": _STR,
                "chips": {"type": "array", "items": _ref("ChipRef")},
                "auto_continue": {"type": "boolean", "default": False},
                **_TURN_OPTIONS,
            },
            "required": ["message"],
        },
        "ChipRef": {
            "type": "object",
            "properties": {"kind": _STR, "ref": _STR, "label": _STR},
            "required": ["kind", "ref"],
        },
        "AutoContinue": {
            "type": "object",
            "properties": {"conversation_id": _STR, "message_id": _STR, "stream": _STR},
        },
        "Event": {
            "type": "object",
            "description": "one line of `sadie chat --ndjson`: meta, emotion, status, context, "
            "waiting, thinking, token, checking, citations, replace, done or error",
            "properties": {"type": _STR},
            "required": ["type"],
            "additionalProperties": True,
        },
        "Conversation": {
            "type": "object",
            "properties": {
                "id": _STR,
                "title": _STR,
                "summary": _STR,
                "emotion": {"type": ["string", "null"]},
                "persona": {"type": ["string", "null"]},
                "pinned": {"type": "boolean"},
                "archived": {"type": "boolean"},
                "archived_at": {"type": ["string", "null"]},
                "created_at": _STR,
                "updated_at": _STR,
                "message_count": {"type": "integer"},
            },
        },
        "ConversationShow": {
            "type": "object",
            "description": "as `sadie conversations show --json`",
            "properties": {
                "conversation": _ref("Conversation"),
                "messages": {"type": "array", "items": _OBJ},
                "chips": {"type": "array", "items": _ref("Chip")},
            },
        },
        "Chip": {"type": "object", "description": "as `sadie chips list --json`", **_open()},
        "Candidate": {
            "type": "object",
            "properties": {
                "kind": _STR,
                "ref_id": _STR,
                "label": _STR,
                "snippet": _STR,
                "date": {"type": ["string", "null"]},
            },
        },
        "Search": {"type": "object", "description": "as `sadie search --json`", **_open()},
        "Stats": {"type": "object", "description": "as `sadie stats --json`", **_open()},
        "Health": {
            "type": "object",
            "properties": {
                "ok": {"type": "boolean"},
                "version": _STR,
                "model": _OBJ,
                "memory": _STR,
                "embedder_ready": {"type": "boolean"},
            },
        },
    }


def _open() -> dict[str, Any]:
    return {"additionalProperties": True}


def spec() -> dict[str, Any]:
    sse = {
        "description": "server-sent events: meta, delta…, citations, done (or error); also "
        "emotion, status, context, waiting, thinking, checking, replace",
        "content": {"text/event-stream": {"schema": _STR}},
    }
    ndjson = {
        "description": "one Event a line, as `sadie chat --ndjson`",
        "content": {"application/x-ndjson": {"schema": _ref("Event")}},
    }
    chip_id = _param("chip_id", "path", _STR, "chip id or unique prefix", True)
    paths: dict[str, Any] = {
        "/v1/ask": {
            "post": _op(
                "Answer one question (one-shot, the persona's stages)",
                {"200": _json(_ref("AskResult")), **_errors(400, 413, 502, 503)},
                requestBody=_body(_ref("AskRequest")),
            )
        },
        "/v1/chat": {
            "post": _op(
                "One chat turn, streamed as server-sent events",
                {"200": sse, **_errors(400, 404, 413)},
                requestBody=_body(_ref("ChatRequest")),
            )
        },
        "/api/chat": {
            "post": _op(
                "One chat turn, streamed as NDJSON; auto_continue answers 202 at once",
                {
                    "200": ndjson,
                    "202": {
                        **_json(_ref("AutoContinue"), "The turn is running"),
                        "headers": {"Location": {"schema": _STR}},
                    },
                    **_errors(400, 404, 413),
                },
                requestBody=_body(_ref("ApiChatRequest")),
            )
        },
        "/api/chat/{conversation_id}/stream": {
            "get": _op(
                "The latest turn of a conversation from its first event (auto-continue)",
                {"200": ndjson, **_errors(404)},
                parameters=[_param("conversation_id", "path", _STR, "full id", True)],
            )
        },
        "/v1/conversations": {
            "get": _op(
                "Conversations, pinned first, then by last activity",
                {"200": _json({"type": "array", "items": _ref("Conversation")})},
                parameters=[
                    _param("archived", "query", {"type": "boolean"}, "only archived ones"),
                    _param("search", "query", _STR, "title, summary or messages contain"),
                    _param("limit", "query", {"type": "integer"}, "at most this many"),
                ],
            )
        },
        "/v1/conversations/import": {
            "post": _op(
                "Read a JSON export back in, as a new conversation",
                {"201": _json(_ref("Conversation")), **_errors(400, 413)},
                requestBody=_body(_OBJ),
            )
        },
        "/v1/conversations/{conversation_id}/export": {
            "get": _op(
                "A conversation as Markdown or as JSON that can be imported again",
                {
                    "200": {
                        "description": "OK",
                        "content": {
                            "text/markdown": {"schema": _STR},
                            "application/json": {"schema": _OBJ},
                        },
                    },
                    **_errors(400, 404),
                },
                parameters=[
                    _CID,
                    _param("format", "query", {"enum": ["md", "json"]}, "default md"),
                ],
            )
        },
        "/v1/conversations/{conversation_id}": {
            "get": _op(
                "A conversation with its messages and chips",
                {"200": _json(_ref("ConversationShow")), **_errors(404)},
                parameters=[_CID],
            ),
            "delete": _op(
                "Forget a conversation with its messages and chips",
                {"200": _json(_ref("Conversation")), **_errors(404)},
                parameters=[_CID],
            ),
        },
        **{
            f"/v1/conversations/{{conversation_id}}/{verb}": _conversation_action(verb)
            for verb in ("pin", "unpin", "archive", "unarchive")
        },
        "/v1/conversations/{conversation_id}/rename": {
            "post": _op(
                "Rename a conversation",
                {"200": _json(_ref("Conversation")), **_errors(400, 404)},
                parameters=[_CID],
                requestBody=_body(
                    {"type": "object", "properties": {"title": _STR}, "required": ["title"]}
                ),
            )
        },
        "/v1/conversations/{conversation_id}/chips": {
            "get": _op(
                "The chips attached to a conversation",
                {"200": _json({"type": "array", "items": _ref("Chip")}), **_errors(404)},
                parameters=[_CID],
            ),
            "post": _op(
                "Attach a chip",
                {"201": _json(_ref("Chip")), **_errors(400, 404)},
                parameters=[_CID],
                requestBody=_body(_ref("ChipRef")),
            ),
        },
        "/v1/conversations/{conversation_id}/chips/{chip_id}": {
            "delete": _op(
                "Detach a chip",
                {"200": _json(_ref("Chip")), **_errors(404)},
                parameters=[_CID, chip_id],
            )
        },
        "/v1/chips/find": {
            "get": _op(
                "What can be attached",
                {"200": _json({"type": "array", "items": _ref("Candidate")})},
                parameters=[
                    _param("q", "query", _STR, "text to look for"),
                    _param("kind", "query", _STR, "wiki, source, brief, graph_entity, discourse"),
                    _param("limit", "query", {"type": "integer"}, "default 20"),
                ],
            )
        },
        "/v1/search": {
            "get": _op(
                "The chunks retrieval picks, with every channel's score",
                {"200": _json(_ref("Search")), **_errors(400)},
                parameters=[
                    _param("q", "query", _STR, "the query", True),
                    _param("persona", "query", _STR, "default: the ask persona"),
                    _param("k", "query", {"type": "integer"}, "how many chunks (1-100)"),
                ],
            )
        },
        "/v1/episodes/{episode_id}": {
            "get": _op(
                "One note, as a citation opens it",
                {"200": _json(_ref("Episode")), **_errors(404)},
                parameters=[_param("episode_id", "path", _STR, "the episode id", True)],
            )
        },
        "/v1/soul": {
            "get": _op(
                "The memory's summary of who the person is",
                {"200": _json({"type": "object", "properties": {"text": _STR}})},
            )
        },
        "/v1/stats": {"get": _op("What the memory holds", {"200": _json(_ref("Stats"))})},
        "/v1/personas": {
            "get": _op(
                "The personas (each as its file, with its source), and the files set aside",
                {"200": _json(_OBJ)},
            )
        },
        "/v1/models": {
            "get": _op(
                "The models the Ollama server has pulled",
                {"200": _json({"type": "array", "items": _ref("ModelInfo")}), **_errors(502)},
            )
        },
        "/v1/health": {
            "get": _op(
                "The server, the model and the memory",
                {"200": _json(_ref("Health"))},
                parameters=[
                    _param("model", "query", _STR, "check this model (default: the configured)"),
                    _param("fresh", "query", {"type": "boolean"}, "ask the server again now"),
                ],
            )
        },
        "/openapi.json": {"get": _op("This description", {"200": _json(_OBJ)})},
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "sadie",
            "version": __version__,
            "description": "The HTTP API of `sadie serve`: one memory, many clients.",
        },
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{}, {"bearer": []}],
        "paths": paths,
    }
