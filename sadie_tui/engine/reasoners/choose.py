"""Which model server answers, from the settings: the reasoner for a turn, its status and the
models it offers, by the declaration of the kind ``Settings.reasoner`` names (``kinds``:
``auto`` and ``ollama`` reach Ollama, ``openai`` an OpenAI-compatible endpoint, ``offline``
nothing).

Plain functions, so that the companion (and a bench, or a test building a ``Session`` with
``reasoner=``) makes reasoners the same way. ``auto`` still means Ollama when it answers, else
offline: the fallback itself is the companion's, which has the status cache and the notice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import SadieError, UsageError
from .kinds import kind_of
from .ollama import ModelInfo

if TYPE_CHECKING:
    from ...config import Settings
    from .base import Reasoner
    from .rates import Rates

__all__ = [
    "ServerSource",
    "backend",
    "endpoint",
    "list_models",
    "make_reasoner",
    "model_status",
    "server_source",
    "use_server",
]

# The origin of an address the person set in a running app (``use_server``).
SET_IN_APP = "set in the app"


def backend(settings: Settings) -> str:
    """The server kind the settings point at: ``ollama``, ``openai`` or ``offline``."""
    return kind_of(settings).name


def endpoint(settings: Settings) -> str:
    """The URL of the model server the settings point at (for a status line or doctor)."""
    return kind_of(settings).address(settings)


@dataclass(frozen=True)
class ServerSource:
    """The model server's address in use, and which source won: ``origin`` is ``default``,
    ``config.toml``, the environment variable's name, or ``set in the app``. ``conflict``
    says when two sources are set and differ (empty when they agree)."""

    kind: str  # ollama | openai | offline
    address: str
    setting: str  # the config.toml key: ollama_host | openai_base_url
    variable: str  # the environment variable: OLLAMA_HOST | OPENAI_BASE_URL
    origin: str
    conflict: str = ""

    def describe(self) -> str:
        """``http://127.0.0.1:11434 (from OLLAMA_HOST in the environment)``: the address and
        where it came from."""
        where = {
            "default": "the default",
            "config.toml": "from config.toml",
            self.variable: f"from {self.variable} in the environment",
        }.get(self.origin, self.origin)
        return f"{self.address} ({where})"


def server_source(settings: Settings) -> ServerSource:
    """The address of the server the settings point at, where it came from, and whether
    config.toml and the environment disagree about it."""
    kind = kind_of(settings)
    setting, variable = kind.setting, kind.variable
    address = kind.address(settings)
    origin = settings.origin(setting)
    conflict = ""
    in_file = settings.file_values.get(setting)
    if origin == variable and in_file and in_file != address:
        conflict = f"config.toml says {in_file}, and {variable} in the environment wins over it"
    elif origin == SET_IN_APP:
        raw = os.environ.get(variable, "").strip()
        try:
            env = kind.normalise(raw) if raw else ""
        except SadieError:
            env = raw
        if env and env != address:
            conflict = (
                f"{variable}={env} in the environment wins again at the next launch"
                f" (unset it to keep {address})"
            )
    return ServerSource(kind.name, address, setting, variable, origin, conflict)


def use_server(settings: Settings, address: str) -> ServerSource:
    """Point the settings at the model server at ``address`` from now on (this process),
    whatever the environment or config.toml said; a malformed address is a ``ConfigError``
    and changes nothing. Saving it for the next launch is the caller's (``config``)."""
    kind = kind_of(settings)
    if not kind.server:
        raise UsageError(
            "sadie answers offline by choice: there is no model server to set",
            fix='set reasoner = "auto" in config.toml',
        )
    setattr(settings, kind.setting, kind.normalise(address))
    settings.origins[kind.setting] = SET_IN_APP
    return server_source(settings)


def make_reasoner(
    settings: Settings, model: str | None = None, rates: Rates | None = None
) -> Reasoner:
    """The reasoner for ``model`` (default: the configured one), measured into ``rates`` (the
    companion's, kept beside the memory). ``offline`` gives the extractive reasoner; ``auto``
    gives Ollama's, which the caller replaces with offline when ``model_status`` says so."""
    return kind_of(settings).reasoner(settings, model or settings.model, rates)


async def model_status(
    settings: Settings, model: str | None = None, timeout: float = 1.5
) -> tuple[bool, str, str | None]:
    """(online, detail, fix) — whether ``model`` (default: the configured one) can answer now
    on the configured server."""
    return await kind_of(settings).status(settings, model or settings.model, timeout)


async def list_models(settings: Settings) -> list[ModelInfo]:
    """The models the configured server offers, for a picker (none when offline); a
    ``ModelError`` when it does not answer."""
    return await kind_of(settings).models(settings)
