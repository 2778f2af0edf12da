"""The API's own shapes: request bodies and the answers that are not an engine type.

Declared once as dataclasses, like the engine's: the routes read bodies with
``body.parse(request, Shape)``, ``RemoteSession`` writes them with ``wire.dump`` and reads
the answers with ``wire.load``, and the OpenAPI document takes their schemas from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import StrictBool

from ..engine.chips import NewChip
from ..engine.context import ModelStatus
from ..engine.jsonvalue import JSONObject
from ..engine.operations import AskRequest as AskRequest  # re-exported: routes, client
from ..engine.stats import Stats as Stats  # re-exported: routes and client name it here


# -- requests --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChatRequest:
    """``POST /v1/chat``: one chat turn. ``message`` may be empty only with ``regenerate``
    (answer the conversation's last message again; with a message, an edit of it: the old
    exchange is kept as superseded); ``model``: this turn's model instead of the configured
    one; ``chips``: attached before the turn reads the conversation's chips."""

    message: str | None = None
    conversation_id: str | None = None
    persona: str | None = None
    chips: list[NewChip] | None = None
    regenerate: StrictBool = False
    model: str | None = None


@dataclass(frozen=True)
class ApiChatRequest(ChatRequest):
    """``POST /api/chat``: a chat turn as NDJSON; ``auto_continue`` answers 202 at once and
    the turn runs on, to be followed at ``/api/chat/{conversation_id}/stream``."""

    auto_continue: StrictBool = False


@dataclass(frozen=True)
class Error:
    """Every failure: what went wrong, how to fix it when there is a way, and its kind (the
    error event's ``code``: usage, not_found, storage, model, …)."""

    error: str
    fix: str | None
    kind: str


@dataclass(frozen=True)
class AutoContinue:
    """``POST /api/chat`` with ``auto_continue``: the turn is running; follow ``stream``."""

    conversation_id: str
    message_id: str
    stream: str


@dataclass(frozen=True)
class Health:
    """``GET /v1/health``: the server, the model it would answer with, and the memory."""

    ok: bool
    version: str
    model: ModelStatus
    memory: str
    embedder_ready: bool


@dataclass(frozen=True)
class PersonaFault:
    """A persona file that did not load, and why, in one line."""

    path: str
    reason: str


@dataclass(frozen=True)
class PersonasAnswer:
    """``GET /v1/personas``: the personas this holder answers with, each in its file's own
    shape (``engine.personas.persona_json``), and the persona files that failed to load."""

    personas: list[JSONObject]
    problems: list[PersonaFault]
