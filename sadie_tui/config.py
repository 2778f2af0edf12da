"""Settings: ``config.toml`` in the config folder, then environment variables, resolved on call.

Environment wins over the file: ``SADIE_MODEL``, ``OLLAMA_HOST``, ``SADIE_HOME``.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .engine.errors import ConfigError
from .paths import config_dir

DEFAULT_MODEL = "qwen3:1.7b"
DEFAULT_HOST = "http://127.0.0.1:11434"


@dataclass
class Settings:
    model: str = DEFAULT_MODEL
    ollama_host: str = DEFAULT_HOST
    ask_persona: str = "analyst"
    chat_persona: str = "friend"
    theme: str = "sadie-dark"
    connect_timeout: float = 3.0
    read_timeout: float = 120.0  # the longest stall between two pieces of a reply
    first_token_timeout: float = 900.0  # reading a long briefing on a CPU takes minutes
    citation_pass_timeout: float = 30.0
    reply_tokens: int = 1024  # num_predict: a model that never stops is cut here
    reply_max_chars: int = 12000  # and a reply is cut past this many shown characters
    keymap: dict[str, str] = field(default_factory=dict)
    config_path: Path | None = None


def config_file() -> Path:
    return config_dir() / "config.toml"


def normalise_host(host: str) -> str:
    host = host.strip()
    if not host:
        return DEFAULT_HOST
    if "://" not in host:
        host = "http://" + host
    scheme, rest = host.split("://", 1)
    if ":" not in rest.split("/", 1)[0]:
        rest = rest.split("/", 1)[0] + ":11434"
    return f"{scheme}://{rest.rstrip('/')}"


def load_settings(path: Path | None = None) -> Settings:
    path = path or config_file()
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            raise ConfigError(f"{path}: {exc}") from exc
    settings = Settings(config_path=path)
    for key in ("model", "ollama_host", "ask_persona", "chat_persona", "theme"):
        if isinstance(data.get(key), str):
            setattr(settings, key, data[key])
    for key in ("connect_timeout", "read_timeout", "first_token_timeout", "citation_pass_timeout"):
        value = data.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            setattr(settings, key, float(value))
    for key in ("reply_tokens", "reply_max_chars"):
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            setattr(settings, key, value)
    keys = data.get("keys") or data.get("keymap") or {}
    if isinstance(keys, dict):
        settings.keymap = {str(k): str(v) for k, v in keys.items()}
    if os.environ.get("SADIE_MODEL"):
        settings.model = os.environ["SADIE_MODEL"]
    if os.environ.get("OLLAMA_HOST"):
        settings.ollama_host = os.environ["OLLAMA_HOST"]
    settings.ollama_host = normalise_host(settings.ollama_host)
    return settings


def save_setting(key: str, value: str, path: Path | None = None) -> None:
    """Remember one top-level string setting (the TUI's theme and persona choices)."""
    path = path or config_file()
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    new = f"{key} = {value!r}".replace("'", '"')
    for i, line in enumerate(lines):
        if line.split("=", 1)[0].strip() == key and not line.startswith("["):
            lines[i] = new
            break
    else:
        # Top-level keys must come before any [table].
        at = next((i for i, line in enumerate(lines) if line.startswith("[")), len(lines))
        lines.insert(at, new)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
