"""Each model's measured speed, and the time budgets that come from it.

Ollama reports ``prompt_eval_count/duration`` and ``eval_count/duration`` on every reply's
last line. :class:`Rates` keeps, per model, how fast it reads a prompt, writes freely and
writes under a JSON schema (a grammar slows every token), as running averages persisted in
the memory's home (``model_rates.json``), so the second launch budgets like the hundredth.

Beside the rates, the file keeps what a server was found to accept (``feature``/``remember``:
the OpenAI-compatible reasoner's ``response_format`` and usage probes), under ``@features``,
and each model's **habits** (``pays``/``tried``/``skipped``): whether a step that costs it
time pays off. A habit is judged after ``HABIT_TRIES`` tries and kept while it pays in at
least one of every ``HABIT_TRIES``; a dropped one is tried again after ``HABIT_RETRY`` turns
without it. The two steps judged so: asking for the citations tail (``TAIL``: a model that
never writes it reads ~130 tokens of instructions for nothing, ~1.4 s for a 1.5B model on a
CPU, and the citation pass points instead) and the ask's revision (``REVISE``: kept only when
better supported; ``qwen2.5-coder:1.5b``'s were kept 3 times in 75, at 5–14 s each).

A stage's :class:`Budget` follows: the wait for its first token is what reading its prompt
should take at the measured rate (with room to spare), and a stage that is writing is cut
only when it stalls for many tokens' worth of time — never at a round number while tokens
still come. ``citation_pass_timeout`` is only the cap over all of it.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from ..jsonvalue import JSON, JSONObject

__all__ = ["Budget", "Rate", "Rates", "RATES_FILE", "REVISE", "TAIL"]

RATES_FILE = "model_rates.json"
FEATURES = "@features"  # the file's one key that is not a model
# A running average: each new measure weighs this much.
WEIGHT = 0.3
# Room on top of the expected reading time, and the reading time assumed for an unknown model
# (a 3,500-token briefing on a slow CPU, at 20 tokens a second).
READ_SLACK = 2.0
READ_FLOOR = 15.0
UNKNOWN_READ_TPS = 20.0
READ_OVER_WRITE = 20.0
# A writing stage is stalled after this many tokens' worth of silence (and never less than
# STALL_FLOOR seconds: a scheduler hiccup is not a stall).
STALL_TOKENS = 25
STALL_FLOOR = 10.0
CHARS_PER_TOKEN = 3.2
# Habits (module docstring): judged after this many tries, kept while one in this many pays,
# and a dropped one tried again after this many turns without it.
HABIT_TRIES = 6
HABIT_RETRY = 25
TAIL = "tail"  # the model writes the @@CITATIONS@@ tail when asked
REVISE = "revise"  # the ask's revision is kept over the draft


@dataclass
class Rate:
    """One model's tokens per second: reading, writing freely, writing under a schema
    (0 where nothing was measured yet)."""

    prompt_tps: float = 0.0
    eval_tps: float = 0.0
    structured_tps: float = 0.0
    turns: int = 0
    num_ctx: int = 0  # the context size last asked for: kept, so the model is not reloaded


@dataclass(frozen=True)
class Budget:
    """How long a stage may wait for its first token, and for each token after it."""

    first: float
    stall: float
    cap: float

    def first_wait(self) -> float:
        return min(self.first, self.cap)

    def stall_wait(self) -> float:
        return min(self.stall, self.cap)


def _blend(old: float, new: float) -> float:
    if new <= 0:
        return old
    return new if old <= 0 else round(old * (1 - WEIGHT) + new * WEIGHT, 2)


class Rates:
    """Per-model rates, read from and written to ``path`` (None: kept in memory only)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._rates: dict[str, Rate] = {}
        self._features: dict[str, JSONObject] = {}
        self._dirty = False
        if path is not None:
            self._rates, self._features = _load(path)

    def feature(self, key: str) -> JSONObject:
        """What was remembered about ``key`` (a server and model), ``{}`` when nothing."""
        with self._lock:
            return dict(self._features.get(key, {}))

    def remember(self, key: str, **values: JSON) -> None:
        """Remember what ``key`` accepts (JSON values), kept with the rates."""
        with self._lock:
            known = self._features.setdefault(key, {})
            if any(known.get(k) != v for k, v in values.items()):
                known.update(values)
                self._dirty = True

    def pays(self, model: str, habit: str) -> bool:
        """Whether to take the step ``habit`` with ``model`` this turn (module docstring)."""
        tried, paid, skipped = self._habit(model, habit)
        if tried < HABIT_TRIES or paid * HABIT_TRIES >= tried:
            return True
        return skipped >= HABIT_RETRY

    def tried(self, model: str, habit: str, *, paid: bool) -> None:
        """The step was taken, and paid off or not."""
        tried, done, _ = self._habit(model, habit)
        self.remember(_habit_key(model, habit), tried=tried + 1, paid=done + int(paid), skipped=0)

    def skipped(self, model: str, habit: str) -> None:
        """The step was left out because it did not pay (``pays`` said so)."""
        tried, paid, skipped = self._habit(model, habit)
        self.remember(_habit_key(model, habit), tried=tried, paid=paid, skipped=skipped + 1)

    def habit(self, model: str, habit: str) -> str:
        """How often the step paid with ``model``: "0 of 6"."""
        tried, paid, _ = self._habit(model, habit)
        return f"{paid} of {tried}"

    def _habit(self, model: str, habit: str) -> tuple[int, int, int]:
        known = self.feature(_habit_key(model, habit))

        def count(key: str) -> int:
            value = known.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        return max(0, count("tried")), max(0, count("paid")), max(0, count("skipped"))

    def get(self, model: str) -> Rate:
        with self._lock:
            return Rate(**asdict(self._rates.get(model, Rate())))

    def record(
        self,
        model: str,
        *,
        prompt_tokens: int = 0,
        prompt_seconds: float = 0.0,
        eval_tokens: int = 0,
        eval_seconds: float = 0.0,
        structured: bool = False,
    ) -> None:
        """Fold one reply's counters in (a prompt served from the cache, a handful of tokens,
        reads nothing: rates need a few tokens to mean anything)."""
        with self._lock:
            rate = self._rates.setdefault(model, Rate())
            if prompt_tokens >= 32 and prompt_seconds > 0:
                rate.prompt_tps = _blend(rate.prompt_tps, prompt_tokens / prompt_seconds)
            if eval_tokens >= 8 and eval_seconds > 0:
                tps = eval_tokens / eval_seconds
                if structured:
                    rate.structured_tps = _blend(rate.structured_tps, tps)
                else:
                    rate.eval_tps = _blend(rate.eval_tps, tps)
            rate.turns += 1
            self._dirty = True

    def context(self, model: str, needed: int) -> int:
        """The context size to ask ``model`` for: the one asked for before, unless ``needed``
        is larger (Ollama reloads a model whose ``num_ctx`` changes)."""
        with self._lock:
            rate = self._rates.setdefault(model, Rate())
            if needed > rate.num_ctx:
                rate.num_ctx = needed
                self._dirty = True
            return rate.num_ctx

    def budget(
        self, model: str, *, prompt_chars: int, structured: bool = False, cap: float
    ) -> Budget:
        """The budget of a stage whose prompt has ``prompt_chars`` characters the server may
        have to read (all of them when its cache misses)."""
        rate = self.get(model)
        read_tps = rate.prompt_tps or UNKNOWN_READ_TPS
        if rate.eval_tps:
            # A prompt served from the server's cache reads as impossibly fast (some servers
            # count the cached tokens as read): no model reads more than READ_OVER_WRITE times
            # faster than it writes, so a miss of the cache still gets the time it needs.
            read_tps = min(read_tps, READ_OVER_WRITE * rate.eval_tps)
        first = READ_FLOOR + READ_SLACK * (prompt_chars / CHARS_PER_TOKEN) / read_tps
        write_tps = (rate.structured_tps if structured else 0.0) or rate.eval_tps
        stall = max(STALL_FLOOR, STALL_TOKENS / write_tps) if write_tps else STALL_FLOOR * 3
        return Budget(first=round(first, 1), stall=round(stall, 1), cap=cap)

    def save(self) -> None:
        """Write the rates if they changed (atomically: a crash keeps the old file)."""
        if self.path is None:
            return
        with self._lock:
            if not self._dirty:
                return
            data: JSONObject = {name: asdict(rate) for name, rate in self._rates.items()}
            if self._features:
                data[FEATURES] = {k: dict(v) for k, v in self._features.items()}
            self._dirty = False
        tmp = self.path.with_suffix(".tmp")
        try:
            # The owner's only (0600) whatever the umask, like everything else in the home.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.fchmod(fd, 0o600)  # a .tmp left by an older sadie keeps its mode otherwise
            with open(fd, "w", encoding="utf-8") as out:
                out.write(json.dumps(data, indent=1, sort_keys=True))
            os.replace(tmp, self.path)
        except OSError:
            # Only a hint for budgets: a read-only or full home costs the next launch a guess.
            pass


def _habit_key(model: str, habit: str) -> str:
    return f"{habit} {model}"


def _load(path: Path) -> tuple[dict[str, Rate], dict[str, JSONObject]]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, {}
    rates: dict[str, Rate] = {}
    if not isinstance(raw, dict):
        return rates, {}
    found = raw.pop(FEATURES, None)
    features = {
        str(k): dict(v)
        for k, v in (found if isinstance(found, dict) else {}).items()
        if isinstance(v, dict)
    }
    for name, values in raw.items():
        if not isinstance(values, dict):
            continue
        try:
            rates[str(name)] = Rate(
                prompt_tps=float(values.get("prompt_tps") or 0),
                eval_tps=float(values.get("eval_tps") or 0),
                structured_tps=float(values.get("structured_tps") or 0),
                turns=int(values.get("turns") or 0),
                num_ctx=int(values.get("num_ctx") or 0),
            )
        except (TypeError, ValueError):
            continue
    return rates, features
