"""Settings: ``config.toml`` in the config folder, then environment variables, parsed and
validated here and nowhere else.

Environment wins over the file: ``SADIE_MODEL``, ``OLLAMA_HOST``, ``SADIE_REASONER``,
``OPENAI_BASE_URL`` (``SADIE_HOME`` and ``SADIE_CONFIG`` are read by ``paths``); each setting
remembers where it came from (``Settings.origin``), so a screen can say which source won. A value of the
wrong type or out of range is a ``ConfigError`` naming the file and the field, never silently
ignored. An API key is never kept in the file: it is read from the environment when a reasoner
is made (``Settings.openai_key``), and a key written into the file is refused.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TypeVar

from .engine.errors import ConfigError
from .paths import config_dir

DEFAULT_MODEL = "qwen3:1.7b"
DEFAULT_HOST = "http://127.0.0.1:11434"
REASONERS = ("auto", "ollama", "openai", "offline")
# Where the openai client sends requests when no base URL is given (its own default).
OPENAI_URL = "https://api.openai.com/v1"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
THINK = ("auto", "on", "off")
ENCRYPT_NEW = ("ask", "yes", "no")


@dataclass
class Settings:
    model: str = DEFAULT_MODEL
    ollama_host: str = DEFAULT_HOST
    ask_persona: str = "analyst"
    chat_persona: str = "friend"
    theme: str = "sadie-dark"
    # auto (Ollama when it answers, else offline) | ollama | openai (any OpenAI-compatible
    # server: llama.cpp, LM Studio, vLLM, a hosted endpoint) | offline
    reasoner: str = "auto"
    openai_base_url: str = ""  # "" is the openai client's own default (OPENAI_URL)
    openai_api_key_env: str = OPENAI_KEY_ENV  # the variable holding the key (never the file)
    connect_timeout: float = 3.0
    read_timeout: float = 120.0  # the longest stall between two pieces of a reply
    first_token_timeout: float = 900.0  # reading a long briefing on a CPU takes minutes
    # The cap on the citation pass: its budget comes from the model's measured speed, and a
    # pass that is still writing is not cut before this.
    citation_pass_timeout: float = 300.0
    think: str = "auto"  # auto (the model's default) | on | off: Ollama's think option
    keep_alive: str = "30m"  # how long Ollama keeps the model loaded after a reply
    num_ctx: int = (
        8192  # the smallest context asked for; grown (and kept) when a briefing needs more
    )
    reply_tokens: int = 1024  # num_predict: a model that never stops is cut here
    # How much of the retrieved memory the model reads (issue 33, measured with a 1.5B model
    # by bench/real_answers.py): this many of the persona's chunks, the ones that answer,
    # each cut to this many characters around what answers; 0 passages: every chunk, whole.
    ask_passages: int = 4
    chat_passages: int = 4
    passage_chars: int = 700
    reply_max_chars: int = 48000  # and a reply is cut past this many shown characters
    open_last: bool = True  # the app reopens the conversation it was showing when it closed
    # A new memory: "ask" (the app asks on its first run), "yes" (born encrypted: a passphrase
    # is asked, or read from SADIE_PASSPHRASE) or "no" (plain; `sadie encrypt` converts later).
    encrypt_new: str = "ask"
    # Folders (or files) of notes the app keeps current while it holds the memory, `~` expanded.
    notes: list[Path] = field(default_factory=list)
    mcp_write: bool = False  # `sadie mcp` may add notes (add_note); read-only otherwise
    # The app may run `sadie reflect` in the background while nobody types (off by default).
    reflect_when_idle: bool = False
    reflect_idle_minutes: float = 10.0  # ... once nothing has been typed for this long
    keymap: dict[str, str] = field(default_factory=dict)
    config_path: Path | None = None
    # Where each setting that is not a default came from: "config.toml", the environment
    # variable's name, or "set in the app" (``origin``); and what config.toml says of each
    # one the environment overrode (``file_value``), so a screen can say which one wins.
    origins: dict[str, str] = field(default_factory=dict)
    file_values: dict[str, object] = field(default_factory=dict)

    def origin(self, key: str) -> str:
        """Where ``key``'s value came from: ``default``, ``config.toml``, an environment
        variable's name, or ``set in the app``."""
        return self.origins.get(key, "default")

    @property
    def openai_url(self) -> str:
        """The OpenAI-compatible endpoint: ``openai_base_url``, else the client's default."""
        return self.openai_base_url or OPENAI_URL

    def openai_key(self) -> str | None:
        """The API key, read now from the variable ``openai_api_key_env`` names (None when it
        is unset or empty: a local server needs none)."""
        return os.environ.get(self.openai_api_key_env, "").strip() or None


def config_file() -> Path:
    return config_dir() / "config.toml"


_PORT = re.compile(r"^(?P<host>\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(?::(?P<port>\d{1,5}))?$")


def normalise_host(host: str) -> str:
    """``OLLAMA_HOST`` as a URL: a scheme (http) and a port (11434) are added when missing.
    A malformed one is a ``ConfigError``."""
    host = host.strip()
    if not host:
        return DEFAULT_HOST
    if "://" not in host:
        host = "http://" + host
    scheme, rest = host.split("://", 1)
    netloc, _, path = rest.partition("/")
    m = _PORT.match(netloc)
    port = m.group("port") if m else None
    if scheme not in ("http", "https") or m is None or (port and not 0 < int(port) < 65536):
        raise ConfigError(
            f"{host!r} is not a host[:port] URL",
            fix="for example http://127.0.0.1:11434",
        )
    netloc = netloc if port else f"{m.group('host')}:11434"
    return f"{scheme}://{netloc}" + (f"/{path.rstrip('/')}" if path.strip("/") else "")


def _text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty string")
    return value.strip()


def _seconds(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number of seconds")
    if not math.isfinite(value) or value <= 0 or value > 86400:
        raise ValueError("must be more than 0 and at most 86400 seconds")
    return float(value)


def _minutes(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number of minutes")
    if not math.isfinite(value) or value <= 0 or value > 1440:
        raise ValueError("must be more than 0 and at most 1440 minutes")
    return float(value)


def _count(low: int, high: int) -> Callable[[object], int]:
    def check(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"must be a whole number from {low} to {high}")
        return value

    return check


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _reasoner(value: object) -> str:
    choice = _text(value).lower()
    if choice not in REASONERS:
        raise ValueError("must be one of " + ", ".join(REASONERS))
    return choice


def _think(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    choice = _text(value).lower()
    if choice not in THINK:
        raise ValueError("must be one of " + ", ".join(THINK))
    return choice


def _duration(value: object) -> str:
    """Ollama's keep_alive: a duration ("30m", "2h", "90s") or a number of seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{int(value)}s"
    text = _text(value)
    if not re.fullmatch(r"-?\d+(?:\.\d+)?[smh]?", text):
        raise ValueError('must be a duration such as "30m", "2h" or "90s"')
    return text


def _host(value: object) -> str:
    return normalise_host(_text(value))


def _paths(value: object) -> list[Path]:
    """A list of paths (``~`` expanded), once each; an empty list watches nothing."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError('must be a list of paths, such as ["~/vault"]')
    return list(dict.fromkeys(Path(v.strip()).expanduser() for v in value))


def normalise_base_url(url: str) -> str:
    """An OpenAI-compatible base URL, without a trailing slash; one with no path gets ``/v1``
    (where llama.cpp, LM Studio, vLLM and Ollama all serve the API). A malformed one is a
    ``ConfigError``."""
    url = url.strip().rstrip("/")
    scheme, sep, rest = url.partition("://")
    netloc, _, path = rest.partition("/")
    m = _PORT.match(netloc)
    port = m.group("port") if m else None
    if (
        not sep
        or scheme not in ("http", "https")
        or m is None
        or (port and not 0 < int(port) < 65536)
    ):
        raise ConfigError(
            f"{url!r} is not an http(s) URL", fix="for example http://127.0.0.1:8080/v1"
        )
    return f"{scheme}://{netloc}/{path or 'v1'}"


def _base_url(value: object) -> str:
    return normalise_base_url(_text(value))


def _variable(value: object) -> str:
    name = _text(value)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError("must be the name of an environment variable")
    return name


T = TypeVar("T")


def _encrypt_new(value: object) -> str:
    if value not in ENCRYPT_NEW:
        raise ValueError(f"must be one of {', '.join(ENCRYPT_NEW)}")
    return str(value)


# Every field the file may set, and how it is checked.
FIELDS: dict[str, Callable[[object], object]] = {
    "model": _text,
    "ollama_host": _host,
    "ask_persona": _text,
    "chat_persona": _text,
    "theme": _text,
    "reasoner": _reasoner,
    "connect_timeout": _seconds,
    "read_timeout": _seconds,
    "first_token_timeout": _seconds,
    "citation_pass_timeout": _seconds,
    "reply_tokens": _count(16, 131072),
    "ask_passages": _count(0, 100),
    "chat_passages": _count(0, 100),
    "passage_chars": _count(0, 1600),
    "think": _think,
    "keep_alive": _duration,
    "num_ctx": _count(2048, 131072),
    "reply_max_chars": _count(200, 10_000_000),
    "open_last": _flag,
    "encrypt_new": _encrypt_new,
    "notes": _paths,
    "openai_base_url": _base_url,
    "openai_api_key_env": _variable,
    "mcp_write": _flag,
    "reflect_when_idle": _flag,
    "reflect_idle_minutes": _minutes,
}
# Keys the file may never hold: a secret in config.toml ends up in backups and dotfile repos.
SECRETS = ("openai_api_key", "api_key")
ENVIRONMENT = {
    "SADIE_MODEL": "model",
    "OLLAMA_HOST": "ollama_host",
    "SADIE_REASONER": "reasoner",
    "SADIE_THINK": "think",
    "OPENAI_BASE_URL": "openai_base_url",
}


def load_settings(path: Path | None = None) -> Settings:
    path = path or config_file()
    data: dict[str, object] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            raise ConfigError(f"{path}: {exc}") from exc
    settings = Settings(config_path=path)
    for key in SECRETS:
        if key in data:
            raise ConfigError(
                f"{path}: {key}: an API key is never read from config.toml",
                fix="set OPENAI_API_KEY in the environment, or name another variable with "
                "openai_api_key_env",
            )
    for key, check in FIELDS.items():
        if key in data:
            setattr(settings, key, _checked(check, data[key], f"{path}: {key}"))
            settings.origins[key] = "config.toml"
    keys = data.get("keys", data.get("keymap", {}))
    if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
        raise ConfigError(f"{path}: [keys] must map binding ids to key names")
    settings.keymap = {str(k): str(v) for k, v in keys.items()}
    for variable, key in ENVIRONMENT.items():
        if os.environ.get(variable, "").strip():
            if settings.origin(key) == "config.toml":
                settings.file_values[key] = getattr(settings, key)
            setattr(settings, key, _checked(FIELDS[key], os.environ[variable], variable))
            settings.origins[key] = variable
    return settings


def variable_for(key: str) -> str | None:
    """The environment variable that overrides setting ``key``, if any."""
    return next((v for v, k in ENVIRONMENT.items() if k == key), None)


def _checked(check: Callable[[object], T], value: object, where: str) -> T:
    try:
        return check(value)
    except ValueError as exc:
        raise ConfigError(f"{where} {exc} (got {value!r})") from exc
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc.message}", fix=exc.fix) from exc


def save_setting(key: str, value: str, path: Path | None = None) -> None:
    """Remember one top-level string setting (the TUI's theme and persona choices), keeping
    the rest of the file — comments included — as it was. The line is written by a TOML
    writer, so any value round-trips."""
    # lazy: tomli_w loads only when save_setting runs, off the start-up path
    import tomli_w

    if key not in {f.name for f in fields(Settings)}:
        raise ConfigError(f"unknown setting {key!r}")
    path = path or config_file()
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    new = tomli_w.dumps({key: value}).strip()
    table = False
    for i, line in enumerate(lines):
        table = table or line.lstrip().startswith("[")
        if not table and line.split("=", 1)[0].strip() == key:
            lines[i] = new
            break
    else:
        # Top-level keys must come before any [table].
        at = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[")), len(lines))
        lines.insert(at, new)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
