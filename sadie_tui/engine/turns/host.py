"""What a turn needs from the object that runs it: the memory, the settings, the emotion
classifier, the reasoner for this turn, the persona, the policies and the attached chips.

A protocol, so the turns never import ``Companion`` (which imports them to run them); the
companion satisfies it, and so can a test's stand-in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...config import Settings
    from ..emotions import EmotionClassifier
    from ..memory import Memory
    from ..personas import Persona
    from ..prompt import Attached
    from ..reasoners.base import Reasoner


class TurnHost(Protocol):
    @property
    def memory(self) -> Memory: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def emotions(self) -> EmotionClassifier: ...

    @property
    def wait_for_embedder(self) -> bool:
        """False (the TUI): retrieve without the vector channel while the model loads."""
        ...

    async def pick_reasoner(self, model: str | None = None) -> tuple[Reasoner, str | None]:
        """The reasoner for this turn, and a notice when falling back to offline."""
        ...

    def forget_status(self) -> None:
        """The model failed mid-turn: the next turn asks the server again."""
        ...

    def persona(self, name: str | None, default: str) -> Persona: ...

    def policies(self) -> tuple[Any, list[str]]: ...

    def attached(self, conversation_id: str) -> list[Attached]: ...
