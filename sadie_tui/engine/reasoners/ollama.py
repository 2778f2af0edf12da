"""The Ollama reasoner, through the official client's AsyncClient.

The client has no timeout by default (a stalled server hangs forever), so connect and read
timeouts are explicit; ``num_ctx`` is sized to the briefing (Ollama's default of 4096 drops
the oldest messages silently). Every failure becomes one ``ModelError`` with a fix.
"""

from __future__ import annotations

import asyncio
import functools
import json
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

import httpx

from ..errors import (
    ModelError,
    ModelMissing,
    ModelStreamError,
    ModelTimeout,
    ModelUnreachable,
    in_words,
)
from .base import Piece, within
from .bodies import cut_short, not_a_reply
from .rates import Budget, Rates

if TYPE_CHECKING:
    import ollama

    from ..jsonvalue import JSONObject
    from ..prompt import Briefing


class ChatExtras(TypedDict, total=False):
    """What a chat request carries besides the messages and options (``_request``)."""

    think: bool
    keep_alive: str


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's default TLS context, made once: making one loads the CA bundle (~20 ms), and
    every turn makes a client (two with the citation pass), which used to make one each."""
    return httpx.create_ssl_context()


def _client(
    host: str, connect: float, read: float, sent: Callable[[], None] | None = None
) -> ollama.AsyncClient:
    # lazy: the ollama client (and its pydantic models) load with the first request
    import ollama

    timeout = httpx.Timeout(connect=connect, read=read, write=10.0, pool=connect)
    hooks = {"request": [_tracing(sent)]} if sent is not None else {}
    return ollama.AsyncClient(host=host, timeout=timeout, verify=_tls(), event_hooks=hooks)


def _tracing(sent: Callable[[], None]) -> Callable[[httpx.Request], Awaitable[None]]:
    """A request hook that calls ``sent`` once httpcore has written the request's body (its
    ``trace`` extension): the moment the model has the whole request."""

    async def trace(name: str, info: Mapping[str, object]) -> None:
        if name.endswith("send_request_body.complete"):
            sent()

    async def hook(request: httpx.Request) -> None:
        request.extensions["trace"] = trace

    return hook


async def _close(client: ollama.AsyncClient) -> None:
    try:
        await client._client.aclose()
    except Exception:  # noqa: BLE001 - closing a broken transport must not mask the error
        pass


def translate(exc: BaseException, host: str, model: str) -> ModelError:
    """Map client and transport failures to one-line errors (by status code, not text)."""
    # lazy: ollama loads only when translate runs, off the start-up path
    import ollama

    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, ollama.ResponseError):
        if exc.status_code == 404:
            return ModelMissing(
                f"the model {model} is not pulled on {host}", fix=f"run `ollama pull {model}`"
            )
        text = " ".join(str(exc.error).split())[:300]
        if exc.status_code == -1:
            return ModelStreamError(f"the model stopped with an error mid-reply: {text}")
        return ModelError(f"Ollama answered {exc.status_code}: {text}")
    if isinstance(exc, httpx.TimeoutException):
        kind = "connect" if isinstance(exc, httpx.ConnectTimeout) else "reply"
        return ModelTimeout(
            f"Ollama at {host} timed out ({kind})",
            fix="the model may be loading or stuck; try again, or raise read_timeout in config",
        )
    if isinstance(exc, httpx.ConnectError | ConnectionError):
        return ModelUnreachable(
            f"Ollama is not reachable at {host}",
            fix="start it with `ollama serve`, or give sadie its address (OLLAMA_HOST, or"
            " ollama_host in config.toml)",
        )
    if isinstance(exc, httpx.HTTPError):
        return ModelStreamError(f"the connection to Ollama broke mid-reply: {in_words(exc)}")
    if isinstance(exc, json.JSONDecodeError):  # the client reads each line as JSON
        return not_a_reply(host, exc.doc)
    return ModelError(f"unexpected model failure: {in_words(exc)}")


class OllamaReasoner:
    offline = False

    def __init__(
        self,
        host: str,
        model: str,
        *,
        connect_timeout: float = 3.0,
        read_timeout: float = 120.0,
        first_token_timeout: float | None = None,
        reply_tokens: int | None = None,
        rates: Rates | None = None,
        think: str = "auto",
        keep_alive: str | None = None,
        num_ctx: int = 0,
    ) -> None:
        self.host = host
        self.model = model
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout  # the stall between two pieces
        self.first_token_timeout = max(first_token_timeout or read_timeout, read_timeout)
        self.reply_tokens = reply_tokens
        self.rates = rates if rates is not None else Rates()
        self.think = think  # auto (the model's default) | on | off
        self.keep_alive = keep_alive  # how long Ollama keeps the model loaded after a reply
        self.num_ctx = num_ctx  # the smallest context to ask for (config ``num_ctx``)
        self.last_eval_count = 0
        self.last_prompt_count = 0  # prompt tokens the server read for the last reply
        self.last_eval_seconds = 0.0
        self.last_done_reason = ""

    def _options(self, briefing: Briefing, **extra: float) -> dict[str, float]:
        # The same num_ctx for every request of this model (a different one makes Ollama
        # reload it): the largest asked for so far, grown only when a briefing needs more.
        num_ctx = self.rates.context(self.model, max(self.num_ctx, briefing.num_ctx()))
        options: dict[str, float] = {"num_ctx": num_ctx, "temperature": briefing.temperature}
        if self.reply_tokens:
            options["num_predict"] = self.reply_tokens
        options.update(extra)
        return options

    def _request(self) -> ChatExtras:
        """What every chat request carries besides the messages: ``think`` unless left to the
        model (a qwen3 asked not to think answers in seconds, not minutes), ``keep_alive``."""
        extra: ChatExtras = {}
        if self.think in ("on", "off"):
            extra["think"] = self.think == "on"
        if self.keep_alive:
            extra["keep_alive"] = self.keep_alive
        return extra

    def _done(self, part: ollama.ChatResponse, *, structured: bool = False) -> None:
        """The done line's counters: kept for the turn, folded into the model's rates."""
        self.last_eval_count = int(part.eval_count or 0)
        self.last_prompt_count = int(getattr(part, "prompt_eval_count", 0) or 0)
        self.last_eval_seconds = float(part.eval_duration or 0) / 1e9
        self.last_done_reason = str(part.done_reason or "")
        self.rates.record(
            self.model,
            prompt_tokens=int(getattr(part, "prompt_eval_count", 0) or 0),
            prompt_seconds=float(getattr(part, "prompt_eval_duration", 0) or 0) / 1e9,
            eval_tokens=self.last_eval_count,
            eval_seconds=self.last_eval_seconds,
            structured=structured,
        )

    async def stream(
        self,
        briefing: Briefing,
        query: str = "",
        messages: list[dict[str, str]] | None = None,
        *,
        sent: Callable[[], None] | None = None,
    ) -> AsyncIterator[Piece]:
        """The reply as pieces. The wait for the first piece may take ``first_token_timeout``
        (a long briefing on a CPU); after that, a stall longer than ``read_timeout`` fails."""
        # The transport allows the longer wait; the stall between pieces is enforced here.
        client = _client(self.host, self.connect_timeout, self.first_token_timeout, sent)
        self.last_eval_count, self.last_eval_seconds, self.last_done_reason = 0, 0.0, ""
        try:
            response = await client.chat(
                model=self.model,
                messages=messages or briefing.messages,
                stream=True,
                options=self._options(briefing),
                **self._request(),
            )
            parts = response.__aiter__()
            first, ended = True, False
            while True:
                try:
                    if first:
                        part = await parts.__anext__()
                    else:
                        part = await asyncio.wait_for(parts.__anext__(), self.read_timeout)
                except StopAsyncIteration:
                    break
                except TimeoutError as exc:
                    raise httpx.ReadTimeout("stalled between pieces") from exc
                first = False
                message = part.message
                if message.thinking:
                    yield Piece("thinking", message.thinking)
                if message.content:
                    yield Piece("content", message.content)
                if part.done:
                    ended = True
                    self._done(part)
            if not ended:
                raise cut_short(self.host, "done line")
        except (Exception, ConnectionError) as exc:  # translated, never swallowed
            if isinstance(exc, ModelError):
                raise
            raise translate(exc, self.host, self.model) from exc
        finally:
            await _close(client)

    async def structured(
        self,
        briefing: Briefing,
        messages: list[dict[str, str]],
        schema: JSONObject,
        *,
        budget: Budget,
        max_tokens: int = 256,
    ) -> str:
        """One reply constrained to ``schema`` (Ollama's structured outputs), streamed: the
        first piece may take ``budget.first`` (reading the prompt), each next one
        ``budget.stall``; all of it at most ``budget.cap``. The JSON text, thinking left out."""
        client = _client(self.host, self.connect_timeout, budget.cap)
        parts: list[str] = []
        deadline = asyncio.get_running_loop().time() + budget.cap

        async def read() -> None:
            request = self._request()
            if "think" in request:
                request["think"] = False  # the JSON needs no reasoning, whatever the chat's
            response = await client.chat(
                model=self.model,
                messages=messages,
                stream=True,
                format=schema,
                options=self._options(briefing, temperature=0.0, num_predict=max_tokens),
                **request,
            )
            async for part in within(response.__aiter__(), budget, deadline, lambda: bool(parts)):
                if part.message.content:
                    parts.append(part.message.content)
                if part.done:
                    self._done(part, structured=True)

        try:
            await read()
        except (Exception, ConnectionError) as exc:
            if isinstance(exc, ModelError):
                raise
            raise translate(exc, self.host, self.model) from exc
        finally:
            await _close(client)
        return "".join(parts)

    async def complete(self, briefing: Briefing) -> str:
        """The whole reply at once (ask's stages); thinking is dropped by the caller's filter."""
        parts: list[str] = []
        async for piece in self.stream(briefing):
            if piece.kind == "content":
                parts.append(piece.text)
        return "".join(parts)


async def model_status(host: str, model: str, timeout: float = 1.5) -> tuple[bool, str, str | None]:
    """(online, detail, fix) — whether the model can answer right now."""
    try:
        async with httpx.AsyncClient(base_url=host, timeout=timeout, verify=_tls()) as client:
            resp = await client.post("/api/show", json={"model": model})
    except httpx.HTTPError as exc:
        err = translate(exc, host, model)
        return False, err.message, err.fix
    if resp.status_code == 404:
        return False, f"the model {model} is not pulled", f"run `ollama pull {model}`"
    if resp.status_code >= 400:
        return False, f"Ollama answered {resp.status_code}", None
    return True, f"{model} at {host}", None


@dataclass(frozen=True)
class ModelInfo:
    """One pulled model, as ``/api/tags`` describes it."""

    name: str
    size: int = 0  # bytes
    family: str = ""
    parameter_size: str = ""
    quantization: str = ""


async def list_models(host: str, timeout: float = 3.0) -> list[ModelInfo]:
    """The models pulled on the server at ``host``, by name; a ``ModelError`` if it does not
    answer."""
    client = _client(host, timeout, timeout)
    try:
        listed = await client.list()
    except (Exception, ConnectionError) as exc:
        raise translate(exc, host, "") from exc
    finally:
        await _close(client)
    found = []
    for m in listed.models:
        details = m.details
        found.append(
            ModelInfo(
                name=str(m.model or ""),
                size=int(m.size or 0),
                family=str(getattr(details, "family", "") or ""),
                parameter_size=str(getattr(details, "parameter_size", "") or ""),
                quantization=str(getattr(details, "quantization_level", "") or ""),
            )
        )
    return sorted((m for m in found if m.name), key=lambda m: m.name)
