"""A scripted, OpenAI-compatible HTTP server for tests (the chat-completions protocol that
llama.cpp's llama-server, LM Studio, vLLM and hosted endpoints speak), on loopback.

Speaks what the official ``openai`` Python client relies on:

* ``POST /v1/chat/completions`` -- with ``"stream": true`` server-sent events over chunked
  HTTP/1.1: ``data: {chat.completion.chunk}`` with ``choices[0].delta.content`` (and the
  reasoning in ``delta.reasoning_content``, or the field named by ``reasoning_field``), a
  chunk with ``finish_reason``, then a usage chunk (``choices: []``) when the request asked
  ``stream_options.include_usage``, then ``data: [DONE]``. A mid-stream failure is
  ``data: {"error": {...}}``. Without ``stream`` one ``chat.completion`` object.
* ``GET /v1/models`` -- ``{"object": "list", "data": [{"id": ...}, ...]}``.
* Errors as OpenAI sends them, ``{"error": {"message", "type", "code"}}``: 401 for a wrong
  or missing key (when the server has one), 404 ``model_not_found`` for an unknown model, and
  what a server that does not know an option says about it (``rejects``).

Replies are the Ollama fake's :class:`~tests.support.ollama_server.Reply` (content pieces,
thinking pieces, delay, ``error_after``, ``stall_after``, ``status``, ``done_reason``),
scripted per test with :meth:`FakeOpenAI.queue`; otherwise the Ollama fake's deterministic
``default_responder`` answers, so the same script gives the same text under both protocols.
A request with ``response_format`` (a JSON schema, or ``json_object`` with llama-cpp-python's
``schema``) gets JSON valid against it, as ``format`` does there.

Standalone: ``python -m tests.support.openai_server --port 8089`` prints ``listening on
http://127.0.0.1:PORT/v1`` and serves forever. Standard library only.
"""

from __future__ import annotations

import argparse
import copy
import json
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from tests.support.ollama_server import DEFAULT_MODEL, Reply, _as_reply, default_responder

__all__ = ["FakeOpenAI", "Reply", "ollama_body"]

FORMATS = ("json_schema", "json_object")


def ollama_body(body: dict) -> dict:
    """The request as the Ollama fake's responder reads it: the messages, and ``format``
    from ``response_format`` (a schema, ``"json"`` for a bare ``json_object``)."""
    fmt = body.get("response_format") if isinstance(body.get("response_format"), dict) else {}
    schema: Any = None
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema") or "json"
    elif fmt.get("type") == "json_object":
        schema = fmt.get("schema") or "json"
    return {"messages": body.get("messages") or [], "format": schema}


class FakeOpenAI:
    """OpenAI-compatible server on loopback, scripted per test.

    ``formats``: the ``response_format`` types it accepts (others are refused the way a
    server that lacks them refuses: ``reject_status`` with a message naming the field).
    ``usage``: ``"yes"`` (honours ``stream_options``), ``"ignore"`` (accepts it, sends no
    usage chunk) or ``"reject"`` (a 400 naming ``stream_options``). ``key``: the bearer key
    it requires (None: any or none)."""

    def __init__(
        self,
        models: Iterable[str] = (DEFAULT_MODEL,),
        responder: Callable[[dict], Reply | str] | None = None,
        *,
        formats: Sequence[str] = FORMATS,
        reject_status: int = 400,
        usage: str = "yes",
        key: str | None = None,
        reasoning_field: str = "reasoning_content",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.models = list(models)
        self.responder = responder
        self.formats = tuple(formats)
        self.reject_status = reject_status
        self.usage = usage
        self.key = key
        self.reasoning_field = reasoning_field
        self.host, self.port = host, port
        self.requests: list[dict] = []  # bodies of /chat/completions, in arrival order
        self.hits: list[tuple[str, str]] = []  # (method, path) of every request
        self.authorizations: list[str] = []  # the Authorization header of each request
        self._lock = threading.Lock()
        self._replies: deque[Reply] = deque()
        self._conns: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""  # the base URL, ending in /v1

    # -- lifecycle --------------------------------------------------------

    def start(self) -> Self:
        if self._server is not None:
            return self
        self._stopping.clear()
        server = _Server((self.host, self.port), _Handler)
        server.fake = self
        self._server = server
        self.port = server.server_address[1]
        self.url = f"http://{self.host}:{self.port}/v1"
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting --------------------------------------------------------

    def queue(self, *replies: Reply | str) -> None:
        """The next chat completions take these replies, in order."""
        with self._lock:
            self._replies.extend(_as_reply(r) for r in replies)

    @property
    def format_requests(self) -> list[dict]:
        """Recorded bodies that carried ``response_format``."""
        with self._lock:
            return [b for b in self.requests if b.get("response_format")]

    def _next_reply(self, body: dict) -> Reply:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        return _as_reply((self.responder or default_responder)(ollama_body(body)))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    fake: FakeOpenAI

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _Dropped(Exception):
    """The response was abandoned (client gone, server stopping, or a stall)."""


def _error(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeOpenAI"
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.fake._lock:
            self.server.fake._conns.add(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            with self.server.fake._lock:
                self.server.fake._conns.discard(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- plumbing ---------------------------------------------------------

    def _send_json(self, status: int, obj: Any) -> None:
        body = json.dumps(obj, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _event(self, obj: Any) -> None:
        data = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
        self._chunk(f"data: {data}\n\n".encode())

    def _wait(self, seconds: float) -> None:
        stopping = self.server.fake._stopping
        if (seconds > 0 and stopping.wait(seconds)) or stopping.is_set():
            raise _Dropped

    def _authorised(self) -> bool:
        fake = self.server.fake
        given = self.headers.get("Authorization", "")
        with fake._lock:
            fake.authorizations.append(given)
        if fake.key is None or given == f"Bearer {fake.key}":
            return True
        self._send_json(401, _error("Incorrect API key provided.", code="invalid_api_key"))
        return False

    # -- dispatch ---------------------------------------------------------

    def do_GET(self) -> None:
        fake = self.server.fake
        with fake._lock:
            fake.hits.append(("GET", self.path))
        if not self._authorised():
            return
        if self.path.split("?", 1)[0].rstrip("/") == "/v1/models":
            data = [
                {"id": name, "object": "model", "created": 1_700_000_000, "owned_by": "tests"}
                for name in fake.models
            ]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, _error(f"no route {self.path}"))

    def do_POST(self) -> None:
        fake = self.server.fake
        with fake._lock:
            fake.hits.append(("POST", self.path))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self._authorised():
            return
        if self.path.split("?", 1)[0].rstrip("/") != "/v1/chat/completions":
            self._send_json(404, _error(f"no route {self.path}"))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, _error("invalid JSON body"))
            return
        with fake._lock:
            fake.requests.append(copy.deepcopy(body))
        try:
            self._complete(body)
        except (_Dropped, OSError):
            self.close_connection = True

    def _refused(self, body: dict) -> dict | None:
        """What a server says about a request it cannot take, or None."""
        fake = self.server.fake
        model = str(body.get("model") or "")
        if model not in fake.models:
            message = f"The model `{model}` does not exist or you do not have access to it."
            return {"status": 404, **_error(message, code="model_not_found")}
        fmt = body.get("response_format")
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind not in (None, "text") and kind not in fake.formats:
            message = f"response_format type {kind!r} is not supported by this server"
            return {"status": fake.reject_status, **_error(message)}
        if "stream_options" in body and fake.usage == "reject":
            message = "Unrecognized request argument supplied: stream_options"
            return {"status": 400, **_error(message)}
        return None

    def _complete(self, body: dict) -> None:
        refused = self._refused(body)
        if refused is not None:
            self._send_json(refused.pop("status"), refused)
            return
        reply = self.server.fake._next_reply(body)
        if reply.status != 200:
            self._send_json(reply.status, _error(reply.error_message, "server_error"))
            return
        if reply.body is not None:
            page = reply.body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return
        streaming = reply.stream if reply.stream is not None else body.get("stream") is True
        if streaming:
            self._stream(body, reply)
        else:
            self._single(body, reply)

    def _frame(self, body: dict, delta: dict, finish: str | None = None) -> dict:
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def _usage(self, body: dict, reply: Reply) -> dict:
        prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages") or [])
        prompt_tokens = max(1, prompt // 4)
        completion = len(reply.content) + len(reply.thinking)
        return {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
        }

    def _stream(self, body: dict, reply: Reply) -> None:
        fake = self.server.fake
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        self._event(self._frame(body, {"role": "assistant", "content": ""}))
        for piece in reply.thinking:
            self._wait(reply.delay)
            self._event(self._frame(body, {fake.reasoning_field: piece}))
        for index, piece in enumerate([*reply.content, None]):
            if reply.error_after is not None and index == reply.error_after:
                self._wait(reply.delay)
                self._event(_error(reply.error_message, "server_error"))
                self._chunk(b"")
                self.close_connection = True
                return
            if reply.stall_after is not None and index == reply.stall_after:
                fake._stopping.wait(max(reply.stall_seconds, 0.0))
                raise _Dropped
            if reply.end_after is not None and index == reply.end_after:
                if reply.torn:
                    self._chunk(b'data: {"id":"chatcmpl-test","choices":[{"ind')
                self._chunk(b"")  # a clean end of the body: no finish_reason, no [DONE]
                self.close_connection = True
                return
            if piece is None:
                break
            self._wait(reply.delay)
            self._event(self._frame(body, {"content": piece}))
        self._event(self._frame(body, {}, reply.done_reason or "stop"))
        options = body.get("stream_options") or {}
        if fake.usage == "yes" and options.get("include_usage"):
            usage = {**self._frame(body, {}), "choices": [], "usage": self._usage(body, reply)}
            self._event(usage)
        self._event("[DONE]")
        self._chunk(b"")

    def _single(self, body: dict, reply: Reply) -> None:
        if reply.error_after is not None:
            self._send_json(500, _error(reply.error_message, "server_error"))
            return
        self._wait(reply.delay * (len(reply.content) + 1))
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.thinking:
            message[self.server.fake.reasoning_field] = "".join(reply.thinking)
        self._send_json(
            200,
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model"),
                "choices": [
                    {"index": 0, "message": message, "finish_reason": reply.done_reason or "stop"}
                ],
                "usage": self._usage(body, reply),
            },
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.openai_server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089, help="0 picks a free port")
    parser.add_argument("--model", action="append", dest="models", help="served model")
    args = parser.parse_args(argv)

    def _terminate(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _terminate)
    with FakeOpenAI(models=args.models or (DEFAULT_MODEL,), host=args.host, port=args.port) as srv:
        print(f"listening on {srv.url}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
