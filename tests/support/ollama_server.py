"""A scripted, Ollama-compatible HTTP server for tests and benchmarks.

Speaks the wire format of the Ollama REST API that the official ``ollama``
Python client (0.6.x) relies on:

* ``POST /api/chat`` -- NDJSON stream (chunked transfer encoding) of
  ``{"model", "created_at", "message": {"role", "content"[, "thinking"]}, "done": false}``
  lines, closed by a ``"done": true`` line carrying ``done_reason`` and the
  timing counters (nanoseconds).  ``"stream": false`` returns one JSON object.
  A mid-stream failure is a line ``{"error": "..."}``.  An unknown model is
  HTTP 404 with ``{"error": "model \\"NAME\\" not found, try pulling it first"}``.
* ``POST /api/generate`` (same replies, text in ``response``), ``GET /api/tags``,
  ``POST /api/show``, ``GET /api/ps``, ``GET /api/version``, ``GET|HEAD /``.

Replies are scripted per test with :meth:`FakeOllama.queue`; when the queue is
empty a ``responder(request_body) -> Reply`` callable (or the deterministic
:func:`default_responder`) decides.

Structured outputs: the ``format`` field of ``/api/chat`` and ``/api/generate``
is ``"json"`` or a JSON schema object (``null``/``""`` mean unset).  Queued
replies are sent as scripted whatever ``format`` says (so tests can script
malformed or schema-invalid JSON); otherwise :func:`default_responder` answers
with JSON valid against the schema, built by :func:`instance_for` (``"json"``
gives ``{}``; a citations schema cites an episode briefed in the messages),
streamed in small pieces or whole, following ``stream`` as usual.  Any other
``format`` value is an ``invalid format`` error, as from Ollama's runner.
Bodies are recorded verbatim in :attr:`FakeOllama.requests`;
:attr:`FakeOllama.format_requests` keeps those that carried ``format``.

Standalone (tmux end-to-end tests, benchmarks)::

    python -m tests.support.ollama_server --port 11435 [--tokens N] [--delay S] [--model NAME]...

prints ``listening on http://127.0.0.1:PORT`` (flushed) and serves forever.

Standard library only.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import math
import re
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = [
    "CITATIONS_MARKER",
    "CpuModel",
    "DEFAULT_MODEL",
    "FakeOllama",
    "Reply",
    "default_responder",
    "find_episode",
    "instance_for",
    "main",
    "split_pieces",
    "tokens_responder",
]

DEFAULT_MODEL = "qwen3:1.7b"
OLLAMA_VERSION = "0.12.0"
CITATIONS_MARKER = "@@CITATIONS@@"
DEFAULT_CONTEXT_LENGTH = 40960  # what qwen3 reports as <arch>.context_length
DEFAULT_NUM_CTX = 4096  # Ollama's default runtime context when options.num_ctx is unset

# Fixed, "realistic" timings (ns) used as floors so tokens/s never divides by zero.
_LOAD_NS = 18_512_345
_PROMPT_NS_PER_TOKEN = 350_000
_EVAL_NS_PER_TOKEN = 12_000_000


# --------------------------------------------------------------------------- replies


def split_pieces(text: str, sizes: int | Sequence[int] = 4) -> list[str]:
    """Split ``text`` into consecutive pieces; ``sizes`` cycles (e.g. ``(3, 4, 5)``)."""
    cycle = (sizes,) if isinstance(sizes, int) else tuple(sizes)
    if not cycle or any(s < 1 for s in cycle):
        raise ValueError("piece sizes must be >= 1")
    pieces: list[str] = []
    i = k = 0
    while i < len(text):
        n = cycle[k % len(cycle)]
        pieces.append(text[i : i + n])
        i += n
        k += 1
    return pieces


@dataclass
class Reply:
    """One scripted model reply.

    content:      content pieces, one NDJSON line each, in order (a plain ``str``
                  is split into ~4-character pieces).
    thinking:     pieces sent as ``message.thinking`` BEFORE the content pieces.
    delay:        seconds to sleep before each line (including the final one).
    error_after:  after this many content pieces, send ``{"error": error_message}``
                  and end the response (non-streaming: HTTP 500 with that body).
    stall_after:  after this many content pieces stop sending but keep the
                  connection open for up to ``stall_seconds`` (or until the server
                  stops), then drop it without finishing the body.
    status:       anything but 200 answers with that HTTP status and
                  ``{"error": error_message}``.
    stream:       ``None`` follows the request's ``"stream"`` field (Ollama
                  defaults to streaming when it is absent); True/False forces it.
    done_reason:  ``done_reason`` of the final line (``"stop"``, ``"length"`` ...).
    gate_after:   after this many content pieces, wait until ``gate`` is set (or the server
                  stops) before sending the rest: a test releases a slow tail when it wants.
    end_after:    after this many content pieces, end the body cleanly without the end
                  marker (no ``done: true`` line; no ``finish_reason`` nor ``[DONE]``).
    torn:         with ``end_after``: the body ends in the middle of a JSON object.
    body:         with status 200, this text as the whole body (``text/html``): a proxy's
                  or a wrong server's page where the model's answer should be.
    """

    content: Sequence[str] = ()
    thinking: Sequence[str] = ()
    delay: float = 0.0
    error_after: int | None = None
    error_message: str = "unexpected server error"
    stall_after: int | None = None
    stall_seconds: float = 30.0
    status: int = 200
    stream: bool | None = None
    done_reason: str = "stop"
    gate_after: int | None = None
    gate: threading.Event | None = None
    end_after: int | None = None
    torn: bool = False
    body: str | None = None
    # Set by a ``CpuModel``: the wait before the first line (reading the prompt), before each
    # content piece (writing), and the done line's counters.
    read_seconds: float = 0.0
    piece_seconds: Sequence[float] = ()
    counters: dict | None = None

    def __post_init__(self) -> None:
        if isinstance(self.content, str):
            self.content = split_pieces(self.content)
        if isinstance(self.thinking, str):
            self.thinking = split_pieces(self.thinking)
        self.content = list(self.content)
        self.thinking = list(self.thinking)

    @property
    def text(self) -> str:
        return "".join(self.content)


@dataclass(frozen=True)
class CpuModel:
    """A model on a CPU, its time scaled by ``scale`` (0.01: a reported second takes 10 ms).

    Reading the prompt costs ``1 / read_tps`` a token for the tokens not shared with the
    previous request's prompt (the server's prompt cache); writing costs ``1 / free_tps`` a
    token, or ``1 / structured_tps`` under a ``format`` (the grammar checked for every
    candidate token). The done line reports the unscaled figures, as a real server would."""

    read_tps: float = 30.0
    free_tps: float = 8.0
    structured_tps: float = 1.0
    scale: float = 0.01

    def pace(self, reply: Reply, body: dict, previous: str) -> tuple[Reply, str]:
        prompt = "\n".join(
            f"{m.get('role')}:{_message_text(m)}"
            for m in body.get("messages") or []
            if isinstance(m, dict)
        )
        shared = 0
        for a, b in zip(prompt, previous, strict=False):
            if a != b:
                break
            shared += 1
        new_tokens = max(1, (len(prompt) - shared) // 4)
        tps = self.structured_tps if _format_of(body) is not None else self.free_tps
        tokens = [max(1, len(piece) // 4) for piece in reply.content]
        reading = new_tokens / self.read_tps
        writing = sum(tokens) / tps
        paced = copy.copy(reply)
        paced.read_seconds = reading * self.scale
        paced.piece_seconds = [n / tps * self.scale for n in tokens]
        paced.counters = {
            "prompt_eval_count": new_tokens,
            "prompt_eval_duration": int(reading * 1e9),
            "eval_count": sum(tokens),
            "eval_duration": int(writing * 1e9),
        }
        return paced, prompt


def _as_reply(value: Reply | str) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(content=split_pieces(value, 4))
    raise TypeError(f"expected Reply or str, got {type(value).__name__}")


# --------------------------------------------------------------------------- default responder

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_EPISODE_RE = re.compile(
    rf"\bepisode\s+(?P<uuid>{_UUID}|[0-9a-f]{{8,}}(?:-[0-9a-f]+)*)\s+\((?P<date>\d{{4}}-\d{{2}}-\d{{2}})\)\s*(?P<title>.*)$",
    re.IGNORECASE,
)
_QUOTE_WORDS = 6
_DEFAULT_PIECE_SIZES = (3, 4, 5, 4)
_THINKING_TEXT = "Looking through the briefing for the episode that answers this."


def _message_text(message: Any) -> str:
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _search_texts(body: dict) -> list[str]:
    """System/briefing messages first, then user messages from the latest back."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = [_message_text(m) for m in messages if m.get("role") == "system"]
    users = [_message_text(m) for m in messages if m.get("role") == "user"]
    return system + users[::-1]


def _iter_episodes(text: str) -> Iterator[tuple[str, str, str, str]]:
    """Every ``episode <uuid> (<date>) <title>`` line followed by a text line."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _EPISODE_RE.search(line)
        if not m:
            continue
        following = next((ln for ln in lines[i + 1 :] if ln.strip()), None)
        if following is None or _EPISODE_RE.search(following):
            continue
        stripped = following.strip().lstrip(">-*•\"' \t")
        words = re.match(rf"\S+(?:[ \t]+\S+){{0,{_QUOTE_WORDS - 1}}}", stripped)
        if not words:
            continue
        quote = words.group(0).rstrip(".,;:!?\"'") or words.group(0)
        yield m.group("uuid"), m.group("date"), m.group("title").strip(), quote


def find_episode(text: str) -> tuple[str, str, str, str] | None:
    """First ``episode <uuid> (<date>) <title>`` line followed by a text line.

    Returns ``(uuid, date, title, quote)`` where ``quote`` is a verbatim
    substring of that text line (its first few words), or ``None``.
    """
    return next(_iter_episodes(text), None)


def _answer_text(body: dict) -> str:
    for text in _search_texts(body):
        found = find_episode(text)
        if found:
            uuid, date, title, quote = found
            citations = [{"episode": uuid, "quote": quote, "support": "verbatim"}]
            label = f' ("{title}")' if title else ""
            prose = f'On {date}{label} you wrote: "{quote}". That seems to be the heart of it.'
            return f"{prose}\n{CITATIONS_MARKER}\n{json.dumps(citations, ensure_ascii=False)}"
    return f"I couldn't find anything about that in your notes.\n{CITATIONS_MARKER}\n[]"


def _wants_thinking(body: dict) -> bool:
    think = body.get("think")
    return bool(think) and think not in ("false", "none")


def default_responder(body: dict) -> Reply:
    """Deterministic answer quoting the first briefed episode, with a citations tail.

    A request carrying ``format`` gets JSON content instead (see :func:`instance_for`);
    a ``format`` that is neither ``"json"`` nor a schema object fails the way
    Ollama's runner does (an error line, or HTTP 500 when not streaming).
    """
    thinking = split_pieces(_THINKING_TEXT, _DEFAULT_PIECE_SIZES) if _wants_thinking(body) else []
    if _format_of(body) is not None:
        try:
            text = _structured_text(body)
        except ValueError as exc:
            return Reply(error_after=0, error_message=str(exc))
    else:
        text = _answer_text(body)
    return Reply(content=split_pieces(text, _DEFAULT_PIECE_SIZES), thinking=thinking)


# --------------------------------------------------------------------------- structured outputs

_MAX_DEPTH = 32  # $ref chains / nesting deeper than this are treated as invalid schemas
_RECURSIVE_DEPTH = 8  # below this depth arrays only get their minItems
_STRING_FORMATS = {
    "date": "2025-01-01",
    "date-time": "2025-01-01T00:00:00Z",
    "time": "00:00:00",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "email": "someone@example.com",
    "uri": "https://example.com/",
}


def _format_of(body: dict) -> Any:
    """The request's ``format``, or ``None`` when unset (Ollama ignores null and "")."""
    fmt = body.get("format")
    return None if fmt is None or fmt == "" else fmt


def _structured_text(body: dict) -> str:
    return json.dumps(instance_for(_format_of(body), body), ensure_ascii=False)


def instance_for(schema: Any, body: dict | None = None) -> Any:
    """A JSON value valid against ``schema``, the ``format`` of a request.

    ``"json"`` gives ``{}``.  Objects get their ``required`` properties (all of
    them when nothing is required); arrays ``minItems`` items (default 1, capped
    by ``maxItems``); strings the first ``enum`` value, the ``const`` or a
    placeholder; integers/numbers their ``minimum`` (else 0, within ``maximum``);
    booleans ``true``.  ``enum``/``const`` win at any level, ``anyOf``/``oneOf``
    take their first branch, ``allOf`` is merged, and ``$ref`` resolves JSON
    pointers into the schema (``#/$defs/...``, ``#/definitions/...``).

    Citation objects -- properties ``episode`` (an enum of episode ids),
    ``quote`` and ``support`` -- are filled from the request ``body``: the first
    enum id that has an ``episode <uuid> (<date>) <title>`` header in the
    messages (the next citation the next such id), ``quote`` the first few words
    of that episode's text line (verbatim) and ``support`` ``"verbatim"``.  With
    no such id: the first enum value and the quote ``""``.

    Raises ``ValueError`` for a ``format`` that is neither ``"json"`` nor an
    object, and for schemas it cannot resolve.
    """
    if schema == "json":
        return {}
    if not isinstance(schema, dict):
        raise ValueError(
            f'invalid format: {json.dumps(schema)}; expected "json" or a valid JSON Schema object'
        )
    return _Instance(schema, body or {}).value(schema, 0)


class _Instance:
    def __init__(self, root: dict, body: dict) -> None:
        self.root = root
        self.body = body
        self.cited = 0
        self._episodes: list[tuple[str, str]] | None = None

    # -- schema plumbing ----------------------------------------------------

    def lookup(self, ref: Any) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise ValueError(f"invalid JSON schema in format: unsupported $ref {ref!r}")
        node: Any = self.root
        for raw in filter(None, ref[1:].split("/")):
            key = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise ValueError(f"invalid JSON schema in format: unresolved $ref {ref!r}")
        return node

    def resolve(self, schema: Any) -> Any:
        """Follow ``$ref``, merge ``allOf``, take the first ``anyOf``/``oneOf`` branch."""
        for _ in range(_MAX_DEPTH):
            if not isinstance(schema, dict):
                return schema
            rest = dict(schema)
            if "$ref" in rest:
                target = self.lookup(rest.pop("$ref"))
                schema = {**target, **rest} if isinstance(target, dict) and rest else target
            elif isinstance(rest.get("allOf"), list):
                merged: dict[str, Any] = {}
                for part in [*rest.pop("allOf"), rest]:
                    part = self.resolve(part)
                    if not isinstance(part, dict):
                        continue
                    for key, val in part.items():
                        if key == "properties" and isinstance(val, dict):
                            merged["properties"] = {**merged.get("properties", {}), **val}
                        elif key == "required" and isinstance(val, list):
                            merged["required"] = [*merged.get("required", []), *val]
                        else:
                            merged.setdefault(key, val)
                schema = merged
            elif any(isinstance(rest.get(k), list) and rest[k] for k in ("anyOf", "oneOf")):
                key = "anyOf" if isinstance(rest.get("anyOf"), list) and rest["anyOf"] else "oneOf"
                branch = rest.pop(key)[0]
                rest.pop("anyOf", None)
                rest.pop("oneOf", None)
                branch = self.resolve(branch)
                schema = {**rest, **branch} if isinstance(branch, dict) else branch
            else:
                return schema
        raise ValueError("invalid JSON schema in format: $ref chain too deep")

    # -- values -------------------------------------------------------------

    def value(self, schema: Any, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise ValueError("invalid JSON schema in format: nested too deeply")
        schema = self.resolve(schema)
        if schema is True or schema == {}:
            return {}
        if not isinstance(schema, dict):
            raise ValueError(f"invalid JSON schema in format: {schema!r}")
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return schema["enum"][0]
        kind = self.kind(schema)
        if kind == "object":
            return self.object(schema, depth)
        if kind == "array":
            return self.array(schema, depth)
        if kind == "string":
            return self.string(schema)
        if kind in ("integer", "number"):
            return self.number(schema, integer=kind == "integer")
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return {}

    @staticmethod
    def kind(schema: dict) -> str | None:
        kind = schema.get("type")
        if isinstance(kind, list):
            return next((k for k in kind if k != "null"), "null" if kind else None)
        if isinstance(kind, str):
            return kind
        if any(k in schema for k in ("properties", "required", "additionalProperties")):
            return "object"
        if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems")):
            return "array"
        if any(k in schema for k in ("minLength", "maxLength", "pattern", "format")):
            return "string"
        if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum")):
            return "number"
        return None

    def object(self, schema: dict, depth: int) -> dict:
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required")
        keys = list(required) if isinstance(required, list) and required else list(props)
        extra = schema.get("additionalProperties")
        citation = self.citation(props) if "episode" in props and "quote" in props else {}
        out: dict[str, Any] = {}
        for key in keys:
            if key in citation:
                out[key] = citation[key]
            else:
                sub = props.get(key, extra if isinstance(extra, dict) else {})
                out[key] = self.value(sub, depth + 1)
        return out

    def array(self, schema: dict, depth: int) -> list:
        items = schema.get("items", {})
        prefix = schema.get("prefixItems")
        if isinstance(items, list):  # draft-04 tuple form
            prefix, items = items, schema.get("additionalItems", {})
        prefix = prefix if isinstance(prefix, list) else []
        low = schema.get("minItems")
        count = low if isinstance(low, int) else (1 if depth < _RECURSIVE_DEPTH else 0)
        high = schema.get("maxItems")
        if isinstance(high, int):
            count = min(count, high)
        out = []
        for i in range(count):
            if i < len(prefix):
                out.append(self.value(prefix[i], depth + 1))
            elif items is False:
                break
            else:
                out.append(self.value(items, depth + 1))
        return out

    @staticmethod
    def string(schema: dict) -> str:
        text = _STRING_FORMATS.get(str(schema.get("format")), "text")
        low, high = schema.get("minLength"), schema.get("maxLength")
        if isinstance(low, int) and len(text) < low:
            text += "x" * (low - len(text))
        if isinstance(high, int):
            text = text[:high]
        return text

    @staticmethod
    def number(schema: dict, *, integer: bool) -> int | float:
        def num(key: str) -> float | None:
            val = schema.get(key)
            ok = isinstance(val, int | float) and not isinstance(val, bool)
            return val if ok else None

        low, x_low = num("minimum"), num("exclusiveMinimum")
        high, x_high = num("maximum"), num("exclusiveMaximum")
        if low is not None:
            val: float = math.ceil(low) if integer else low
        elif x_low is not None:
            val = math.floor(x_low) + 1 if integer else x_low + 1
        else:
            val = 0
        if high is not None and val > high:
            val = math.floor(high) if integer else high
        if x_high is not None and val >= x_high:
            val = math.ceil(x_high) - 1 if integer else x_high - 1
        return int(val) if integer else val

    # -- citations ----------------------------------------------------------

    def episodes(self) -> list[tuple[str, str]]:
        """``(uuid, quote)`` of every briefed episode, in search order."""
        if self._episodes is None:
            self._episodes = [
                (uuid, quote)
                for text in _search_texts(self.body)
                for uuid, _date, _title, quote in _iter_episodes(text)
            ]
        return self._episodes

    @staticmethod
    def choices(schema: Any) -> list | None:
        if not isinstance(schema, dict):
            return None
        if "const" in schema:
            return [schema["const"]]
        enum = schema.get("enum")
        return enum if isinstance(enum, list) and enum else None

    def citation(self, props: dict) -> dict[str, Any]:
        allowed = self.choices(self.resolve(props["episode"]))
        by_id = {str(v).lower(): v for v in allowed} if allowed else None
        matches: list[tuple[Any, str]] = []
        for uuid, quote in self.episodes():
            if by_id is None:
                matches.append((uuid, quote))
            elif uuid.lower() in by_id and all(m[0] != by_id[uuid.lower()] for m in matches):
                matches.append((by_id[uuid.lower()], quote))
        if matches:
            episode, quote = matches[self.cited % len(matches)]
            self.cited += 1
        else:
            episode = allowed[0] if allowed else self.string(self.resolve(props["episode"]))
            quote = ""
        out: dict[str, Any] = {"episode": episode, "quote": quote}
        if "support" in props:
            support = self.choices(self.resolve(props["support"]))
            out["support"] = "verbatim" if support is None or "verbatim" in support else support[0]
        return out


_FILLER = (
    *("the", "quiet", "morning", "light", "settled", "over", "the", "kitchen"),
    *("table", "while", "you", "wrote", "about", "the", "walk", "by", "the"),
    *("river", "and", "what", "your", "sister", "said", "about", "moving"),
    *("house", "before", "the", "winter", "came", "again"),
)


def tokens_responder(tokens: int, delay: float = 0.0) -> Callable[[dict], Reply]:
    """Benchmark responder: ``tokens`` content pieces of a few words, then the citations tail."""

    def respond(body: dict) -> Reply:
        if _format_of(body) is not None:  # structured request: just the JSON
            reply = default_responder(body)
            reply.delay = delay
            return reply
        pieces = []
        for i in range(tokens):
            words = [_FILLER[(i * 3 + k) % len(_FILLER)] for k in range(3)]
            pieces.append(" ".join(words) + " ")
        tail = _answer_text(body)
        tail = tail[tail.index(CITATIONS_MARKER) - 1 :]  # "\n@@CITATIONS@@\n[...]"
        pieces += split_pieces(tail, _DEFAULT_PIECE_SIZES)
        return Reply(content=pieces, delay=delay)

    return respond


# --------------------------------------------------------------------------- model metadata


def _normalize(name: str) -> str:
    name = name.strip()
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last else f"{name}:latest"


def _now_iso(offset: timedelta = timedelta(0)) -> str:
    return (datetime.now(UTC) + offset).strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"


def _family(name: str) -> str:
    base = name.rsplit("/", 1)[-1].split(":", 1)[0]
    m = re.match(r"[A-Za-z]+\d*", base)
    return (m.group(0) if m else base or "llama").lower()


def _parameter_size(name: str) -> str:
    tag = name.rsplit(":", 1)[-1] if ":" in name else ""
    m = re.match(r"(\d+(?:\.\d+)?)([bm])\b", tag, re.IGNORECASE)
    return f"{m.group(1)}{m.group(2).upper()}" if m else "7.6B"


def _digest(name: str) -> str:
    return hashlib.sha256(_normalize(name).encode()).hexdigest()


def _size(name: str) -> int:
    return 1_000_000_000 + int(_digest(name)[:5], 16) * 500


def _details(name: str) -> dict:
    family = _family(name)
    return {
        "parent_model": "",
        "format": "gguf",
        "family": family,
        "families": [family],
        "parameter_size": _parameter_size(name),
        "quantization_level": "Q4_K_M",
    }


# --------------------------------------------------------------------------- server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    fake: FakeOllama

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up (or stop() closing sockets) is routine here.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _Dropped(Exception):
    """The response was abandoned (client went away, server stopping, or a stall)."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeOllama"
    server: _Server

    def version_string(self) -> str:
        return self.server_version

    # -- plumbing ---------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.fake._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send_bytes(self, status: int, body: bytes, content_type: str, head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _send_json(self, status: int, obj: Any) -> None:
        body = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
        self._send_bytes(status, body, "application/json; charset=utf-8")

    def _send_error_json(self, status: int, message: str) -> None:
        self._send_json(status, {"error": message})

    def _not_found(self) -> None:
        self._send_bytes(404, b"404 page not found", "text/plain")

    def _json_body(self) -> dict | None:
        raw = self._read_body()
        try:
            body = json.loads(raw or b"{}")
        except ValueError as exc:
            self._send_error_json(400, f"invalid request body: {exc}")
            return None
        if not isinstance(body, dict):
            self._send_error_json(400, "invalid request body: expected a JSON object")
            return None
        return body

    # -- dispatch ---------------------------------------------------------

    def do_HEAD(self) -> None:
        self.server.fake._hit("HEAD", self.path)
        if self.path in ("/", ""):
            self._send_bytes(200, b"Ollama is running", "text/plain; charset=utf-8", head=True)
        else:
            self._send_bytes(404, b"404 page not found", "text/plain", head=True)

    def do_GET(self) -> None:
        fake = self.server.fake
        fake._hit("GET", self.path)
        path = self.path.split("?", 1)[0]
        if path in ("/", ""):
            self._send_bytes(200, b"Ollama is running", "text/plain; charset=utf-8")
        elif path == "/api/version":
            self._send_json(200, {"version": OLLAMA_VERSION})
        elif path == "/api/tags":
            self._send_json(200, fake._tags())
        elif path == "/api/ps":
            self._send_json(200, fake._ps())
        else:
            self._not_found()

    def do_POST(self) -> None:
        fake = self.server.fake
        fake._hit("POST", self.path)
        path = self.path.split("?", 1)[0]
        if path not in ("/api/chat", "/api/generate", "/api/show"):
            self._read_body()
            self._not_found()
            return
        body = self._json_body()
        if body is None:
            return
        if path == "/api/show":
            self._show(body)
            return
        fake._record(body)
        try:
            self._complete(body, chat=path == "/api/chat")
        except (_Dropped, OSError):  # client gone, server stopping, or a stall
            self.close_connection = True

    # -- endpoints --------------------------------------------------------

    def _show(self, body: dict) -> None:
        fake = self.server.fake
        name = body.get("model") or body.get("name") or ""
        if not name:
            self._send_error_json(400, "model is required")
        elif not fake._has_model(name):
            self._send_error_json(404, f'model "{name}" not found, try pulling it first')
        else:
            self._send_json(200, fake._show(name))

    def _complete(self, body: dict, *, chat: bool) -> None:
        fake = self.server.fake
        model = body.get("model") or ""
        if not model:
            self._send_error_json(400, "model is required")
            return
        if not fake._has_model(model):
            self._send_error_json(404, f'model "{model}" not found, try pulling it first')
            return
        fake._mark_loaded(model, body)

        # Empty conversation / prompt: load (or unload with keep_alive 0) the model.
        empty = not body.get("messages") if chat else not body.get("prompt")
        if empty:
            unload = body.get("keep_alive") in (0, "0", "0s", 0.0)
            frame = self._frame(model, chat, content="")
            frame.update(done=True, done_reason="unload" if unload else "load")
            self._send_json(200, frame)
            return

        started = time.monotonic_ns()
        reply = fake._next_reply(body if chat else _generate_as_chat(body))
        if reply.status != 200:
            self._send_error_json(reply.status, reply.error_message)
            return
        if reply.body is not None:
            self._send_bytes(200, reply.body.encode(), "text/html; charset=utf-8")
            return
        streaming = (
            reply.stream if reply.stream is not None else body.get("stream", True) is not False
        )
        prompt_tokens = _prompt_tokens(body)
        if fake.cpu is not None and chat:
            reply, fake._last_prompt = fake.cpu.pace(reply, body, fake._last_prompt)
        if streaming:
            self._stream(model, chat, reply, started, prompt_tokens)
        else:
            self._single(model, chat, reply, started, prompt_tokens)

    # -- completion bodies --------------------------------------------------

    @staticmethod
    def _frame(model: str, chat: bool, content: str, thinking: str | None = None) -> dict:
        frame: dict[str, Any] = {"model": model, "created_at": _now_iso()}
        if chat:
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if thinking:
                message["thinking"] = thinking
            frame["message"] = message
        else:
            frame["response"] = content
            if thinking:
                frame["thinking"] = thinking
        frame["done"] = False
        return frame

    @staticmethod
    def _final(
        frame: dict,
        reply: Reply,
        started: int,
        first_content: int | None,
        prompt_tokens: int,
    ) -> dict:
        now = time.monotonic_ns()
        eval_count = len(reply.content)
        first = first_content or now
        prompt_ns = max(first - started, prompt_tokens * _PROMPT_NS_PER_TOKEN)
        eval_ns = max(now - first, max(eval_count, 1) * _EVAL_NS_PER_TOKEN)
        frame.update(
            done=True,
            done_reason=reply.done_reason,
            total_duration=_LOAD_NS + prompt_ns + eval_ns + 250_000,
            load_duration=_LOAD_NS,
            prompt_eval_count=prompt_tokens,
            prompt_eval_duration=prompt_ns,
            eval_count=eval_count,
            eval_duration=eval_ns,
        )
        if reply.counters:
            frame.update(reply.counters)
        if "response" in frame:
            frame["context"] = list(range(1, min(prompt_tokens + eval_count, 32) + 1))
        return frame

    def _wait(self, seconds: float) -> None:
        if seconds > 0 and self.server.fake._stopping.wait(seconds):
            raise _Dropped
        if self.server.fake._stopping.is_set():
            raise _Dropped

    def _stall(self, reply: Reply) -> None:
        self.server.fake._stopping.wait(max(reply.stall_seconds, 0.0))
        raise _Dropped

    def _gated(self, gate: threading.Event) -> None:
        """Wait for a test to release the rest of the reply (or for the server to stop)."""
        stopping = self.server.fake._stopping
        while not gate.wait(0.05):
            if stopping.is_set():
                raise _Dropped

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _write_line(self, obj: dict) -> None:
        line = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._write_chunk(line.encode())

    def _stream(
        self, model: str, chat: bool, reply: Reply, started: int, prompt_tokens: int
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

        for piece in reply.thinking:
            self._wait(reply.delay)
            self._write_line(self._frame(model, chat, content="", thinking=piece))

        first_content: int | None = None
        self._wait(reply.read_seconds)
        for index, piece in enumerate([*reply.content, None]):
            if reply.error_after is not None and index == reply.error_after:
                self._wait(reply.delay)
                self._write_line({"error": reply.error_message})
                self._write_chunk(b"")  # terminating chunk
                self.close_connection = True
                return
            if reply.stall_after is not None and index == reply.stall_after:
                self._stall(reply)
            if reply.gate is not None and index == reply.gate_after:
                self._gated(reply.gate)
            if reply.end_after is not None and index == reply.end_after:
                if reply.torn:
                    self._write_chunk(b'{"model":"' + model.encode() + b'","message":{"ro')
                self._write_chunk(b"")  # terminating chunk: a clean end, no done line
                self.close_connection = True
                return
            if piece is None:
                break
            self._wait(
                reply.piece_seconds[index] if index < len(reply.piece_seconds) else reply.delay
            )
            if first_content is None:
                first_content = time.monotonic_ns()
            self._write_line(self._frame(model, chat, content=piece))

        self._wait(reply.delay)
        final = self._final(
            self._frame(model, chat, content=""),
            reply,
            started,
            first_content,
            prompt_tokens,
        )
        self._write_line(final)
        self._write_chunk(b"")

    def _single(
        self, model: str, chat: bool, reply: Reply, started: int, prompt_tokens: int
    ) -> None:
        # Same cut-off rules as the stream (the error wins a tie), but nothing is
        # sent before the cut: an error becomes HTTP 500, a stall a dropped request.
        n = len(reply.content)
        cuts = []
        if reply.error_after is not None and reply.error_after <= n:
            cuts.append((reply.error_after, 0, "error"))
        if reply.stall_after is not None and reply.stall_after <= n:
            cuts.append((reply.stall_after, 1, "stall"))
        cut = min(cuts) if cuts else None
        lines = len(reply.thinking) + (cut[0] if cut else n) + 1
        self._wait(reply.delay * lines + reply.read_seconds + sum(reply.piece_seconds))
        if cut and cut[2] == "error":
            self._send_error_json(500, reply.error_message)
            return
        if cut:
            self._stall(reply)
        frame = self._frame(
            model, chat, content=reply.text, thinking="".join(reply.thinking) or None
        )
        first = started + 1 if reply.content else None
        self._send_json(200, self._final(frame, reply, started, first, prompt_tokens))


def _generate_as_chat(body: dict) -> dict:
    messages = []
    if isinstance(body.get("system"), str) and body["system"]:
        messages.append({"role": "system", "content": body["system"]})
    messages.append({"role": "user", "content": str(body.get("prompt") or "")})
    return {**body, "messages": messages}


def _prompt_tokens(body: dict) -> int:
    chars = 0
    for m in body.get("messages") or []:
        chars += len(_message_text(m))
    for key in ("prompt", "system"):
        if isinstance(body.get(key), str):
            chars += len(body[key])
    return max(1, chars // 4)


class FakeOllama:
    """Ollama-compatible server on loopback, scripted per test.

    Usage::

        with FakeOllama() as srv:
            srv.queue(Reply(content=["Hel", "lo"]))
            ollama.Client(host=srv.url).chat(model="qwen3:1.7b", messages=msgs, stream=True)
    """

    def __init__(
        self,
        models: Iterable[str] = (DEFAULT_MODEL,),
        responder: Callable[[dict], Reply | str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        context_length: int = DEFAULT_CONTEXT_LENGTH,
        cpu: CpuModel | None = None,
    ) -> None:
        self.models: list[str] = list(models)
        self.cpu = cpu  # paces replies like a model on a CPU (``CpuModel``)
        self._last_prompt = ""
        self.responder = responder
        self.host = host
        self.port = port
        self.context_length = context_length
        # JSON bodies of /api/chat and /api/generate, in arrival order.
        self.requests: list[dict] = []
        # (method, path) of every request, any endpoint.
        self.hits: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._replies: deque[Reply] = deque()
        self._loaded: dict[str, int] = {}  # model -> num_ctx of its last use
        self._conns: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    # -- lifecycle --------------------------------------------------------

    def start(self) -> Self:
        if self._server is not None:
            return self
        self._stopping.clear()
        server = _Server((self.host, self.port), _Handler)
        server.fake = self
        self._server = server
        self.port = server.server_address[1]
        self.url = f"http://{self.host}:{self.port}"
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-ollama",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()  # wakes stalled / delayed handlers
        server.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:  # unblock handlers parked on keep-alive reads
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
        """Next /api/chat (and /api/generate) calls take these replies, in order."""
        converted = [_as_reply(r) for r in replies]
        with self._lock:
            self._replies.extend(converted)

    @property
    def format_requests(self) -> list[dict]:
        """Recorded bodies that carried ``format`` (``"json"`` or a schema), in order."""
        with self._lock:
            return [b for b in self.requests if _format_of(b) is not None]

    @property
    def pending(self) -> int:
        """How many queued replies have not been used yet."""
        with self._lock:
            return len(self._replies)

    # -- internals used by the handler --------------------------------------

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    def _hit(self, method: str, path: str) -> None:
        with self._lock:
            self.hits.append((method, path))

    def _record(self, body: dict) -> None:
        # A deep copy: ``format`` and the rest stay verbatim whatever a responder does.
        with self._lock:
            self.requests.append(copy.deepcopy(body))

    def _has_model(self, name: str) -> bool:
        wanted = _normalize(name)
        return any(_normalize(m) == wanted for m in list(self.models))

    def _mark_loaded(self, name: str, body: dict) -> None:
        options = body.get("options") if isinstance(body.get("options"), dict) else {}
        num_ctx = (
            options.get("num_ctx") if isinstance(options.get("num_ctx"), int) else DEFAULT_NUM_CTX
        )
        with self._lock:
            self._loaded[name] = num_ctx

    def _next_reply(self, body: dict) -> Reply:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        responder = self.responder or default_responder
        return _as_reply(responder(body))

    def _tags(self) -> dict:
        modified = _now_iso(-timedelta(days=3))
        return {
            "models": [
                {
                    "name": name,
                    "model": name,
                    "modified_at": modified,
                    "size": _size(name),
                    "digest": _digest(name),
                    "details": _details(name),
                }
                for name in list(self.models)
            ]
        }

    def _ps(self) -> dict:
        expires = _now_iso(timedelta(minutes=5))
        with self._lock:
            loaded = dict(self._loaded)
        return {
            "models": [
                {
                    "name": name,
                    "model": name,
                    "size": _size(name),
                    "digest": _digest(name),
                    "details": _details(name),
                    "expires_at": expires,
                    "size_vram": _size(name),
                    "context_length": num_ctx,
                }
                for name, num_ctx in loaded.items()
                if self._has_model(name)
            ]
        }

    def _show(self, name: str) -> dict:
        family = _family(name)
        return {
            "license": "Apache License 2.0",
            "modelfile": f'# Modelfile generated by "ollama show"\nFROM {name}\n',
            "parameters": 'repeat_penalty 1\nstop "<|im_start|>"\nstop "<|im_end|>"\ntemperature 0.6\ntop_k 20\ntop_p 0.95',
            "template": "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n",
            "details": _details(name),
            "model_info": {
                "general.architecture": family,
                "general.basename": family,
                "general.file_type": 15,
                "general.parameter_count": 2_031_739_904,
                "general.quantization_version": 2,
                f"{family}.attention.head_count": 16,
                f"{family}.attention.head_count_kv": 8,
                f"{family}.block_count": 28,
                f"{family}.context_length": self.context_length,
                f"{family}.embedding_length": 2048,
                f"{family}.feed_forward_length": 6144,
                "tokenizer.ggml.model": "gpt2",
            },
            "tensors": [],
            "capabilities": ["completion", "tools", "thinking"],
            "modified_at": _now_iso(-timedelta(days=3)),
        }


# --------------------------------------------------------------------------- standalone


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.ollama_server",
        description="Serve a scripted Ollama-compatible API with the default responder.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=11435, help="0 picks a free port")
    parser.add_argument(
        "--tokens",
        type=int,
        default=None,
        help="reply with N content pieces + citations tail",
    )
    parser.add_argument(
        "--delay", type=float, default=0.0, help="seconds before each streamed line"
    )
    parser.add_argument("--model", action="append", dest="models", help="served model (repeatable)")
    args = parser.parse_args(argv)

    if args.tokens is not None:
        responder: Callable[[dict], Reply] = tokens_responder(args.tokens, args.delay)
    elif args.delay:
        delay = args.delay

        def responder(body: dict) -> Reply:
            reply = default_responder(body)
            reply.delay = delay
            return reply

    else:
        responder = default_responder

    def _terminate(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _terminate)
    srv = FakeOllama(
        models=args.models or (DEFAULT_MODEL,),
        responder=responder,
        host=args.host,
        port=args.port,
    )
    with srv:
        print(f"listening on {srv.url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
