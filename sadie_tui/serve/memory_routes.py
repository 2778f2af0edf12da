"""Conversations, chips, search, stats, personas, health, beliefs and the soul summary: each a
blocking session call, run in a thread (the session's database serialises its statements)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import Literal, ParamSpec, TypeVar

from starlette.requests import Request
from starlette.responses import Response

from .. import __version__
from ..engine.chips import Candidate, Chip, NewChip
from ..engine.conversations import Conversation, ConversationShow
from ..engine.conversations.export_format import MAX_EXPORT_BYTES
from ..engine.jsonvalue import JSONObject
from ..engine.reasoners.ollama import ModelInfo
from ..engine.reflect.beliefs import ORIGINS, STATUSES, Belief, BeliefDetail
from ..engine.reflect.soul import SoulSuggestion
from ..engine.retrieval.report import Search
from ..engine.session import Episode, SessionProtocol
from ..engine.wire import dump, dump_each
from .body import body_as, query_bool, query_int, raw_body
from .errors import HTTPProblem, error_response, json_response
from .routing import Answer, Api, Handler, Param, Route, ok
from .shapes import (
    BeliefDecision,
    BeliefEdit,
    Health,
    PersonasAnswer,
    RenameRequest,
    Soul,
    SoulText,
    Stats,
)

T = TypeVar("T")
P = ParamSpec("P")
api = Api()
_C = "/v1/conversations/{conversation_id}"
_CID = Param("conversation_id", "path", "id or unique prefix", required=True)


def _session(request: Request) -> SessionProtocol:
    return request.app.state.session


async def blocking(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    return await asyncio.to_thread(partial(fn, *args, **kwargs))


def _cid(request: Request) -> str:
    return str(request.path_params["conversation_id"])


# -- conversations -------------------------------------------------------------------------
@api.get(
    "/v1/conversations",
    "Conversations, pinned first, then by last activity",
    ok(list[Conversation]),
    (
        Param("archived", "query", "only archived ones", bool),
        Param("search", "query", "title, summary or messages contain"),
        Param("limit", "query", "at most this many", int),
    ),
)
async def list_conversations(request: Request) -> Response:
    found = await blocking(
        _session(request).conversations,
        archived=query_bool(request, "archived"),
        search=request.query_params.get("search") or None,
        limit=query_int(request, "limit", high=10_000),
    )
    return json_response(dump_each(found))


def _show(session: SessionProtocol, conversation_id: str) -> JSONObject:
    c = session.conversation(conversation_id)
    return dump(ConversationShow(c, session.messages(c.id), session.chips(c.id)))


@api.get(
    _C, "A conversation with its messages and chips", ok(ConversationShow), (_CID,), errors=(404,)
)
async def show_conversation(request: Request) -> Response:
    return json_response(await blocking(_show, _session(request), _cid(request)))


def _changed(action: str) -> Handler:
    """``POST …/pin|unpin|archive|unarchive``: the change, then the conversation as it is."""

    def change(session: SessionProtocol, cid: str) -> JSONObject:
        c = session.conversation(cid)
        if action in ("pin", "unpin"):
            session.pin(c.id, action == "pin")
        else:
            session.archive(c.id, action == "archive")
        return dump(session.conversation(c.id))

    async def endpoint(request: Request) -> Response:
        return json_response(await blocking(change, _session(request), _cid(request)))

    return endpoint


@api.route(
    "POST",
    f"{_C}/rename",
    "Rename a conversation",
    ok(Conversation),
    (_CID,),
    request=RenameRequest,
    errors=(400, 404),
)
async def rename_conversation(request: Request) -> Response:
    title = (await body_as(request, RenameRequest)).title
    session = _session(request)

    def rename(cid: str) -> JSONObject:
        c = session.conversation(cid)
        session.rename(c.id, title)
        return dump(session.conversation(c.id))

    return json_response(await blocking(rename, _cid(request)))


@api.route(
    "DELETE",
    _C,
    "Forget a conversation with its messages and chips",
    ok(Conversation),
    (_CID,),
    errors=(404,),
)
async def forget_conversation(request: Request) -> Response:
    session = _session(request)

    def forget(cid: str) -> JSONObject:
        c = session.conversation(cid)
        session.forget(c.id)
        return dump(c)

    return json_response(await blocking(forget, _cid(request)))


EXPORT_TYPES = {"md": "text/markdown; charset=utf-8", "json": "application/json"}


@api.get(
    f"{_C}/export",
    "A conversation as Markdown or as JSON that can be imported again",
    (Answer(str, media="text/markdown"), Answer(dict[str, object])),
    (_CID, Param("format", "query", "default md", Literal["md", "json"])),
    errors=(400, 404),
)
async def export_conversation(request: Request) -> Response:
    """``GET …/export?format=md|json``: the text ``sadie conversations export`` writes."""
    fmt = request.query_params.get("format", "md")
    if fmt not in EXPORT_TYPES:
        raise HTTPProblem(400, "'format' must be md or json", kind="usage")
    text = await blocking(_session(request).export, _cid(request), fmt)
    return Response(text, media_type=EXPORT_TYPES[fmt])


@api.route(
    "POST",
    "/v1/conversations/import",
    "Read a JSON export back in, as a new conversation",
    ok(Conversation, 201),
    request=dict[str, object],  # an export file, read by the engine as it came
    errors=(400, 413),
)
async def import_conversation(request: Request) -> Response:
    """``POST /v1/conversations/import`` with a JSON export as the body: a new conversation.
    The body goes to the engine as it came, so a malformed file gets the CLI's own error; it
    may be as large as an export file the CLI imports (``MAX_EXPORT_BYTES``)."""
    data = await raw_body(request, MAX_EXPORT_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPProblem(400, f"the export is not UTF-8 text: {exc.reason}", kind="usage") from exc
    c = await blocking(_session(request).import_conversation, text)
    return json_response(dump(c), 201)


# -- chips ---------------------------------------------------------------------------------
@api.get(
    f"{_C}/chips", "The chips attached to a conversation", ok(list[Chip]), (_CID,), errors=(404,)
)
async def list_chips(request: Request) -> Response:
    found = await blocking(_session(request).chips, _cid(request))
    return json_response(dump_each(found))


@api.route(
    "POST",
    f"{_C}/chips",
    "Attach a chip",
    ok(Chip, 201),
    (_CID,),
    request=NewChip,
    errors=(400, 404),
)
async def add_chip(request: Request) -> Response:
    new = await body_as(request, NewChip)
    chip = await blocking(
        _session(request).add_chip, _cid(request), new.kind, new.ref, label=new.label
    )
    return json_response(dump(chip), 201)


@api.route(
    "DELETE",
    f"{_C}/chips/{{chip_id}}",
    "Detach a chip",
    ok(Chip),
    (_CID, Param("chip_id", "path", "chip id or unique prefix", required=True)),
    errors=(404,),
)
async def remove_chip(request: Request) -> Response:
    chip = await blocking(
        _session(request).remove_chip, _cid(request), str(request.path_params["chip_id"])
    )
    return json_response(dump(chip))


@api.get(
    "/v1/chips/find",
    "What can be attached",
    ok(list[Candidate]),
    (
        Param("q", "query", "text to look for"),
        Param("kind", "query", "wiki, source, brief, graph_entity, discourse, record"),
        Param("limit", "query", "default 20", int),
    ),
)
async def find_chips(request: Request) -> Response:
    found = await blocking(
        _session(request).find_attachable,
        request.query_params.get("q", ""),
        kind=request.query_params.get("kind") or None,
        limit=query_int(request, "limit", high=500) or 20,
    )
    return json_response(dump_each(found))


# -- the memory ----------------------------------------------------------------------------
@api.get(
    "/v1/search",
    "The chunks retrieval picks, with every channel's score",
    ok(Search),
    (
        Param("q", "query", "the query", required=True),
        Param("persona", "query", "default: the ask persona"),
        Param("k", "query", "how many chunks (1-100)", int),
    ),
    errors=(400,),
)
async def search(request: Request) -> Response:
    query = request.query_params.get("q", "")
    if not query.strip():
        raise HTTPProblem(400, "'q' is required", kind="usage")
    found = await blocking(
        _session(request).search,
        query,
        persona=request.query_params.get("persona") or None,
        k=query_int(request, "k", high=100),
    )
    return json_response(dump(found))


@api.get(
    "/v1/episodes/{episode_id}",
    "One note, as a citation opens it",
    ok(Episode),
    (Param("episode_id", "path", "the episode id", required=True),),
    errors=(404,),
)
async def episode(request: Request) -> Response:
    """``GET /v1/episodes/{episode_id}``: one note as a citation opens it."""
    found = await blocking(_session(request).episode, str(request.path_params["episode_id"]))
    if found is None:
        return error_response(404, "no such episode in this memory", kind="not_found")
    return json_response(dump(found))


@api.get("/v1/soul", "The memory's summary of who the person is", ok(Soul))
async def soul(request: Request) -> Response:
    """``GET /v1/soul``: the summary of who the person is, as the memory keeps it."""
    return json_response(dump(Soul(await blocking(_session(request).soul))))


@api.get("/v1/stats", "What the memory holds, as `sadie stats --json`", ok(Stats))
async def stats(request: Request) -> Response:
    return json_response(dump(await blocking(_session(request).stats)))


@api.get(
    "/v1/personas", "The personas this memory answers with, and broken files", ok(PersonasAnswer)
)
async def personas(request: Request) -> Response:
    """``GET /v1/personas``: the personas this holder answers with, and the persona files it
    set aside (``Personas.to_json``)."""
    return json_response((await blocking(_session(request).personas)).to_json())


@api.get(
    "/v1/models", "The models the Ollama server has pulled", ok(list[ModelInfo]), errors=(502,)
)
async def models(request: Request) -> Response:
    """``GET /v1/models``: the models the holder's Ollama server has pulled."""
    return json_response(dump_each(await _session(request).models()))


@api.get(
    "/v1/health",
    "The server, the model and the memory",
    ok(Health),
    (
        Param("model", "query", "check this model (default: the configured)"),
        Param("fresh", "query", "ask the server again now", bool),
    ),
)
async def health(request: Request) -> Response:
    session = _session(request)
    model = await session.check_model(
        fresh=query_bool(request, "fresh"), model=request.query_params.get("model") or None
    )
    found = Health(True, __version__, model, str(session.home), session.embedder_ready)
    return json_response(dump(found))


# -- the learning loop ---------------------------------------------------------------------
_B = "/v1/beliefs/{belief_id}"
_BID = Param("belief_id", "path", "id or unique prefix", required=True)


def _bid(request: Request) -> str:
    return str(request.path_params["belief_id"])


@api.get(
    "/v1/beliefs",
    "Every belief, accepted first, most confident first (as `sadie beliefs list --json`)",
    ok(list[Belief]),
    (
        Param("status", "query", "only this status", Literal[STATUSES]),
        Param("origin", "query", "stated or derived", Literal[ORIGINS]),
    ),
    errors=(400,),
)
async def list_beliefs(request: Request) -> Response:
    """A status or origin that is none of the listed ones is the engine's one-line 400."""
    found = await blocking(
        _session(request).beliefs,
        status=request.query_params.get("status") or None,
        origin=request.query_params.get("origin") or None,
    )
    return json_response(dump_each(found))


@api.get(
    _B,
    "One belief with its quotes, links and history (as `sadie beliefs show --json`)",
    ok(BeliefDetail),
    (_BID,),
    errors=(404,),
)
async def show_belief(request: Request) -> Response:
    return json_response(dump(await blocking(_session(request).belief, _bid(request))))


@api.route(
    "POST",
    f"{_B}/accept",
    "Keep a proposed belief: sadie never retires or contests it afterwards",
    ok(BeliefDetail),
    (_BID,),
    request=BeliefDecision,
    errors=(400, 404),
)
async def accept_belief(request: Request) -> Response:
    reason = (await body_as(request, BeliefDecision)).reason
    found = await blocking(_session(request).accept_belief, _bid(request), reason=reason)
    return json_response(dump(found))


@api.route(
    "POST",
    f"{_B}/reject",
    "Reject a proposed belief: it is never proposed again",
    ok(BeliefDetail),
    (_BID,),
    request=BeliefDecision,
    errors=(400, 404),
)
async def reject_belief(request: Request) -> Response:
    reason = (await body_as(request, BeliefDecision)).reason
    found = await blocking(_session(request).reject_belief, _bid(request), reason=reason)
    return json_response(dump(found))


@api.route(
    "POST",
    f"{_B}/edit",
    "Reword a proposed belief: its quotes stay, and it counts as accepted",
    ok(BeliefDetail),
    (_BID,),
    request=BeliefEdit,
    errors=(400, 404),
)
async def edit_belief(request: Request) -> Response:
    statement = (await body_as(request, BeliefEdit)).statement
    found = await blocking(_session(request).edit_belief, _bid(request), statement)
    return json_response(dump(found))


@api.route(
    "POST",
    "/v1/soul/suggest",
    "A drafted update of the soul summary, with its diff; nothing is written",
    ok(SoulSuggestion),
    errors=(502,),
)
async def suggest_soul(request: Request) -> Response:
    return json_response(dump(await blocking(_session(request).suggest_soul)))


@api.route(
    "PUT",
    "/v1/soul",
    "Write the soul summary (a draft the person accepted)",
    ok(Soul),
    request=SoulText,
    errors=(400, 503),
)
async def save_soul(request: Request) -> Response:
    text = (await body_as(request, SoulText)).text
    session = _session(request)
    await blocking(session.save_soul, text)
    return json_response(dump(Soul(await blocking(session.soul))))


for _verb in ("pin", "unpin", "archive", "unarchive"):
    api.add(
        Route(
            "POST",
            f"{_C}/{_verb}",
            f"{_verb.capitalize()} a conversation",
            ok(Conversation),
            (_CID,),
            errors=(404,),
        ),
        _changed(_verb),
    )
