"""Which model server answers, from the settings: the reasoner for a turn, its status and the
models it offers, dispatched on ``Settings.reasoner`` (``auto`` and ``ollama`` reach Ollama,
``openai`` an OpenAI-compatible endpoint, ``offline`` nothing).

Plain functions, so that the companion (and a bench, or a test building a ``Session`` with
``reasoner=``) makes reasoners the same way. ``auto`` still means Ollama when it answers, else
offline: the fallback itself is the companion's, which has the status cache and the notice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .offline import OfflineReasoner
from .ollama import ModelInfo, OllamaReasoner
from .ollama import list_models as ollama_models
from .ollama import model_status as ollama_status
from .openai import OpenAIReasoner
from .openai import list_models as openai_models
from .openai import model_status as openai_status
from .rates import Rates

if TYPE_CHECKING:
    from ...config import Settings
    from .base import Reasoner

__all__ = ["backend", "endpoint", "list_models", "make_reasoner", "model_status"]


def backend(settings: Settings) -> str:
    """The server kind the settings point at: ``ollama``, ``openai`` or ``offline``."""
    if settings.reasoner in ("openai", "offline"):
        return settings.reasoner
    return "ollama"


def endpoint(settings: Settings) -> str:
    """The URL of the model server the settings point at (for a status line or doctor)."""
    return settings.openai_url if backend(settings) == "openai" else settings.ollama_host


def make_reasoner(
    settings: Settings, model: str | None = None, rates: Rates | None = None
) -> Reasoner:
    """The reasoner for ``model`` (default: the configured one), measured into ``rates`` (the
    companion's, kept beside the memory). ``offline`` gives the extractive reasoner; ``auto``
    gives Ollama's, which the caller replaces with offline when ``model_status`` says so."""
    s = settings
    name = model or s.model
    kind = backend(s)
    if kind == "offline":
        return OfflineReasoner()
    if kind == "openai":
        return OpenAIReasoner(
            s.openai_url,
            name,
            api_key=s.openai_key(),
            key_env=s.openai_api_key_env,
            connect_timeout=s.connect_timeout,
            read_timeout=s.read_timeout,
            first_token_timeout=s.first_token_timeout,
            reply_tokens=s.reply_tokens,
            rates=rates,
        )
    return OllamaReasoner(
        s.ollama_host,
        name,
        connect_timeout=s.connect_timeout,
        read_timeout=s.read_timeout,
        first_token_timeout=s.first_token_timeout,
        reply_tokens=s.reply_tokens,
        rates=rates,
        think=s.think,
        keep_alive=s.keep_alive,
        num_ctx=s.num_ctx,
    )


async def model_status(
    settings: Settings, model: str | None = None, timeout: float = 1.5
) -> tuple[bool, str, str | None]:
    """(online, detail, fix) — whether ``model`` (default: the configured one) can answer now
    on the configured server."""
    name = model or settings.model
    kind = backend(settings)
    if kind == "offline":
        return False, "offline by choice", None
    if kind == "openai":
        return await openai_status(
            settings.openai_url,
            name,
            settings.openai_key(),
            timeout,
            key_env=settings.openai_api_key_env,
        )
    return await ollama_status(settings.ollama_host, name, timeout)


async def list_models(settings: Settings) -> list[ModelInfo]:
    """The models the configured server offers, for a picker (none when offline); a
    ``ModelError`` when it does not answer."""
    kind = backend(settings)
    if kind == "offline":
        return []
    if kind == "openai":
        return await openai_models(
            settings.openai_url,
            settings.openai_key(),
            settings.connect_timeout,
            key_env=settings.openai_api_key_env,
        )
    return await ollama_models(settings.ollama_host, settings.connect_timeout)
