"""Personas: the lenses ask and chat look through, one TOML file each.

Shipped personas live in ``personas/`` at the project root; a person may add or override
them in ``<config folder>/personas/`` (same name wins). A file sets the chunk count, the time
window and recency half-life, the channel weights, which channels take part (graph, beliefs,
contested beliefs, observations and how much observations weigh), the ask stages and a short
voice instruction. Every field is checked — numbers are finite and within a range of their
own, so a NaN weight or a window of a billion years never reaches retrieval; a bad file is a
``ConfigError`` naming the file and the field, set aside while the other files load. The
format is documented in the README and by the shipped files themselves.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from .errors import ConfigError
from .jsonvalue import JSONObject

STAGES = ("reframe", "retrieve", "counter", "draft", "ground_check", "revise")
CHANNELS = ("vector", "keyword", "graph")
MAX_CHUNKS = 100
#: The longest time window and recency half-life: a century of notes (dates before year 1
#: cannot be computed, so 99999999999 days was an OverflowError deep in retrieval).
MAX_DAYS = 36_500
#: The largest channel weight (weights are relative: the shipped ones are below 1).
MAX_WEIGHT = 100.0
MAX_OBSERVATION_WEIGHT = 10.0
#: A persona file that sets no half-life gets this one: recency then weighs every persona's
#: ranking, gently (a year-old note scores 4 % below a new one, all else equal). Measured neutral on
#: LoCoMo (fused recall@10 0.8981 → 0.8983) and the demo's questions (recall@5 0.7667 either
#: way), where 730 days cost the demo 0.025 (README, "A default recency half-life").
DEFAULT_HALF_LIFE_DAYS = 1825.0

_TOP_KEYS = {
    "name",
    "description",
    "chunks",
    "window_days",
    "half_life_days",
    "mmr",
    "voice",
    "stages",
    "weights",
    "channels",
}
_CHANNEL_KEYS = {"graph", "beliefs", "contested", "observations", "observation_weight"}


@dataclass(frozen=True)
class Persona:
    name: str
    description: str
    chunks: int
    window_days: int | None  # only the last N days; None = the whole history
    half_life_days: float | None  # recency decay; None = age does not matter (a "first time")
    weights: Mapping[str, float]  # per channel: vector, keyword, graph
    graph: bool
    beliefs: bool
    contested: bool
    observations: bool
    observation_weight: float
    stages: tuple[str, ...]
    voice: str
    source: str
    mmr: float | None = 0.9  # MMR lambda (1 = pure relevance); None = no diversity rerank


def _fail(path: Path, key: str, problem: str) -> ConfigError:
    return ConfigError(f"persona file {path}: field '{key}' {problem}", title="Persona")


def _number(
    path: Path, key: str, value: object, *, low: float, high: float, whole: bool = False
) -> float:
    """``value`` if it is a finite number in ``[low, high]`` (a whole one if ``whole``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(path, key, f"must be a number, not {value!r}")
    if whole and not isinstance(value, int):
        raise _fail(path, key, f"must be a whole number, not {value!r}")
    if not math.isfinite(value):
        raise _fail(path, key, f"must be a finite number, not {value!r}")
    if not low <= value <= high:
        raise _fail(path, key, f"must be between {low:g} and {high:g}, not {value!r}")
    return value


def _flag(path: Path, key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, key, f"must be true or false, not {value!r}")
    return value


def _text(path: Path, key: str, value: object, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise _fail(path, key, "must be a non-empty string")
    return " ".join(value.split())


def parse_persona(data: Mapping[str, object], path: Path) -> Persona:
    """A validated persona from the parsed TOML of ``path``."""
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise _fail(
            path, unknown[0], f"is not a persona field (known: {', '.join(sorted(_TOP_KEYS))})"
        )
    name = _text(path, "name", data.get("name", path.stem)).lower()
    if not name.replace("-", "").replace("_", "").isalnum():
        raise _fail(path, "name", "may hold only letters, digits, - and _")
    if "chunks" not in data:
        raise _fail(path, "chunks", "is required")
    chunks = int(_number(path, "chunks", data["chunks"], low=1, high=MAX_CHUNKS, whole=True))
    window = data.get("window_days")
    window_days = (
        None
        if window is None
        else int(_number(path, "window_days", window, low=1, high=MAX_DAYS, whole=True))
    )
    half = data.get("half_life_days")
    half_life = (
        DEFAULT_HALF_LIFE_DAYS
        if half is None
        else float(_number(path, "half_life_days", half, low=0.1, high=MAX_DAYS))
    )
    mmr_value = data.get("mmr", 0.9)
    if mmr_value is False:
        mmr: float | None = None
    elif mmr_value is True:
        mmr = 0.9
    else:
        mmr = float(_number(path, "mmr", mmr_value, low=0.0, high=1.0))
        if mmr >= 1.0:
            mmr = None

    raw_weights = data.get("weights", {})
    if not isinstance(raw_weights, Mapping):
        raise _fail(path, "weights", "must be a table of channel = weight")
    weights: dict[str, float] = {}
    for key, value in raw_weights.items():
        if key not in CHANNELS:
            raise _fail(path, f"weights.{key}", f"is not a channel (known: {', '.join(CHANNELS)})")
        weights[key] = float(_number(path, f"weights.{key}", value, low=0.0, high=MAX_WEIGHT))
    for key in CHANNELS:
        weights.setdefault(key, 0.0)
    if not any(weights.values()):
        raise _fail(path, "weights", "must give at least one channel a positive weight")

    raw_channels = data.get("channels", {})
    if not isinstance(raw_channels, Mapping):
        raise _fail(path, "channels", "must be a table")
    unknown = sorted(set(raw_channels) - _CHANNEL_KEYS)
    if unknown:
        raise _fail(
            path,
            f"channels.{unknown[0]}",
            f"is not a channel switch (known: {', '.join(sorted(_CHANNEL_KEYS))})",
        )
    flags = {
        key: _flag(path, f"channels.{key}", raw_channels.get(key, default))
        for key, default in (
            ("graph", True),
            ("beliefs", True),
            ("contested", False),
            ("observations", True),
        )
    }
    observation_weight = float(
        _number(
            path,
            "channels.observation_weight",
            raw_channels.get("observation_weight", 1.0),
            low=0.0,
            high=MAX_OBSERVATION_WEIGHT,
        )
    )

    raw_stages = data.get("stages", list(STAGES))
    if not isinstance(raw_stages, list) or not raw_stages:
        raise _fail(path, "stages", f"must be a non-empty list drawn from {', '.join(STAGES)}")
    for stage in raw_stages:
        if stage not in STAGES:
            raise _fail(path, "stages", f"has unknown stage {stage!r} (known: {', '.join(STAGES)})")
    if len(set(raw_stages)) != len(raw_stages):
        raise _fail(path, "stages", "lists a stage twice")
    if "retrieve" not in raw_stages:
        raise _fail(path, "stages", "must include 'retrieve'")

    return Persona(
        name=name,
        description=_text(path, "description", data.get("description", ""), empty=True),
        chunks=chunks,
        window_days=window_days,
        half_life_days=half_life,
        weights=MappingProxyType(weights),
        graph=flags["graph"],
        beliefs=flags["beliefs"],
        contested=flags["contested"],
        observations=flags["observations"],
        observation_weight=observation_weight,
        stages=tuple(raw_stages),
        voice=_text(path, "voice", data.get("voice", "")),
        source=str(path),
        mmr=mmr,
    )


def load_persona_file(path: Path) -> Persona:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"persona file {path}: cannot be read ({exc})", title="Persona") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"persona file {path}: invalid TOML ({exc})", title="Persona") from exc
    return parse_persona(data, path)


def _user_dir() -> Path:
    # lazy: paths reads the environment; personas can be parsed without it
    from ..paths import config_dir

    return config_dir() / "personas"


def persona_json(persona: Persona) -> JSONObject:
    """``persona`` in the shape of its own file (the README's format), plus ``source``: what
    the holder of a memory sends a client, and what ``persona_from_json`` reads back."""
    return {
        "name": persona.name,
        "description": persona.description,
        "chunks": persona.chunks,
        "window_days": persona.window_days,
        "half_life_days": persona.half_life_days,
        "mmr": False if persona.mmr is None else persona.mmr,
        "voice": persona.voice,
        "stages": [stage for stage in persona.stages],
        "weights": {channel: weight for channel, weight in persona.weights.items()},
        "channels": {
            "graph": persona.graph,
            "beliefs": persona.beliefs,
            "contested": persona.contested,
            "observations": persona.observations,
            "observation_weight": persona.observation_weight,
        },
        "source": persona.source,
    }


def persona_from_json(data: object) -> Persona:
    """A persona from ``persona_json``'s shape, checked field by field like a file (a bad
    one is a ``ConfigError`` naming its source and the field)."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"a persona must be an object, not {data!r}", title="Persona")
    fields = dict(data)
    source = Path(str(fields.pop("source", "") or f"{fields.get('name', 'persona')}.toml"))
    return parse_persona(fields, source)


class PersonaProblem(NamedTuple):
    """A persona file that did not load: where it is, and the error naming file and field."""

    path: Path
    error: ConfigError

    @property
    def reason(self) -> str:
        """Why, in one line (it names the file), for a notification or a line on stderr."""
        return self.error.one_line()


class Personas(dict[str, Persona]):
    """The personas that loaded, by name; ``problems``: one for each file that did not (it is
    left out, and the others still work), so a face can name it. What ``Session.personas``
    returns, and what ``GET /v1/personas`` carries as ``to_json`` / ``from_json``."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[PersonaProblem] = []

    def descriptions(self) -> dict[str, str]:
        """Name → description, for a picker."""
        return {name: persona.description for name, persona in self.items()}

    def to_json(self) -> JSONObject:
        """``{"personas": [persona_json …], "problems": [{"path", "reason"} …]}``."""
        return {
            "personas": [persona_json(p) for p in self.values()],
            "problems": [{"path": str(p.path), "reason": p.reason} for p in self.problems],
        }

    @classmethod
    def from_json(cls, data: object) -> Personas:
        """``to_json``'s shape read back; a persona that does not check out becomes one more
        problem, as a broken file would."""
        found = cls()
        if not isinstance(data, Mapping):
            data = {}
        for item in data.get("personas") or ():
            try:
                persona = persona_from_json(item)
            except ConfigError as exc:
                where = item.get("source") if isinstance(item, Mapping) else None
                found.problems.append(PersonaProblem(Path(str(where or "?")), exc))
                continue
            found[persona.name] = persona
        for problem in data.get("problems") or ():
            if isinstance(problem, Mapping):
                reason = str(problem.get("reason") or "could not be loaded")
                error = ConfigError(reason, title="Persona")
                found.problems.append(PersonaProblem(Path(str(problem.get("path") or "?")), error))
        return found


def load_personas(extra_dir: Path | None = None) -> Personas:
    """Shipped personas, then the user's (from ``extra_dir``, default the config folder). A
    file that cannot be read or is not a valid persona is left out, with its error kept in
    ``problems``: one typo in a persona of your own must not stop every other one."""
    # lazy: as in _user_dir
    from ..paths import shipped_personas

    found = Personas()
    user = extra_dir if extra_dir is not None else _user_dir()
    for folder in (shipped_personas(), user):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                persona = load_persona_file(path)
            except ConfigError as exc:
                found.problems.append(PersonaProblem(path, exc))
                continue
            found[persona.name] = persona
    return found


def get_persona(name: str, extra_dir: Path | None = None) -> Persona:
    personas = load_personas(extra_dir)
    key = name.strip().lower()
    if key in personas:
        return personas[key]
    for path, problem in personas.problems:
        if path.stem.lower() == key:
            raise problem  # the persona asked for is the one whose file is broken
    known = ", ".join(sorted(personas)) or "none"
    message = f"unknown persona {name!r} (known: {known})"
    if personas.problems:
        message += f"; {len(personas.problems)} persona file(s) could not be loaded"
    raise ConfigError(message, title="Persona")
