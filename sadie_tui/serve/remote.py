"""A session that is a client of the sadie holding the memory: ``sadie serve``'s own API over
the home's Unix socket (``serve.socket``). ``Launch`` hands one to a CLI command that finds
the memory locked by a server, so ``sadie --ask``, ``sadie chat`` and the conversation, chip,
search and stats commands work from a second terminal with the same output.

Ingest, removing notes and reflect go through the holder too (``serve.job_routes``), with
their progress; what needs the file to itself (compact) is a one-line ``StorageError``
naming the holder, exit 3 as before. The TUI is a client the same way (``sadie`` while
another holds).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import quote

import httpx

from ..engine.door import Op, path_fields
from ..engine.errors import (
    ErrorKind,
    KeyNeededError,
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
from ..engine.events import ErrorEvent, from_json
from ..engine.jsonvalue import JSON, JSONObject
from ..engine.reasoners.ollama import ModelInfo
from ..engine.wire import Shape, ShapeError, dump, load
from .errors import kind_of
from .shapes import (
    ApiChatRequest,
    AskRequest,
    Error,
    Health,
)

if TYPE_CHECKING:
    from ..config import Settings
    from ..engine.context import ModelStatus
    from ..engine.events import Event
    from ..engine.ingest.pipeline import IngestReport
    from ..engine.personas import Personas
    from ..engine.reasoners.choose import ServerSource
    from ..engine.reflect.report import ReflectReport
    from ..engine.requests import ChatTurn, IngestJob, ReflectJob
    from ..engine.session import Progress
    from ..engine.turns.ask import AskResult

T = TypeVar("T")
E = TypeVar("E")  # the last line of a job: its report
A = TypeVar("A")  # an operation's answer

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
    answer = _json(response)
    return response.status_code == 200 and isinstance(answer, dict) and bool(answer.get("ok"))


def _line(text: str) -> JSON:
    """One NDJSON line parsed; a broken one reads as nothing (``_read`` then says so)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _as_given(name: str, given: Sequence[tuple[str, str]]) -> str:
    """A file name the holder reported (under an absolute path sent) as under the path the
    person gave, so a skipped file is named as a local ingest names it."""
    for original, sent in given:
        if name == sent:
            return original
        prefix = sent.rstrip(os.sep) + os.sep
        if name.startswith(prefix):
            rest = name[len(prefix) :]
            return rest if original == "." else os.path.join(original, rest)
    return name


def _json(response: httpx.Response) -> JSON:
    try:
        found: JSON = response.json()
        return found
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
    ErrorKind.KEY: KeyNeededError,
}


def _error(status: int, body: JSON) -> SadieError:
    """The API's ``Error`` back as the error the session would raise (the guard's refusals,
    which never reach a socket client, and an answer that is no ``Error``, as storage
    errors)."""
    try:
        said: Error = load(Error, body)
    except ShapeError:
        said = Error(f"the server answered {status}", None, ErrorKind.STORAGE)
    cls = _ERRORS.get(said.kind, StorageError)
    return cls(said.error or f"the server answered {status}", fix=said.fix)


def _read(shape: type[T] | Shape, data: JSON, holder: str) -> T:
    """The holder's answer read as ``shape`` (``wire``); an answer that does not fit (another
    version of sadie holds the memory) is a one-line storage error, not a traceback."""
    try:
        value: T = load(shape, data)
    except ShapeError as exc:
        raise StorageError(
            f"{holder} answered in a shape this sadie cannot read: {exc.message}",
            fix="run the same version of sadie in both terminals",
        ) from None
    return value


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
    # Any: the keyword arguments go whole to httpx.Client.request (json=, params=, content=)
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

    def _request(self, method: str, url: str, **kwargs: Any) -> JSON:  # Any: as _send's
        return _json(self._send(method, url, **kwargs))

    def _get(self, url: str, **params: str | int | None) -> JSON:
        return self._request("GET", url, params={k: v for k, v in params.items() if v is not None})

    def _read(self, shape: type[T] | Shape, data: JSON) -> T:
        return _read(shape, data, self.holder)

    def _refuse(self, what: str) -> StorageError:
        return StorageError(
            f"{what} needs the memory to itself: close {self.holder} first",
        )

    # -- answers -----------------------------------------------------------------------------
    def chat(self, request: ChatTurn) -> AsyncGenerator[Event, None]:
        body = ApiChatRequest(
            message=request.message,
            conversation_id=None if request.new else request.conversation_id,
            persona=request.persona,
            chips=list(request.chips) or None,
            regenerate=request.regenerate,
            # This process's model (its config, or SADIE_MODEL in its environment), not the
            # holder's: a second terminal answers with the model it was started with.
            model=request.model if request.model is not None else self.settings.model,
        )
        return self._chat(dump(body))

    async def _chat(self, body: JSONObject) -> AsyncGenerator[Event, None]:
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
                        yield self._event(line)
        except httpx.HTTPError as exc:
            # The holder went away (killed, crashed) before or during the reply: the stream's
            # own error event, as when the connection to the model breaks mid-reply.
            yield ErrorEvent(
                f"lost the memory's holder, {self.holder} ({type(exc).__name__})",
                code=ErrorKind.STREAM,
                fix="run the command again",
            )

    def _event(self, line: str) -> Event:
        """One NDJSON line of the holder's turn back as its event."""
        try:
            return from_json(json.loads(line))
        except (ValueError, ShapeError) as exc:
            message = exc.message if isinstance(exc, ShapeError) else str(exc)
            return ErrorEvent(
                f"{self.holder} answered in a shape this sadie cannot read: {message}",
                code=ErrorKind.STREAM,
                fix="run the same version of sadie in both terminals",
            )

    async def ask(self, question: str, *, persona: str | None = None) -> AskResult:
        # Lazy: the ask turn's modules are loaded when a client asks, not at its start.
        from ..engine.turns.ask import AskResult

        body = dump(AskRequest(question, persona))
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
        return self._read(AskResult, data)

    def call(self, op: Op[A]) -> A:
        """The operation sent to the holder as its declaration says (``engine.door``): path
        fields in the URL, the others as the query (GET, DELETE) or the JSON body, and the
        answer read back as its shape."""
        d = op.declared
        fields: JSONObject = dump(op)
        url = d.path.format(**{k: quote(str(fields.pop(k)), safe="") for k in path_fields(d.path)})
        if d.method in ("GET", "DELETE"):
            # Any: the keyword arguments go whole to httpx.Client.request, as _send's
            sent: dict[str, Any] = {"params": {k: v for k, v in fields.items() if v is not None}}
        elif d.body == "text":
            sent = {"content": str(next(iter(fields.values()))).encode("utf-8")}
        else:
            sent = {"json": fields}
        response = self._send(d.method, url, **sent)
        if op.answer is str:
            return cast(A, response.text)
        return self._read(op.answer, _json(response))

    # -- the model and the embedder ----------------------------------------------------------
    async def check_model(self, *, fresh: bool = False, model: str | None = None) -> ModelStatus:
        # lazy: engine.context loads only when check_model runs, off the start-up path
        from ..engine.context import ModelStatus

        model = model if model is not None else self.settings.model
        data = self._get("/v1/health", model=model, fresh="true" if fresh else None)
        # Only the model's part of the answer (``Health.model``) is this check's.
        return self._read(ModelStatus, data.get("model") if isinstance(data, dict) else None)

    async def models(self) -> list[ModelInfo]:
        return self._read(list[ModelInfo], self._get("/v1/models"))

    def model_server(self) -> ServerSource:
        """The holder's model server is its own: this process's settings say where a sadie
        started here would look, and the origin says whose it is."""
        # lazy: reasoners.choose loads only when model_server runs, off the start-up path
        from ..engine.reasoners.choose import server_source

        origin = f"this process's settings; {self.holder} uses its own"
        return dataclasses.replace(server_source(self.settings), origin=origin)

    def use_model_server(self, address: str) -> ServerSource:
        raise UsageError(
            "the sadie holding the memory talks to the model server, not this one",
            fix=f"set the address in that sadie ({self.holder}), or close it first",
        )

    def warm(self) -> None:
        """The holder warms its own embedder: wait (bounded) until it says it is ready, so a
        face that shows "embedding model loading…" shows the holder's state."""
        deadline = time.monotonic() + WARM_WAIT_SECONDS
        while not self.embedder_ready and time.monotonic() < deadline:
            time.sleep(WARM_POLL_SECONDS)

    @property
    def embedder_ready(self) -> bool:
        return self._read(Health, self._get("/v1/health")).embedder_ready

    @property
    def embedder_notice(self) -> str | None:
        """None: the embedder runs in the holder, which shows its own notice."""
        return None

    # -- the memory --------------------------------------------------------------------------
    def compact(self) -> tuple[int, int]:
        raise self._refuse("compact")

    def personas(self) -> Personas:
        """The holder's personas (the ones its turns answer with), over ``/v1/personas``."""
        # lazy: engine.personas loads only when personas runs, off the start-up path
        from ..engine.personas import Personas

        return Personas.from_json(self._get("/v1/personas"))

    def ingest(self, paths: Sequence[Path], job: IngestJob | None = None) -> IngestReport:
        """Through the holder, which reads the files itself (the socket is on this machine,
        so the paths are the same there, made absolute here); its progress drives
        the job's ``progress``, and the report names files as they were given here."""
        # lazy: the ingest's shapes load only when a client ingests, not at its start
        from ..engine.requests import IngestJob
        from .job_shapes import IngestDone, IngestLine, IngestRequest

        given = [(str(p), os.path.abspath(p)) for p in paths]
        job = job or IngestJob()
        body = dump(IngestRequest([sent for _, sent in given], job.csv_map))
        done = self._job("/v1/ingest", body, IngestLine, IngestDone, job.progress)
        report = done.report
        for found in (report.skipped, report.ignored):
            found[:] = [replace(s, name=_as_given(s.name, given)) for s in found]
        return report

    def remove_notes(self, paths: Sequence[Path]) -> int:
        """Through the holder (``sadie ingest --watch`` in a second terminal)."""
        # lazy: as ingest
        from .job_shapes import NotesRemoved, RemoveNotesRequest

        body = dump(RemoveNotesRequest([os.path.abspath(p) for p in paths]))
        return self._read(
            NotesRemoved, self._request("POST", "/v1/notes/remove", json=body)
        ).removed

    def _job(
        self, url: str, body: JSONObject, shape: Shape, end: type[E], progress: Progress | None
    ) -> E:
        """A job's NDJSON lines: each progress line to ``progress``, the report returned,
        the error raised as the session would raise it. ctrl+c here hangs up, which stops a
        reflection between batches (an ingest finishes the files it began)."""
        # lazy: the job's shapes load only when a client runs a job, not at its start
        from .job_shapes import JobFailed, JobProgress

        try:
            with self._client.stream("POST", url, json=body) as response:
                if response.status_code >= 400:
                    response.read()
                    raise _error(response.status_code, _json(response))
                for text in response.iter_lines():
                    if not text.strip():
                        continue
                    line: JobProgress | JobFailed | E = self._read(shape, _line(text))
                    if isinstance(line, JobProgress):
                        if progress is not None:
                            progress(line.stage, line.done, line.total)
                    elif isinstance(line, JobFailed):
                        cls = _ERRORS.get(line.kind, StorageError)
                        raise cls(line.error, fix=line.fix)
                    elif isinstance(line, end):
                        return line
        except httpx.HTTPError as exc:
            raise StorageError(
                f"lost the memory's holder, {self.holder}: {exc}", fix="run the command again"
            ) from exc
        raise StorageError(
            f"lost the memory's holder, {self.holder}, before the job ended",
            fix="run the command again",
        )

    def close(self) -> None:
        self._client.close()

    # -- the learning loop -------------------------------------------------------------------
    def reflect(self, job: ReflectJob | None = None) -> ReflectReport:
        """Through the holder, with its model; ``stop`` is not sent: hanging up (ctrl+c)
        stops the holder's run between batches, as ``stop`` would."""
        # lazy: the reflection's shapes load only when a client reflects, not at its start
        from ..engine.requests import ReflectJob
        from .job_shapes import ReflectDone, ReflectLine, ReflectRequest

        job = job or ReflectJob()
        body = dump(ReflectRequest(job.everything, job.since, job.budget_minutes))
        done = self._job("/v1/reflect", body, ReflectLine, ReflectDone, job.progress)
        return done.report
