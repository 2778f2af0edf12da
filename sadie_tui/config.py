"""Settings: ``config.toml`` in the config folder, then environment variables, parsed and
validated here and nowhere else.

Each setting is declared once, on ``Settings``: its name, type and default as a dataclass
field, and in its ``Annotated`` metadata (``Setting``) how a value is checked, the environment
variable that overrides it, and a line saying what it does. The loader, the environment's
overrides, ``save_setting``'s list of keys and the reference table in the README
(``reference``; ``tests/test_config.py`` checks the README holds it) are all read from those
declarations.

A dataclass with ``Annotated`` metadata, not pydantic-settings: ``Settings`` stays a plain
value that tests, benches and ``use_server`` build and change directly (``Settings(reasoner=
"offline")`` reads no environment and no file: nothing happens at construction), the
environment's names are the ones people already set (``OLLAMA_HOST``, ``OPENAI_BASE_URL``,
not one prefix), each setting remembers which source won (``Settings.origin``, for the F4
dialog and doctor), and a bad value is one ``ConfigError`` line naming the file or variable
and the field in sadie's words, all of which pydantic-settings would need custom sources and
error translation to keep.

Environment wins over the file (``SADIE_HOME`` and ``SADIE_CONFIG`` are read by ``paths``). A
value of the wrong type or out of range is a ``ConfigError`` naming the file and the field,
never silently ignored. An API key is never kept in the file: it is read from the environment
when a reasoner is made (``Settings.openai_key``), and a key written into the file is refused.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Annotated, TypeVar, get_args, get_origin, get_type_hints

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


def _encrypt_new(value: object) -> str:
    if value not in ENCRYPT_NEW:
        raise ValueError(f"must be one of {', '.join(ENCRYPT_NEW)}")
    return str(value)


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


def _keymap(value: object) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError("must map binding ids to key names")
    return {str(k): str(v) for k, v in value.items()}


@dataclass(frozen=True)
class Setting:
    """A setting's declaration, beside its field: how a value (from the file or the
    environment) is checked and made canonical, the variable that overrides the file, what
    the setting does (one line for the reference), and the key in config.toml when it is
    not the field's name (``[keys]`` for ``keymap``)."""

    check: Callable[[object], object]
    doc: str
    env: str | None = None
    key: str = ""


@dataclass
class Settings:
    """What sadie is set to. Each setting is a field with its ``Setting`` declaration; the
    fields after them are the load's own record (the file read, where each value came from)."""

    model: Annotated[
        str,
        Setting(
            _text,
            "the model that answers: an Ollama tag, or a name the OpenAI-compatible server serves",
            env="SADIE_MODEL",
        ),
    ] = DEFAULT_MODEL
    ollama_host: Annotated[
        str,
        Setting(
            _host,
            "Ollama's address (a scheme and port 11434 are added when missing); also set in"
            " the app (F4)",
            env="OLLAMA_HOST",
        ),
    ] = DEFAULT_HOST
    ask_persona: Annotated[str, Setting(_text, "the persona `sadie --ask` answers as")] = "analyst"
    chat_persona: Annotated[str, Setting(_text, "the persona a new conversation starts with")] = (
        "friend"
    )
    theme: Annotated[str, Setting(_text, "the app's theme (ctrl+p to change it)")] = "sadie-dark"
    reasoner: Annotated[
        str,
        Setting(
            _reasoner,
            "`auto` (Ollama when it answers, else offline), `ollama`, `openai` (any"
            " OpenAI-compatible server: llama.cpp, LM Studio, vLLM, a hosted endpoint) or"
            " `offline`",
            env="SADIE_REASONER",
        ),
    ] = "auto"
    openai_base_url: Annotated[
        str,
        Setting(
            _base_url,
            "the OpenAI-compatible endpoint (`/v1` added to an address with no path); empty:"
            " the openai client's own default",
            env="OPENAI_BASE_URL",
        ),
    ] = ""
    openai_api_key_env: Annotated[
        str,
        Setting(_variable, "the environment variable holding the API key (never the file)"),
    ] = OPENAI_KEY_ENV
    connect_timeout: Annotated[
        float, Setting(_seconds, "seconds to wait for the model server to accept a connection")
    ] = 3.0
    read_timeout: Annotated[
        float, Setting(_seconds, "seconds: the longest stall between two pieces of a reply")
    ] = 120.0
    first_token_timeout: Annotated[
        float,
        Setting(
            _seconds,
            "seconds before the first word: a long briefing on a CPU takes minutes (the app"
            ' shows "reading your notes… 40 s")',
        ),
    ] = 900.0
    citation_pass_timeout: Annotated[
        float,
        Setting(
            _seconds,
            "seconds: the cap on the citation pass, whose budget comes from the model's"
            " measured speed (a pass still writing is not cut before this)",
        ),
    ] = 300.0
    think: Annotated[
        str,
        Setting(
            _think,
            "`auto` (the model's default), `on` or `off`: Ollama's think option; `off` stops a"
            " qwen3 reasoning for a minute before it answers",
            env="SADIE_THINK",
        ),
    ] = "auto"
    keep_alive: Annotated[
        str,
        Setting(_duration, "how long Ollama keeps the model loaded after a reply (`2h`, `90s`)"),
    ] = "30m"
    num_ctx: Annotated[
        int,
        Setting(
            _count(2048, 131072),
            "the smallest context asked for; a briefing that needs more grows it, and the size"
            " is then kept for the model, so Ollama never reloads it between turns",
        ),
    ] = 8192
    reply_tokens: Annotated[
        int,
        Setting(
            _count(16, 131072),
            "sent as `num_predict`: a model that never stops is cut here",
        ),
    ] = 1024
    # How much of the retrieved memory the model reads (issue 33, measured with a 1.5B model
    # by bench/real_answers.py).
    ask_passages: Annotated[
        int,
        Setting(
            _count(0, 100),
            "how many of the retrieved chunks the model reads in `--ask`, the ones that"
            " answer; 0: all of them, whole",
        ),
    ] = 4
    chat_passages: Annotated[int, Setting(_count(0, 100), "the same in a conversation")] = 4
    passage_chars: Annotated[
        int,
        Setting(_count(0, 1600), "each passage cut to this many characters around what answers"),
    ] = 700
    reply_max_chars: Annotated[
        int,
        Setting(_count(200, 10_000_000), "a reply is cut past this many shown characters"),
    ] = 48000
    open_last: Annotated[
        bool,
        Setting(_flag, "the app reopens the conversation it was showing when it closed"),
    ] = True
    encrypt_new: Annotated[
        str,
        Setting(
            _encrypt_new,
            "a new memory: `ask` (the app asks on its first run), `yes` (born encrypted: a"
            " passphrase is asked, or read from SADIE_PASSPHRASE) or `no` (plain; `sadie"
            " encrypt` converts it later)",
        ),
    ] = "ask"
    notes: Annotated[
        list[Path],
        Setting(
            _paths,
            "folders (or files) of notes the app keeps current while it holds the memory"
            " (`~` expanded)",
        ),
    ] = field(default_factory=list)
    mcp_write: Annotated[
        bool, Setting(_flag, "`sadie mcp` may add notes (add_note); read-only otherwise")
    ] = False
    reflect_when_idle: Annotated[
        bool,
        Setting(_flag, "the app may run `sadie reflect` in the background while nobody types"),
    ] = False
    reflect_idle_minutes: Annotated[
        float, Setting(_minutes, "... once nothing has been typed for this many minutes")
    ] = 10.0
    keymap: Annotated[
        dict[str, str],
        Setting(_keymap, 'binding ids remapped to keys (`send = "ctrl+s"`)', key="keys"),
    ] = field(default_factory=dict)
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


# Keys the file may never hold: a secret in config.toml ends up in backups and dotfile repos.
SECRETS = ("openai_api_key", "api_key")


def declared() -> dict[str, Setting]:
    """Every declared setting by field name, in the order of ``Settings``."""
    hints = get_type_hints(Settings, include_extras=True)
    found: dict[str, Setting] = {}
    for f in fields(Settings):
        for meta in getattr(hints[f.name], "__metadata__", ()):
            if isinstance(meta, Setting):
                found[f.name] = meta
    return found


_TYPE_WORDS = {str: "text", float: "number", int: "whole number", bool: "true or false"}


def _type_word(hint: object) -> str:
    kind = get_args(hint)[0]  # Annotated[kind, Setting(…)]
    origin = get_origin(kind)
    if origin is list:
        return "list of paths"
    if origin is dict:
        return "table"
    return _TYPE_WORDS[kind]


def _default_shown(value: object) -> str:
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, list | dict):
        return "`[]`" if isinstance(value, list) else "none"
    return f"`{value}`"


def reference() -> str:
    """The settings as a Markdown table (key, type, default, environment variable, what it
    does), generated from their declarations: the README holds it between its
    ``<!-- settings -->`` marks."""
    hints = get_type_hints(Settings, include_extras=True)
    settings_declared = declared()
    defaults = Settings()
    lines = [
        "| key | type | default | environment | what it does |",
        "| --- | --- | --- | --- | --- |",
    ]
    for f in fields(Settings):
        setting = settings_declared.get(f.name)
        if setting is None:
            continue
        key = f"`[{setting.key}]`" if setting.key else f"`{f.name}`"
        env = f"`{setting.env}`" if setting.env else ""
        doc = setting.doc.replace("|", "\\|")
        lines.append(
            f"| {key} | {_type_word(hints[f.name])} | {_default_shown(getattr(defaults, f.name))} | {env} | {doc} |"
        )
    return "\n".join(lines) + "\n"


def load_settings(path: Path | None = None) -> Settings:
    path = path or config_file()
    data: dict[str, object] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            raise ConfigError(f"{path}: {exc}") from exc
    settings = Settings(config_path=path)
    for secret in SECRETS:
        if secret in data:
            raise ConfigError(
                f"{path}: {secret}: an API key is never read from config.toml",
                fix="set OPENAI_API_KEY in the environment, or name another variable with "
                "openai_api_key_env",
            )
    settings_declared = declared()
    for name, setting in settings_declared.items():
        # A table's own key first ([keys]); the field's name is read too (keymap = {…}).
        found = next((k for k in (setting.key, name) if k and k in data), None)
        if found is not None:
            where = f"{path}: [{setting.key}]" if setting.key else f"{path}: {found}"
            setattr(settings, name, _checked(setting.check, data[found], where))
            settings.origins[name] = "config.toml"
    for name, setting in settings_declared.items():
        variable = setting.env
        if variable and os.environ.get(variable, "").strip():
            if settings.origin(name) == "config.toml":
                settings.file_values[name] = getattr(settings, name)
            setattr(settings, name, _checked(setting.check, os.environ[variable], variable))
            settings.origins[name] = variable
    return settings


def variable_for(key: str) -> str | None:
    """The environment variable that overrides setting ``key``, if any."""
    setting = declared().get(key)
    return setting.env if setting else None


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

    if key not in declared() or declared()[key].key:
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
