"""The Ollama reasoner, through the official client's AsyncClient.

The client has no timeout by default (a stalled server hangs forever), so connect and read
timeouts are explicit; ``num_ctx`` is sized to the briefing (Ollama's default of 4096 drops
the oldest messages silently). Every failure becomes one ``ModelError`` with a fix.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx

from ..errors import ModelError, ModelMissing, ModelStreamError, ModelTimeout, ModelUnreachable
from .base import Piece

if TYPE_CHECKING:
    from ..prompt import Briefing


def _client(host: str, connect: float, read: float) -> Any:
    import ollama

    timeout = httpx.Timeout(connect=connect, read=read, write=10.0, pool=connect)
    return ollama.AsyncClient(host=host, timeout=timeout)


def translate(exc: BaseException, host: str, model: str) -> ModelError:
    """Map client and transport failures to one-line errors (by status code, not text)."""
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
            fix="start it with `ollama serve`, or set OLLAMA_HOST",
        )
    if isinstance(exc, httpx.HTTPError):
        return ModelStreamError(f"the connection to Ollama broke mid-reply ({type(exc).__name__})")
    return ModelError(f"unexpected model failure: {type(exc).__name__}: {exc}")


class OllamaReasoner:
    offline = False

    def __init__(
        self, host: str, model: str, *, connect_timeout: float = 3.0, read_timeout: float = 120.0
    ) -> None:
        self.host = host
        self.model = model
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.last_eval_count = 0
        self.last_eval_seconds = 0.0

    async def stream(self, briefing: Briefing, query: str = "") -> AsyncIterator[Piece]:
        client = _client(self.host, self.connect_timeout, self.read_timeout)
        try:
            response = await client.chat(
                model=self.model,
                messages=briefing.messages,
                stream=True,
                options={"num_ctx": briefing.num_ctx(), "temperature": 0.4},
            )
            async for part in response:
                message = part.message
                if message.thinking:
                    yield Piece("thinking", message.thinking)
                if message.content:
                    yield Piece("content", message.content)
                if part.done:
                    self.last_eval_count = int(part.eval_count or 0)
                    self.last_eval_seconds = float(part.eval_duration or 0) / 1e9
        except (Exception, ConnectionError) as exc:  # translated, never swallowed
            if isinstance(exc, ModelError):
                raise
            raise translate(exc, self.host, self.model) from exc
        finally:
            try:
                await client._client.aclose()
            except Exception:  # noqa: BLE001 - closing a broken transport must not mask the error
                pass

    async def complete(self, briefing: Briefing) -> str:
        """The whole reply at once (ask's stages); thinking is dropped by the caller's filter."""
        parts: list[str] = []
        async for piece in self.stream(briefing):
            if piece.kind == "content":
                parts.append(piece.text)
        return "".join(parts)


async def probe(host: str, model: str, timeout: float = 1.5) -> tuple[bool, str, str | None]:
    """(online, detail, fix) — whether the model can answer right now."""
    try:
        async with httpx.AsyncClient(base_url=host, timeout=timeout) as client:
            resp = await client.post("/api/show", json={"model": model})
    except httpx.HTTPError as exc:
        err = translate(exc, host, model)
        return False, err.message, err.fix
    if resp.status_code == 404:
        return False, f"the model {model} is not pulled", f"run `ollama pull {model}`"
    if resp.status_code >= 400:
        return False, f"Ollama answered {resp.status_code}", None
    return True, f"{model} at {host}", None
