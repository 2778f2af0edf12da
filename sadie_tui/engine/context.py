"""What every reasoning piece of the engine reads, and how it gets its model.

``TurnContext`` is a plain context object the ``Session`` builds once per open memory: the
memory, the settings, the register classifier, each model's measured rates and the last
check of each model. The turns (``turns/``) and reflection (``reflect/``) take it as an
argument and return events or a result; they never call back into whoever runs them. It
lives below both, so that reflection, which is not a turn, never imports ``turns/``.

``pick_reasoner`` chooses the reasoner (the model server when it answers, else offline, as
``Settings.reasoner`` says); ``check_model`` and ``models`` are what a face asks of the
model server.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .emotions import EmotionClassifier, classifier_for
from .reasoners import choose
from .reasoners.offline import OfflineReasoner
from .reasoners.rates import RATES_FILE, Rates

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

    from ..config import Settings
    from .memory import Memory
    from .reasoners.base import Reasoner
    from .reasoners.ollama import ModelInfo
    from .store.db import Database

# How long a model check is trusted. Longer than the app's re-probe (every 30 s), so that a
# turn never waits for a check of its own (~40 ms); a turn that fails on the model clears it.
STATUS_TTL = 45.0


@dataclass(frozen=True)
class ModelStatus:
    """Whether a model answers now, where, and what to do when it does not."""

    online: bool
    model: str
    host: str
    detail: str
    fix: str | None = None


@dataclass(frozen=True)
class Choice:
    """The reasoner a turn uses, and the notice to show when it fell back to offline."""

    reasoner: Reasoner
    notice: str | None = None


class ModelChecks:
    """The last check of each model, trusted for ``STATUS_TTL`` seconds."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[float, ModelStatus]] = {}

    def fresh(self, name: str) -> ModelStatus | None:
        seen = self._seen.get(name)
        if seen and time.monotonic() - seen[0] < STATUS_TTL:
            return seen[1]
        return None

    def keep(self, status: ModelStatus) -> None:
        self._seen[status.model] = (time.monotonic(), status)

    def forget(self) -> None:
        """The model failed mid-turn: the next turn asks the server again (and so falls back
        to offline at once if it has gone away)."""
        self._seen.clear()


@dataclass
class TurnContext:
    """One open memory as the turns see it. ``reasoner``: a fixed reasoner for every turn (a
    test's or a bench's); ``wait_for_embedder=False`` (the TUI): while the embedding model is
    still loading, retrieve with the keyword and graph channels instead of waiting for it."""

    memory: Memory
    settings: Settings
    emotions: EmotionClassifier
    rates: Rates
    reasoner: Reasoner | None = None
    wait_for_embedder: bool = True
    checks: ModelChecks = field(default_factory=ModelChecks)

    @classmethod
    def of(
        cls,
        memory: Memory,
        settings: Settings,
        *,
        reasoner: Reasoner | None = None,
        wait_for_embedder: bool = True,
    ) -> TurnContext:
        # Each model's measured speed, shared by every turn and kept beside the memory.
        rates = Rates(None if memory.db.read_only else memory.home / RATES_FILE)
        return cls(
            memory,
            settings,
            classifier_for(memory.embedder),
            rates,
            reasoner=reasoner,
            wait_for_embedder=wait_for_embedder,
        )

    @property
    def db(self) -> Database:
        return self.memory.db

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The embedding model's vectors (loaded on first use): the ``Encode`` the reply's
        checks use for a paraphrase's closeness to its note (``reply.closeness``)."""
        return self.memory.embedder.encode(list(texts))


async def check_model(
    ctx: TurnContext, *, fresh: bool = False, model: str | None = None
) -> ModelStatus:
    """Whether ``model`` (default: the configured one) answers now; the last check is
    trusted for ``STATUS_TTL`` seconds unless ``fresh``."""
    s = ctx.settings
    where = choose.endpoint(s)
    if ctx.reasoner is not None:
        return ModelStatus(not ctx.reasoner.offline, ctx.reasoner.model, where, "")
    if s.reasoner == "offline":
        return ModelStatus(False, OfflineReasoner.model, where, "offline by choice")
    name = model or s.model
    known = None if fresh else ctx.checks.fresh(name)
    if known is not None:
        return known
    online, detail, fix = await choose.model_status(s, name)
    status = ModelStatus(online, name, where, detail, fix)
    ctx.checks.keep(status)
    return status


async def models(ctx: TurnContext) -> list[ModelInfo]:
    """The models the model server has, for a picker."""
    return await choose.list_models(ctx.settings)


async def pick_reasoner(ctx: TurnContext, model: str | None = None) -> Choice:
    """The reasoner for this turn (``model``: instead of the configured one), and a notice
    when falling back to offline. ``Settings.reasoner``: ``ollama`` or ``openai`` use that
    server whatever it says (its errors are the turn's), ``offline`` never asks a model, and
    ``auto`` asks Ollama whether the model answers first."""
    if ctx.reasoner is not None:
        return Choice(ctx.reasoner)
    s = ctx.settings
    name = model or s.model
    made = choose.make_reasoner(s, name, ctx.rates)
    if s.reasoner != "auto":
        return Choice(made)
    status = await check_model(ctx, model=name)
    if status.online:
        return Choice(made)
    notice = status.detail + (f" ({status.fix})" if status.fix else "") + "; answering offline"
    return Choice(OfflineReasoner(status.detail), notice)
