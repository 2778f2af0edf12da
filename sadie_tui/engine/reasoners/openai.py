"""The OpenAI-compatible reasoner (llama.cpp's llama-server, LM Studio, vLLM, Ollama's /v1, a
hosted endpoint), through the official client's AsyncOpenAI.

The same contract as ``OllamaReasoner``: pieces (``<think>`` in the content is left to the
stream filter; a ``reasoning_content`` or ``reasoning`` field becomes thinking pieces), the
citation pass's ``structured``, budgets and rates, one ``ModelError`` with a fix for every
failure. Servers differ in what they accept, so two things are probed on first use and
remembered per (base URL, model), in the process and beside the memory (``Rates.remember``):
``response_format`` for the pass (a JSON schema; else llama-cpp-python's ``json_object`` with
a ``schema``; else the request's own plain-JSON instruction, the answer cut out of whatever
prose surrounds it and policed as usual), and ``stream_options.include_usage`` (the token
counts; without them, pieces are counted and the time measured here).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import httpx

from ..errors import ModelError
from .base import Piece, within
from .bodies import cut_short, not_a_reply
from .ollama import ModelInfo, _tls, _tracing
from .openai_errors import REJECTED, USAGE_REJECTED, refuses, translate
from .rates import CHARS_PER_TOKEN, Budget, Rates

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionChunk
    from openai.types.chat.chat_completion_chunk import ChoiceDelta
    from openai.types.completion_usage import CompletionUsage

    from ..jsonvalue import JSON, JSONObject
    from ..prompt import Briefing

# The pass's response formats, best first: a server that refuses one is asked the next.
MODES = ("json_schema", "json_object", "plain")
# A fallback is trusted this long; then the better format is tried again (servers upgrade).
RECHECK = 7 * 86400.0
# What the client sends when no key is set: local servers want none, and the client wants one.
NO_KEY = "sadie-no-key"
_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)


def _client(
    base_url: str, key: str | None, connect: float, read: float, sent: Callable[[], None]
) -> openai.AsyncOpenAI:
    # lazy: openai loads only when _client runs, off the start-up path
    import openai

    timeout = httpx.Timeout(connect=connect, read=read, write=10.0, pool=connect)
    http = httpx.AsyncClient(
        timeout=timeout, verify=_tls(), event_hooks={"request": [_tracing(sent)]}
    )
    return openai.AsyncOpenAI(
        base_url=base_url, api_key=key or NO_KEY, timeout=timeout, max_retries=0, http_client=http
    )


async def _close(client: openai.AsyncOpenAI) -> None:
    try:
        await client.close()
    except Exception:  # noqa: BLE001 - closing a broken transport must not mask the error
        pass


async def _end(
    chunks: AsyncGenerator[ChatCompletionChunk, None], client: openai.AsyncOpenAI
) -> None:
    """Close a request's chunk generator (a stopped reply leaves it mid-read), then its client."""
    try:
        await chunks.aclose()
    except Exception:  # noqa: BLE001 - the reply's own failure is the one to report
        pass
    await _close(client)


def _reasoning(delta: ChoiceDelta) -> str:
    for name in ("reasoning_content", "reasoning"):
        value = getattr(delta, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


def _number(value: JSON) -> float:
    """A remembered number (a JSON value), 0 when it is none."""
    return float(value) if isinstance(value, (int, float)) else 0.0


def json_of(text: str) -> str:
    """The first JSON object in a reply written without a grammar: past any reasoning, a code
    fence or a sentence before it ("Here are the citations: {...}"). The text unchanged when
    none parses, so the caller says it is not JSON."""
    text = _THINK.sub("", text)
    decoder = json.JSONDecoder()
    for m in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False)
    return text


class _Reading:
    """One request's clock and counters: the pieces, when the request was sent, the first and
    last piece, and the usage or timings the server reported."""

    def __init__(self, prompt_chars: int) -> None:
        self.prompt_chars = prompt_chars
        self.sent_at = self.first_at = 0.0
        self.pieces = 0
        self.usage: CompletionUsage | None = None
        self.timings: dict[str, float] = {}
        self.finish = ""

    def sent(self) -> None:
        self.sent_at = self.sent_at or time.perf_counter()

    def piece(self) -> None:
        self.pieces += 1
        self.first_at = self.first_at or time.perf_counter()

    def chunk(self, chunk: ChatCompletionChunk) -> None:
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage
        timings = (getattr(chunk, "model_extra", None) or {}).get("timings")
        if isinstance(timings, dict):
            # llama.cpp's own counters, exact where they are sent
            self.timings = {
                str(k): float(v)
                for k, v in timings.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)
            }
        for choice in chunk.choices[:1]:
            if choice.finish_reason:
                self.finish = str(choice.finish_reason)

    def counters(self) -> tuple[int, float, int, float]:
        """(prompt tokens, prompt seconds, eval tokens, eval seconds)."""
        t = self.timings
        if t.get("predicted_n") and t.get("predicted_ms"):
            return (
                int(t.get("prompt_n") or 0),
                float(t.get("prompt_ms") or 0) / 1000,
                int(t["predicted_n"]),
                float(t["predicted_ms"]) / 1000,
            )
        end = time.perf_counter()
        first = self.first_at or end
        prompt_seconds = max(0.0, first - (self.sent_at or first))
        prompt = round(self.prompt_chars / CHARS_PER_TOKEN)
        written = self.pieces
        if self.usage is not None:
            details = getattr(self.usage, "prompt_tokens_details", None)
            cached = int(getattr(details, "cached_tokens", 0) or 0)
            prompt = max(0, int(self.usage.prompt_tokens or 0) - cached)
            written = int(self.usage.completion_tokens or 0) or written
        return prompt, prompt_seconds, written, max(0.0, end - first)


class OpenAIReasoner:
    """A model behind an OpenAI-compatible chat-completions endpoint at ``base_url``."""

    offline = False

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        key_env: str = "OPENAI_API_KEY",
        connect_timeout: float = 3.0,
        read_timeout: float = 120.0,
        first_token_timeout: float | None = None,
        reply_tokens: int | None = None,
        rates: Rates | None = None,
    ) -> None:
        self.host = self.base_url = base_url
        self.model = model
        self.api_key = api_key
        self.key_env = key_env  # named in the fix when the key is refused
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout  # the stall between two pieces
        self.first_token_timeout = max(first_token_timeout or read_timeout, read_timeout)
        self.reply_tokens = reply_tokens
        self.rates = rates if rates is not None else Rates()
        self.last_eval_count = 0
        self.last_eval_seconds = 0.0
        self.last_done_reason = ""

    # -- what this server accepts ----------------------------------------------------------
    @property
    def _key(self) -> str:
        return f"{self.base_url} {self.model}"

    def _mode(self) -> str:
        """The pass's response format to try first: the remembered one, unless a fallback
        was found long enough ago to be worth asking again."""
        known = self.rates.feature(self._key)
        mode = known.get("structured")
        if mode not in MODES or mode == MODES[0]:
            return MODES[0]
        fresh = time.time() - _number(known.get("checked")) < RECHECK
        return str(mode) if fresh else MODES[0]

    def _wants_usage(self) -> bool:
        known = self.rates.feature(self._key)
        if known.get("usage") is False:
            return time.time() - _number(known.get("checked")) >= RECHECK
        return True

    def _remember(self, **values: JSON) -> None:
        self.rates.remember(self._key, **values, checked=round(time.time()))

    # -- requests ----------------------------------------------------------------------------
    def _translate(self, exc: BaseException) -> ModelError:
        return translate(exc, self.base_url, self.model, self.key_env, keyed=bool(self.api_key))

    async def _chunks(
        self,
        client: openai.AsyncOpenAI,
        reading: _Reading,
        request: dict[str, Any],  # Any: as _request's
    ) -> AsyncGenerator[ChatCompletionChunk, None]:
        """The response's chunks; asks again without ``stream_options`` if the server refuses
        it (and remembers that)."""
        usage = self._wants_usage()
        if usage:
            request = {**request, "stream_options": {"include_usage": True}}
        try:
            stream = await client.chat.completions.create(**request)
        except Exception as exc:
            if not (usage and refuses(exc, USAGE_REJECTED)):
                raise
            self._remember(usage=False)
            request = {k: v for k, v in request.items() if k != "stream_options"}
            stream = await client.chat.completions.create(**request)
        kind = stream.response.headers.get("content-type", "")
        if "text/event-stream" not in kind:  # a page or an object where a stream was asked
            body = (await stream.response.aread())[:4000].decode("utf-8", "replace")
            raise not_a_reply(self.base_url, body, kind)
        async for chunk in stream:
            reading.chunk(chunk)
            yield chunk

    def _done(self, reading: _Reading, *, structured: bool = False) -> None:
        prompt, prompt_seconds, written, eval_seconds = reading.counters()
        self.last_eval_count, self.last_eval_seconds = written, eval_seconds
        self.last_done_reason = reading.finish
        self.rates.record(
            self.model,
            prompt_tokens=prompt,
            prompt_seconds=prompt_seconds,
            eval_tokens=written,
            eval_seconds=eval_seconds,
            structured=structured,
        )

    # Any: the request is handed whole to the client's overloaded create(**request)
    def _request(self, messages: list[dict[str, str]], **extra: float) -> dict[str, Any]:
        request: dict[str, Any] = {  # Any: (above)
            "model": self.model,
            "messages": messages,
            "stream": True,
            "temperature": 0.4,
        }
        if self.reply_tokens:
            request["max_tokens"] = self.reply_tokens
        request.update(extra)
        return request

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
        chosen = messages or briefing.messages
        reading = _Reading(sum(len(m["content"]) for m in chosen))

        def on_sent() -> None:
            reading.sent()
            if sent is not None:
                sent()

        client = _client(
            self.base_url, self.api_key, self.connect_timeout, self.first_token_timeout, on_sent
        )
        self.last_eval_count, self.last_eval_seconds, self.last_done_reason = 0, 0.0, ""
        chunks = self._chunks(
            client, reading, self._request(chosen, temperature=briefing.temperature)
        )
        try:
            first = True
            while True:
                try:
                    if first:
                        chunk = await chunks.__anext__()
                    else:
                        chunk = await asyncio.wait_for(chunks.__anext__(), self.read_timeout)
                except StopAsyncIteration:
                    break
                except TimeoutError as exc:
                    raise httpx.ReadTimeout("stalled between pieces") from exc
                first = False
                for choice in chunk.choices[:1]:
                    thinking = _reasoning(choice.delta)
                    if thinking:
                        reading.piece()
                        yield Piece("thinking", thinking)
                    if choice.delta.content:
                        reading.piece()
                        yield Piece("content", choice.delta.content)
            if not reading.finish:
                raise cut_short(self.base_url, "finish_reason")
            self._done(reading)
        except (Exception, ConnectionError) as exc:  # translated, never swallowed
            if isinstance(exc, ModelError):
                raise
            raise self._translate(exc) from exc
        finally:
            await _end(chunks, client)

    async def structured(
        self,
        briefing: Briefing,
        messages: list[dict[str, str]],
        schema: JSONObject,
        *,
        budget: Budget,
        max_tokens: int = 256,
    ) -> str:
        """One reply constrained to ``schema`` where the server can (``response_format``),
        streamed on ``budget`` as Ollama's is: the first piece may take ``budget.first``,
        each next one ``budget.stall``, all of it at most ``budget.cap``. The JSON text,
        reasoning left out."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + budget.cap
        start = MODES.index(self._mode())
        for mode in MODES[start:]:
            request = self._request(messages, temperature=0.0, max_tokens=max_tokens)
            if mode == "json_schema":
                request["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "citations", "schema": schema},
                }
            elif mode == "json_object":
                request["response_format"] = {"type": "json_object", "schema": schema}
            try:
                text = await self._structured(request, messages, budget, deadline)
            except ModelError:
                raise
            except (Exception, ConnectionError) as exc:
                if mode != "plain" and refuses(exc, REJECTED):
                    continue  # this server does not take that format: the next one
                raise self._translate(exc) from exc
            if mode != self.rates.feature(self._key).get("structured"):
                self._remember(structured=mode)
            return text if mode != "plain" else json_of(text)
        raise ModelError("the model server refused every response format")  # pragma: no cover

    async def _structured(
        self,
        request: dict[str, Any],  # Any: as _request's
        messages: list[dict[str, str]],
        budget: Budget,
        deadline: float,
    ) -> str:
        reading = _Reading(sum(len(m["content"]) for m in messages))
        client = _client(
            self.base_url, self.api_key, self.connect_timeout, budget.cap, reading.sent
        )
        parts: list[str] = []
        chunks = self._chunks(client, reading, request)
        try:
            async for chunk in within(chunks, budget, deadline, lambda: bool(parts)):
                for choice in chunk.choices[:1]:
                    if _reasoning(choice.delta):
                        reading.piece()
                    if choice.delta.content:
                        reading.piece()
                        parts.append(choice.delta.content)
            self._done(reading, structured="response_format" in request)
        finally:
            await _end(chunks, client)
        return "".join(parts)

    async def complete(self, briefing: Briefing) -> str:
        """The whole reply at once (ask's stages); thinking is dropped by the caller's filter."""
        parts: list[str] = []
        async for piece in self.stream(briefing):
            if piece.kind == "content":
                parts.append(piece.text)
        return "".join(parts)


async def list_models(
    base_url: str, api_key: str | None = None, timeout: float = 3.0, key_env: str = "OPENAI_API_KEY"
) -> list[ModelInfo]:
    """The models the server at ``base_url`` serves (``/v1/models``), by name; a
    ``ModelError`` if it does not answer."""
    client = _client(base_url, api_key, timeout, timeout, lambda: None)
    try:
        page = await client.models.list()
    except (Exception, ConnectionError) as exc:
        if getattr(exc, "status_code", None) == 404:
            raise ModelError(
                f"{base_url} does not list its models (404)",
                fix="check OPENAI_BASE_URL; it usually ends in /v1",
            ) from exc
        raise translate(exc, base_url, "", key_env, keyed=bool(api_key)) from exc
    finally:
        await _close(client)
    names = {str(m.id) for m in page.data if getattr(m, "id", None)}
    return [ModelInfo(name=name) for name in sorted(names)]


async def model_status(
    base_url: str,
    model: str,
    api_key: str | None = None,
    timeout: float = 1.5,
    key_env: str = "OPENAI_API_KEY",
) -> tuple[bool, str, str | None]:
    """(online, detail, fix) — whether the server answers and lists ``model``."""
    try:
        served = [m.name for m in await list_models(base_url, api_key, timeout, key_env)]
    except ModelError as err:
        return False, err.message, err.fix
    if model in served:
        return True, f"{model} at {base_url}", None
    listed = ", ".join(served[:6]) + (" …" if len(served) > 6 else "")
    return (
        False,
        f"the model {model} is not served at {base_url} ({'it serves ' + listed if served else 'it lists none'})",
        "set SADIE_MODEL, or `model` in config.toml, to one it serves",
    )
