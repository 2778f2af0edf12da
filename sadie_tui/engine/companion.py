"""The companion: what a turn needs from the memory and the model, and the two turns.

It picks the reasoner for a turn (Ollama when it answers, else offline), loads personas,
policies and the attached chips, and keeps the emotion classifier; the turns themselves are
``turns.chat.ChatTurn`` and ``turns.ask.run_ask``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .emotions import classifier_for
from .errors import SadieError
from .events import Event
from .personas import Persona, get_persona
from .policies import load_policies
from .prompt import Attached, Excerpt
from .reasoners.base import Reasoner
from .reasoners.offline import OfflineReasoner
from .reasoners.ollama import ModelInfo, OllamaReasoner, list_models, model_status
from .reasoners.rates import RATES_FILE, Rates
from .turns.ask import AskResult, run_ask
from .turns.chat import ChatTurn

if TYPE_CHECKING:
    from ..config import Settings
    from .chips import NewChip
    from .memory import Memory

# How long a model check is trusted. Longer than the app's re-probe (every 30 s), so that a
# turn never waits for a check of its own (~40 ms); a turn that fails on the model clears it.
STATUS_TTL = 45.0


@dataclass(frozen=True)
class ModelStatus:
    online: bool
    model: str
    host: str
    detail: str
    fix: str | None = None


class Companion:
    """The engine facade for chat and ask; one per open memory."""

    def __init__(
        self,
        memory: Memory,
        settings: Settings,
        *,
        reasoner: Reasoner | None = None,
        wait_for_embedder: bool = True,
    ) -> None:
        """``wait_for_embedder=False`` (the TUI): while the embedding model is still loading,
        retrieve with the keyword and graph channels instead of waiting ~5 s for torch."""
        self.memory = memory
        self.wait_for_embedder = wait_for_embedder
        self.settings = settings
        self._reasoner = reasoner
        self.emotions = classifier_for(memory.embedder)
        self._status: dict[str, tuple[float, ModelStatus]] = {}
        # Each model's measured speed, shared by every turn and kept beside the memory.
        self.rates = Rates(None if memory.db.read_only else memory.home / RATES_FILE)

    def warm(self) -> None:
        """Load the embedding model and the emotion prototypes (blocking; run it in a thread)."""
        self.memory.embedder.warm()
        self.emotions.warm()

    # -- the model -------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        """auto | ollama | offline (``Settings.reasoner``, from ``SADIE_REASONER`` or config)."""
        return self.settings.reasoner

    async def check_model(self, *, fresh: bool = False, model: str | None = None) -> ModelStatus:
        """Whether ``model`` (default: the configured one) answers now; cached for
        ``STATUS_TTL`` seconds unless ``fresh``."""
        s = self.settings
        if self._reasoner is not None:
            return ModelStatus(not self._reasoner.offline, self._reasoner.model, s.ollama_host, "")
        if self.mode == "offline":
            return ModelStatus(False, OfflineReasoner.model, s.ollama_host, "offline by choice")
        name = model or s.model
        now = time.monotonic()
        cached = self._status.get(name)
        if not fresh and cached and now - cached[0] < STATUS_TTL:
            return cached[1]
        online, detail, fix = await model_status(s.ollama_host, name)
        status = ModelStatus(online, name, s.ollama_host, detail, fix)
        self._status[name] = (now, status)
        return status

    def forget_status(self) -> None:
        """The model failed mid-turn: the next turn asks the server again (and so falls back
        to offline at once if it has gone away)."""
        self._status.clear()

    async def models(self) -> list[ModelInfo]:
        """The models the Ollama server has pulled (``/api/tags``), for a picker."""
        return await list_models(self.settings.ollama_host, self.settings.connect_timeout)

    async def pick_reasoner(self, model: str | None = None) -> tuple[Reasoner, str | None]:
        """The reasoner for this turn, and a notice when falling back to offline."""
        if self._reasoner is not None:
            return self._reasoner, None
        s = self.settings
        name = model or s.model
        ollama = OllamaReasoner(
            s.ollama_host,
            name,
            connect_timeout=s.connect_timeout,
            read_timeout=s.read_timeout,
            first_token_timeout=s.first_token_timeout,
            reply_tokens=s.reply_tokens,
            rates=self.rates,
            think=s.think,
            keep_alive=s.keep_alive,
            num_ctx=s.num_ctx,
        )
        if self.mode == "ollama":
            return ollama, None
        if self.mode == "offline":
            return OfflineReasoner(), None
        status = await self.check_model(model=name)
        if status.online:
            return ollama, None
        notice = status.detail + (f" ({status.fix})" if status.fix else "") + "; answering offline"
        return OfflineReasoner(status.detail), notice

    # -- shared pieces --------------------------------------------------------------------
    def persona(self, name: str | None, default: str) -> Persona:
        from ..paths import config_dir

        return get_persona(name or default, config_dir() / "personas")

    def policies(self) -> tuple[Any, list[str]]:
        policy_set = load_policies(self.memory.home / "policies.toml")
        return policy_set.for_scope("chat"), list(policy_set.errors)

    def attached(self, conversation_id: str) -> list[Attached]:
        from .chips import list_chips, resolve

        items: list[Attached] = []
        for chip in list_chips(self.memory.db, conversation_id):
            try:
                content = resolve(self.memory.db, chip)
            except SadieError:
                continue
            excerpt = None
            if content.episode_id:
                excerpt = Excerpt(
                    content.episode_id, content.date or "", content.title, content.text
                )
            items.append(Attached(chip.kind, content.title, content.text, excerpt))
        return items

    async def ask(self, question: str, *, persona: str | None = None) -> AskResult:
        return await run_ask(self, question, persona)

    def chat(
        self,
        message: str,
        *,
        conversation_id: str | None = None,
        persona: str | None = None,
        new: bool = False,
        regenerate: bool = False,
        model: str | None = None,
        chips: Sequence[NewChip] = (),
    ) -> AsyncIterator[Event]:
        """One chat turn's events (see ``turns.chat``)."""
        turn = ChatTurn(
            self,
            message,
            conversation_id,
            persona,
            new,
            regenerate=regenerate,
            model=model,
            chips=tuple(chips),
        )
        return turn.run()
