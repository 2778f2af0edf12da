"""The long jobs a holder runs for another sadie of the same user: ``sadie ingest`` (and its
``--watch`` batches), removing deleted notes, and ``sadie reflect``. Each streams NDJSON: the
engine's progress as lines, then its report (or its error) as the last line.

An ingest reads files on the holder's machine, with the holder's rights: these routes are
served only on a Unix socket (mode 0600: the person's own processes); over TCP they answer
403. When a job changed the memory, the holder is told in one line (``app.state.on_change``,
set by ``Holder.on_change``): the app shows it as a notice.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TypeVar

from starlette.requests import Request
from starlette.responses import Response

from ..engine.errors import NeedsModel, SadieError
from ..engine.ingest.pipeline import IngestReport
from ..engine.jsonvalue import JSON
from ..engine.reflect.report import ReflectReport
from ..engine.requests import IngestJob, ReflectJob
from ..engine.session import Progress, SessionProtocol, Stop
from ..engine.wire import Shape, dump
from .body import body_as
from .errors import json_response, kind_of
from .guard import socket_only
from .job_shapes import (
    IngestDone,
    IngestLine,
    IngestRequest,
    JobFailed,
    JobProgress,
    NotesRemoved,
    ReflectDone,
    ReflectLine,
    ReflectRequest,
    RemoveNotesRequest,
)
from .routing import NDJSON, Answer, Api, ok
from .streams import NDJSONResponse, dumps

api = Api()
R = TypeVar("R")
B = TypeVar("B")  # a job's request body
Job = Callable[[Progress, Stop], R]  # runs in a thread; its result becomes the last line


def _session(request: Request) -> SessionProtocol:
    return request.app.state.session


def _tell(request: Request, line: str | None) -> None:
    """Tell the holder what changed (a notice in the app); nothing when nobody listens."""
    listener = getattr(request.app.state, "on_change", None)
    if line and listener is not None:
        listener(line)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def ingest_notice(report: IngestReport) -> str | None:
    """ "3 notes added from another terminal", or None when nothing changed."""
    parts = []
    if report.added:
        parts.append(f"{_plural(report.added, 'note')} added")
    if report.updated:
        parts.append(f"{_plural(report.updated, 'note')} updated")
    records = sum(report.derived.values())
    if records:
        parts.append(f"{_plural(records, 'record')} read")
    return f"{', '.join(parts)} from another terminal" if parts else None


def reflect_notice(report: ReflectReport) -> str | None:
    """ "2 new beliefs from another terminal's reflection", or None when none is new."""
    if not report.new:
        return None
    return f"{_plural(report.new, 'new belief')} from another terminal's reflection"


async def _lines(job: Job[R], finish: Callable[[R], object]) -> AsyncIterator[str]:
    """Run ``job`` in a thread; yield its progress, then ``finish(result)`` or its error, one
    JSON object a line. A client that hangs up stops it at its next ``stop`` check (a
    reflection between batches); an ingest finishes the files it started."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[JSON] = asyncio.Queue()
    hung_up = threading.Event()

    def put(item: JSON) -> None:
        with contextlib.suppress(RuntimeError):  # the server's loop closed: nobody reads
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def progress(stage: str, done: int, total: int) -> None:
        put(dump(JobProgress(stage, done, total)))

    def work() -> None:
        try:
            put(dump(finish(job(progress, hung_up.is_set))))
        except SadieError as exc:
            put(dump(JobFailed(exc.message, exc.fix, kind_of(exc))))
        except Exception as exc:  # noqa: BLE001 - the client gets one line, as from any route
            put(dump(JobFailed(f"internal error: {type(exc).__name__}", None, "error")))
        finally:
            put(None)

    worker = asyncio.ensure_future(asyncio.to_thread(work))
    try:
        while (line := await queue.get()) is not None:
            yield dumps(line) + "\n"
    finally:
        hung_up.set()
        if worker.done():
            worker.result()


def _streamed(job: Job[R], finish: Callable[[R], object]) -> Response:
    return NDJSONResponse(_lines(job, finish), headers={"Cache-Control": "no-store"})


def _streams(line: Shape) -> tuple[Answer, ...]:
    """A job's answer: NDJSON progress lines, then its report (or its error)."""
    return (Answer(line, media=NDJSON, text="progress lines, then the report (or the error)"),)


async def _asked(request: Request, what: str, shape: type[B]) -> tuple[B, SessionProtocol]:
    """A job's request read as ``shape``, from the socket only, and the session it runs on."""
    socket_only(request, what)
    return await body_as(request, shape), _session(request)


@api.route(
    "POST",
    "/v1/ingest",
    "Read files and folders on this machine into the memory (the Unix socket only)",
    _streams(IngestLine),
    request=IngestRequest,
    errors=(400, 413),
)
async def ingest(request: Request) -> Response:
    """``sadie ingest`` from another terminal: the holder reads the files itself."""
    body, session = await _asked(request, "ingest", IngestRequest)
    paths = [Path(p) for p in body.paths]

    def job(progress: Progress, stop: Stop) -> IngestReport:
        report = session.ingest(paths, IngestJob(progress, body.csv_map))
        _tell(request, ingest_notice(report))
        return report

    return _streamed(job, IngestDone)


@api.route(
    "POST",
    "/v1/notes/remove",
    "Take deleted files or folders out of the memory (the Unix socket only)",
    ok(NotesRemoved),
    request=RemoveNotesRequest,
    errors=(400, 413),
)
async def remove_notes(request: Request) -> Response:
    """``sadie ingest --watch`` from another terminal, when a note is deleted."""
    body, session = await _asked(request, "ingest", RemoveNotesRequest)
    removed = await asyncio.to_thread(session.remove_notes, [Path(p) for p in body.paths])
    if removed:
        _tell(request, f"{_plural(removed, 'note')} removed from another terminal")
    return json_response(dump(NotesRemoved(removed)))


@api.route(
    "POST",
    "/v1/reflect",
    "Reflect on the notes waiting, with progress (the Unix socket only)",
    _streams(ReflectLine),
    request=ReflectRequest,
    errors=(400, 413),
)
async def reflect(request: Request) -> Response:
    """``sadie reflect`` from another terminal; hanging up stops it between batches."""
    body, session = await _asked(request, "reflect", ReflectRequest)

    def job(progress: Progress, stop: Stop) -> ReflectReport:
        try:
            report = session.reflect(
                ReflectJob(body.everything, body.since, body.budget_minutes, progress, stop)
            )
        except NeedsModel as exc:  # this process's model server, not the client's
            raise exc.in_holder(os.getpid()) from exc
        _tell(request, reflect_notice(report))
        return report

    return _streamed(job, ReflectDone)
