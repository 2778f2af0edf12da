"""One declaration per kind of model server: Ollama, an OpenAI-compatible endpoint, offline.

Each ``ServerKind`` says where its address is set (the config.toml key and the environment
variable), whether there is a server at all (``server``: an address a person may set, models to
list, a status to ask), and how to make its reasoner, ask its status and list its models from
the settings. ``choose`` dispatches on the declaration instead of testing the kind's name, so a
new kind is one declaration here and its line in ``KINDS``.

Offline has no server; its address is Ollama's (``auto`` falls back to offline from there, and
the status line and doctor still name that address).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .offline import OfflineReasoner
from .ollama import ModelInfo, OllamaReasoner
from .ollama import list_models as ollama_models
from .ollama import model_status as ollama_status
from .openai import OpenAIReasoner
from .openai import list_models as openai_models
from .openai import model_status as openai_status

if TYPE_CHECKING:
    from ...config import Settings
    from .base import Reasoner
    from .rates import Rates

#: (online, detail, fix): whether a model answers now, in a line, and what to do if not.
Status = tuple[bool, str, str | None]


@dataclass(frozen=True)
class ServerKind:
    """A kind of model server, declared once: its name (``Settings.reasoner``'s value), where
    its address is set and read, its capabilities, and its three operations."""

    name: str
    setting: str  # the config.toml key holding the address: ollama_host | openai_base_url
    variable: str  # the environment variable that overrides it: OLLAMA_HOST | OPENAI_BASE_URL
    server: bool  # a server answers: an address to set, models to list, a status to ask
    address: Callable[[Settings], str]
    normalise: Callable[[str], str]  # an address as typed, checked and made canonical
    reasoner: Callable[[Settings, str, Rates | None], Reasoner]
    status: Callable[[Settings, str, float], Awaitable[Status]]
    models: Callable[[Settings], Awaitable[list[ModelInfo]]]


def _host(address: str) -> str:
    # lazy: config sits a floor above the engine (it imports engine.errors)
    from ...config import normalise_host

    return normalise_host(address)


def _base_url(address: str) -> str:
    # lazy: config sits a floor above the engine (it imports engine.errors)
    from ...config import normalise_base_url

    return normalise_base_url(address)


def _ollama(s: Settings, model: str, rates: Rates | None) -> Reasoner:
    return OllamaReasoner(
        s.ollama_host,
        model,
        connect_timeout=s.connect_timeout,
        read_timeout=s.read_timeout,
        first_token_timeout=s.first_token_timeout,
        reply_tokens=s.reply_tokens,
        rates=rates,
        think=s.think,
        keep_alive=s.keep_alive,
        num_ctx=s.num_ctx,
    )


def _openai(s: Settings, model: str, rates: Rates | None) -> Reasoner:
    return OpenAIReasoner(
        s.openai_url,
        model,
        api_key=s.openai_key(),
        key_env=s.openai_api_key_env,
        connect_timeout=s.connect_timeout,
        read_timeout=s.read_timeout,
        first_token_timeout=s.first_token_timeout,
        reply_tokens=s.reply_tokens,
        rates=rates,
    )


def _offline(s: Settings, model: str, rates: Rates | None) -> Reasoner:
    return OfflineReasoner()


async def _openai_status(s: Settings, model: str, timeout: float) -> Status:
    return await openai_status(
        s.openai_url, model, s.openai_key(), timeout, key_env=s.openai_api_key_env
    )


async def _offline_status(s: Settings, model: str, timeout: float) -> Status:
    return False, "offline by choice", None


async def _openai_models(s: Settings) -> list[ModelInfo]:
    return await openai_models(
        s.openai_url, s.openai_key(), s.connect_timeout, key_env=s.openai_api_key_env
    )


async def _no_models(s: Settings) -> list[ModelInfo]:
    return []


OLLAMA = ServerKind(
    name="ollama",
    setting="ollama_host",
    variable="OLLAMA_HOST",
    server=True,
    address=lambda s: s.ollama_host,
    normalise=_host,
    reasoner=_ollama,
    status=lambda s, model, timeout: ollama_status(s.ollama_host, model, timeout),
    models=lambda s: ollama_models(s.ollama_host, s.connect_timeout),
)
OPENAI = ServerKind(
    name="openai",
    setting="openai_base_url",
    variable="OPENAI_BASE_URL",
    server=True,
    address=lambda s: s.openai_url,
    normalise=_base_url,
    reasoner=_openai,
    status=_openai_status,
    models=_openai_models,
)
OFFLINE = ServerKind(
    name="offline",
    setting=OLLAMA.setting,
    variable=OLLAMA.variable,
    server=False,
    address=OLLAMA.address,
    normalise=OLLAMA.normalise,
    reasoner=_offline,
    status=_offline_status,
    models=_no_models,
)

#: Every kind by name. ``auto`` is not a kind: it is Ollama, with offline as the fallback the
#: companion chooses when Ollama does not answer.
KINDS = {kind.name: kind for kind in (OLLAMA, OPENAI, OFFLINE)}


def kind_of(settings: Settings) -> ServerKind:
    """The kind of server the settings point at (``auto`` and ``ollama``: Ollama)."""
    return KINDS.get(settings.reasoner, OLLAMA)
