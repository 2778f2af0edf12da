"""A session that is a client of the sadie holding the memory: ``sadie serve``'s own API over
the home's Unix socket (``serve.socket``). ``Launch`` hands one to a CLI command that finds
the memory locked by a server, so ``sadie --ask``, ``sadie chat`` and the conversation, chip,
search and stats commands work from a second terminal with the same output.

What needs the file to itself (compact, ingest) is a one-line ``StorageError`` naming the
holder, exit 3 as before. The TUI is a client the same way (``sadie`` while another holds).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import httpx

from ..engine.chips import Candidate, Chip, NewChip
from ..engine.conversations import Conversation, Message
from ..engine.errors import (
    ErrorKind,
    ModelError,
    ModelMissing,
    ModelNoAnswer,
    ModelStreamError,
    ModelTimeout,
    ModelUnreachable,
    NotFoundError,
    SadieError,
    StorageError,
    UsageError,
)
from ..engine.events import CitationView, ErrorEvent, from_json
from ..engine.reasoners.ollama import ModelInfo
from ..engine.session import Episode, Search
from .errors import kind_of

if TYPE_CHECKING:
    from ..config import Settings
    from ..engine.events import Event
    from ..engine.ingest.pipeline import IngestReport
    from ..engine.personas import Persona
    from ..engine.reflect.beliefs import Belief, BeliefDetail
    from ..engine.reflect.report import ReflectReport
    from ..engine.reflect.soul import SoulSuggestion
    from ..engine.session import Progress, Stop
    from ..engine.turns.ask import AskResult
    from ..engine.turns.context import ModelStatus

BASE_URL = "http://sadie"  # the Host the guard lets through on the socket
CONNECT_SECONDS = 5.0
HEALTH_SECONDS = 10.0
WARM_POLL_SECONDS = 0.5
WARM_WAIT_SECONDS = 120.0


def _timeout() -> httpx.Timeout:
    return httpx.Timeout(None, connect=CONNECT_SECONDS)  # answers may take the model's time


def _transport(path: Path) -> httpx.HTTPTransport:
    """Plain HTTP on the Unix socket. ``verify=False``: no TLS context that is never used
    (making one loads the CA bundle, ~20 ms, at every chat turn)."""
    return httpx.HTTPTransport(uds=str(path), verify=False)


def _async_transport(path: Path) -> httpx.AsyncHTTPTransport:
    """``_transport`` for the async client."""
    return httpx.AsyncHTTPTransport(uds=str(path), verify=False)


def answers(path: Path, timeout: float = HEALTH_SECONDS) -> bool:
    """Whether a sadie server answers ``GET /v1/health`` on the socket at ``path``."""
    if not Path(path).is_socket():
        return False
    try:
        with httpx.Client(
            transport=_transport(path),
            base_url=BASE_URL,
            timeout=timeout,
        ) as client:
            response = client.get("/v1/health")
    except httpx.HTTPError:
        return False
    return response.status_code == 200 and bool(_json(response).get("ok"))


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}


_ERRORS: dict[str, type[SadieError]] = {
    ErrorKind.USAGE: UsageError,
    ErrorKind.NOT_FOUND: NotFoundError,
    ErrorKind.STORAGE: StorageError,
    ErrorKind.MODEL: ModelError,
    ErrorKind.UNREACHABLE: ModelUnreachable,
    ErrorKind.MODEL_MISSING: ModelMissing,
    ErrorKind.TIMEOUT: ModelTimeout,
    ErrorKind.STREAM: ModelStreamError,
    ErrorKind.NO_ANSWER: ModelNoAnswer,
    ErrorKind.FAILURE: SadieError,
}


def _error(status: int, body: Any) -> SadieError:
    """The API's ``{"error", "fix", "kind"}`` back as the error the session would raise (the
    guard's refusals, which never reach a socket client, as storage errors)."""
    if not isinstance(body, dict):
        body = {}
    message = str(body.get("error") or f"the server answered {status}")
    cls = _ERRORS.get(str(body.get("kind") or ""), StorageError)
    return cls(message, fix=body.get("fix"))


def _when(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


def _conversation(data: dict[str, Any]) -> Conversation:
    created = _when(data.get("created_at")) or datetime.now()
    return Conversation(
        id=str(data["id"]),
        title=str(data.get("title") or ""),
        summary=str(data.get("summary") or ""),
        emotion=data.get("emotion"),
        persona=data.get("persona"),
        pinned=bool(data.get("pinned")),
        archived_at=_when(data.get("archived_at")),
        created_at=created,
        updated_at=_when(data.get("updated_at")) or created,
        message_count=int(data.get("message_count") or 0),
    )


def _message(data: dict[str, Any]) -> Message:
    return Message(
        id=str(data["id"]),
        conversation_id=str(data["conversation_id"]),
        role=str(data["role"]),
        content=str(data.get("content") or ""),
        status=str(data.get("status") or "complete"),
        emotion=data.get("emotion"),
        citations=list(data.get("citations") or []),
        model=data.get("model"),
        latency_ms=data.get("latency_ms"),
        metadata=dict(data.get("metadata") or {}),
        created_at=_when(data.get("created_at")) or datetime.now(),
    )


def _chip(data: dict[str, Any]) -> Chip:
    return Chip(
        id=str(data["id"]),
        conversation_id=str(data["conversation_id"]),
        kind=str(data["kind"]),
        ref_id=str(data["ref_id"]),
        label=str(data.get("label") or ""),
        snippet=data.get("snippet"),
        created_at=_when(data.get("created_at")) or datetime.now(),
    )


def _candidate(data: dict[str, Any]) -> Candidate:
    return Candidate(
        kind=str(data["kind"]),
        ref_id=str(data["ref_id"]),
        label=str(data.get("label") or ""),
        snippet=str(data.get("snippet") or ""),
        date=data.get("date"),
    )


def _citation(data: dict[str, Any]) -> CitationView:
    origin = "sadie" if data.get("label") == "found by sadie" else data.get("origin", "model")
    return CitationView.from_json({**data, "origin": origin})


def _ask_result(data: dict[str, Any]) -> AskResult:
    from ..engine.turns.ask import AskResult

    return AskResult(
        question=data["question"],
        answer=data["answer"],
        citations=[_citation(c) for c in data.get("citations") or []],
        persona=data["persona"],
        abstained=bool(data["abstained"]),
        grounding=dict(data.get("grounding") or {}),
        stages=list(data.get("stages") or []),
        reframed_question=data.get("reframed_question"),
        opinion=data.get("opinion"),
        emotion=str(data.get("emotion") or ""),
        model=str(data.get("model") or ""),
        offline=bool(data.get("offline")),
        chunks_considered=int(data.get("chunks_considered") or 0),
        latency_ms=float(data.get("latency_ms") or 0.0),
        notices=list(data.get("notices") or []),
        found_by_sadie=[_citation(c) for c in data.get("found_by_sadie") or []],
    )


def _retrieval_view(data: dict[str, Any]) -> Any:
    """Enough of a ``RetrievalResult`` for ``sadie search``'s table, from ``/v1/search``."""
    ns = SimpleNamespace
    window = data.get("window")
    return ns(
        query=data.get("query", ""),
        effective_query=data.get("effective_query", ""),
        window=None
        if not window
        else ns(
            phrase=window.get("phrase", ""),
            start=_when(window.get("start")),
            end=_when(window.get("end")),
        ),
        elapsed_ms=float(data.get("elapsed_ms") or 0.0),
        vector_used=bool(data.get("vector_used")),
        notices=tuple(data.get("notices") or ()),
        chunks=[
            ns(**{**c, "occurred_at": _when(c.get("date")) or datetime.now()})
            for c in data.get("chunks") or []
        ],
        beliefs=[ns(**b) for b in data.get("beliefs") or []],
        observations=[
            ns(**{**o, "observed_at": _when(o.get("observed_at")) or datetime.now()})
            for o in data.get("observations") or []
        ],
    )


@dataclass(frozen=True)
class RemoteSearch(Search):
    """A search answered by the holder: its JSON exactly, and a view for the table."""

    data: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return self.data


class RemoteSession:
    """``SessionProtocol`` over the holder's Unix socket (see the module docstring)."""

    def __init__(self, home: Path, settings: Settings, path: Path, *, holder: str) -> None:
        self.home = home
        self.settings = settings
        self.path = Path(path)
        self.holder = holder  # "another sadie (pid 123)", for the refusals
        self._client = httpx.Client(
            transport=_transport(self.path),
            base_url=BASE_URL,
            timeout=_timeout(),
        )

    # -- the wire ----------------------------------------------------------------------------
    def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """The holder's answer, or its error raised as the session would raise it."""
        try:
            response = self._client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise StorageError(
                f"lost the memory's holder, {self.holder}: {exc}",
                fix="run the command again",
            ) from exc
        if response.status_code >= 400:
            raise _error(response.status_code, _json(response))
        return response

    def _request(self, method: str, url: str, **kwargs: Any) -> Any:
        return _json(self._send(method, url, **kwargs))

    def _get(self, url: str, **params: Any) -> Any:
        return self._request("GET", url, params={k: v for k, v in params.items() if v is not None})

    def _refuse(self, what: str) -> StorageError:
        return StorageError(
            f"{what} needs the memory to itself: close {self.holder} first",
        )

    # -- answers -----------------------------------------------------------------------------
    def chat(
        self,
        message: str,
        *,
        conversation_id: str | None = None,
        persona: str | None = None,
        new: bool = False,
        regenerate: bool = False,
        model: str | None = None,
        chips: Sequence[NewChip] = (),
    ) -> AsyncIterator[Event]:
        body: dict[str, Any] = {"message": message}
        if conversation_id is not None and not new:
            body["conversation_id"] = conversation_id
        if persona is not None:
            body["persona"] = persona
        if regenerate:
            body["regenerate"] = True
        if chips:
            body["chips"] = [
                {
                    "kind": c.kind,
                    "ref": c.ref,
                    **({"label": c.label} if c.label is not None else {}),
                }
                for c in chips
            ]
        # This process's model (its config, or SADIE_MODEL in its environment), not the
        # holder's: a second terminal answers with the model it was started with.
        body["model"] = model if model is not None else self.settings.model
        return self._chat(body)

    async def _chat(self, body: dict[str, Any]) -> AsyncIterator[Event]:
        transport = _async_transport(self.path)
        try:
            async with (
                httpx.AsyncClient(transport=transport, base_url=BASE_URL, timeout=_timeout()) as c,
                c.stream("POST", "/api/chat", json=body) as response,
            ):
                if response.status_code >= 400:
                    await response.aread()
                    error = _error(response.status_code, _json(response))
                    yield ErrorEvent(error.message, code=kind_of(error), fix=error.fix)
                    return
                async for line in response.aiter_lines():
                    if line.strip():
                        yield from_json(json.loads(line))
        except httpx.HTTPError as exc:
            # The holder went away (killed, crashed) before or during the reply: the stream's
            # own error event, as when the connection to the model breaks mid-reply.
            yield ErrorEvent(
                f"lost the memory's holder, {self.holder} ({type(exc).__name__})",
                code=ErrorKind.STREAM,
                fix="run the command again",
            )

    async def ask(self, question: str, *, persona: str | None = None) -> AskResult:
        body: dict[str, Any] = {"question": question}
        if persona is not None:
            body["persona"] = persona
        transport = _async_transport(self.path)
        async with httpx.AsyncClient(
            transport=transport, base_url=BASE_URL, timeout=_timeout()
        ) as c:
            try:
                response = await c.post("/v1/ask", json=body)
            except httpx.HTTPError as exc:
                raise StorageError(f"lost the memory's holder, {self.holder}: {exc}") from exc
        data = _json(response)
        if response.status_code >= 400:
            raise _error(response.status_code, data)
        return _ask_result(data)

    def search(self, query: str, *, persona: str | None = None, k: int | None = None) -> Search:
        data = self._get("/v1/search", q=query, persona=persona, k=k)
        return RemoteSearch(
            _retrieval_view(data), str(data.get("persona") or ""), data.get("turn_id"), data
        )

    # -- the model and the embedder ----------------------------------------------------------
    def _health(self) -> dict[str, Any]:
        data = self._get("/v1/health")
        return data if isinstance(data, dict) else {}

    async def check_model(self, *, fresh: bool = False, model: str | None = None) -> ModelStatus:
        from ..engine.turns.context import ModelStatus

        model = model if model is not None else self.settings.model
        data = self._get("/v1/health", model=model, fresh="true" if fresh else None)
        return ModelStatus(**data["model"])

    async def models(self) -> list[ModelInfo]:
        return [ModelInfo(**m) for m in self._get("/v1/models")]

    def warm(self) -> None:
        """The holder warms its own embedder: wait (bounded) until it says it is ready, so a
        face that shows "embedding model loading…" shows the holder's state."""
        deadline = time.monotonic() + WARM_WAIT_SECONDS
        while not self.embedder_ready and time.monotonic() < deadline:
            time.sleep(WARM_POLL_SECONDS)

    @property
    def embedder_ready(self) -> bool:
        return bool(self._health().get("embedder_ready"))

    @property
    def embedder_notice(self) -> str | None:
        """None: the embedder runs in the holder, which shows its own notice."""
        return None

    # -- conversations -----------------------------------------------------------------------
    def conversations(
        self, *, archived: bool = False, search: str | None = None, limit: int | None = None
    ) -> list[Conversation]:
        found = self._get(
            "/v1/conversations",
            archived="true" if archived else None,
            search=search or None,
            limit=limit,
        )
        return [_conversation(c) for c in found]

    def conversation(self, conversation_id: str) -> Conversation:
        return _conversation(self._get(f"/v1/conversations/{conversation_id}")["conversation"])

    def messages(self, conversation_id: str) -> list[Message]:
        shown = self._get(f"/v1/conversations/{conversation_id}")
        return [_message(m) for m in shown["messages"]]

    def pin(self, conversation_id: str, pinned: bool = True) -> None:
        action = "pin" if pinned else "unpin"
        self._request("POST", f"/v1/conversations/{conversation_id}/{action}")

    def archive(self, conversation_id: str, archived: bool = True) -> None:
        action = "archive" if archived else "unarchive"
        self._request("POST", f"/v1/conversations/{conversation_id}/{action}")

    def rename(self, conversation_id: str, title: str) -> None:
        self._request("POST", f"/v1/conversations/{conversation_id}/rename", json={"title": title})

    def forget(self, conversation_id: str) -> None:
        self._request("DELETE", f"/v1/conversations/{conversation_id}")

    def export(self, conversation_id: str, fmt: str) -> str:
        response = self._send(
            "GET", f"/v1/conversations/{conversation_id}/export", params={"format": fmt}
        )
        return response.text

    def import_conversation(self, text: str) -> Conversation:
        body = text.encode("utf-8")
        return _conversation(self._request("POST", "/v1/conversations/import", content=body))

    # -- chips -------------------------------------------------------------------------------
    def chips(self, conversation_id: str) -> list[Chip]:
        return [_chip(c) for c in self._get(f"/v1/conversations/{conversation_id}/chips")]

    def add_chip(
        self, conversation_id: str, kind: str, ref: str, *, label: str | None = None
    ) -> Chip:
        body = {"kind": kind, "ref": ref, **({"label": label} if label is not None else {})}
        return _chip(self._request("POST", f"/v1/conversations/{conversation_id}/chips", json=body))

    def remove_chip(self, conversation_id: str, chip_id: str) -> Chip:
        return _chip(
            self._request("DELETE", f"/v1/conversations/{conversation_id}/chips/{chip_id}")
        )

    def find_attachable(self, query: str, *, kind: str | None = None, limit: int = 20) -> list[Any]:
        found = self._get("/v1/chips/find", q=query, kind=kind, limit=limit)
        return [_candidate(c) for c in found]

    # -- the memory --------------------------------------------------------------------------
    def episode(self, episode_id: str) -> Episode | None:
        try:
            data = self._get(f"/v1/episodes/{episode_id}")
        except NotFoundError:
            return None
        fields = ("id", "title", "date", "kind", "text")
        return Episode(**{name: str(data.get(name) or "") for name in fields})

    def soul(self) -> str:
        return str(self._get("/v1/soul").get("text") or "")

    def stats(self) -> dict[str, Any]:
        data = self._get("/v1/stats")
        return data if isinstance(data, dict) else {}

    def compact(self) -> tuple[int, int]:
        raise self._refuse("compact")

    def personas(self) -> list[Persona]:
        from ..engine.personas import load_personas
        from ..paths import config_dir

        return list(load_personas(config_dir() / "personas").values())

    def ingest(self, paths: Sequence[Path], progress: Progress | None = None) -> IngestReport:
        raise self._refuse("ingest")

    def close(self) -> None:
        self._client.close()

    # -- the learning loop -------------------------------------------------------------------
    def reflect(
        self,
        *,
        everything: bool = False,
        since: date | None = None,
        budget_minutes: float | None = None,
        progress: Progress | None = None,
        stop: Stop | None = None,
    ) -> ReflectReport:
        raise self._refuse("reflect")

    def beliefs(self, *, status: str | None = None, origin: str | None = None) -> list[Belief]:
        from ..engine.reflect.beliefs import Belief

        found = self._get("/v1/beliefs", status=status, origin=origin)
        return [Belief.from_json(b) for b in found]

    def belief(self, belief_id: str) -> BeliefDetail:
        from ..engine.reflect.beliefs import BeliefDetail

        return BeliefDetail.from_json(self._get(f"/v1/beliefs/{belief_id}"))

    def accept_belief(self, belief_id: str, *, reason: str | None = None) -> BeliefDetail:
        return self._decide(belief_id, "accept", {"reason": reason})

    def reject_belief(self, belief_id: str, *, reason: str | None = None) -> BeliefDetail:
        return self._decide(belief_id, "reject", {"reason": reason})

    def edit_belief(self, belief_id: str, statement: str) -> BeliefDetail:
        return self._decide(belief_id, "edit", {"statement": statement})

    def _decide(self, belief_id: str, action: str, body: dict[str, Any]) -> BeliefDetail:
        from ..engine.reflect.beliefs import BeliefDetail

        sent = {k: v for k, v in body.items() if v is not None}
        return BeliefDetail.from_json(
            self._request("POST", f"/v1/beliefs/{belief_id}/{action}", json=sent)
        )

    def suggest_soul(self) -> SoulSuggestion:
        from ..engine.reflect.soul import SoulSuggestion

        return SoulSuggestion.from_json(self._request("POST", "/v1/soul/suggest", json={}))

    def save_soul(self, text: str) -> None:
        self._request("PUT", "/v1/soul", json={"text": text})
