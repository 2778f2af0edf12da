"""The chat screen's widgets, as its controllers are handed them once it has composed.

The screen owns the layout; the turn controller and the conversation controller write to
these widgets (attributes and methods downwards) and never query the screen for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from ..display import safe
from .widgets.chip_bar import ChipBar
from .widgets.citations import CitationSidebar
from .widgets.prompt import PromptInput
from .widgets.sigil import EmotionSigil
from .widgets.status import StatusLine
from .widgets.transcript import Transcript

NEW_TITLE = "New conversation"


@dataclass(frozen=True)
class ChatWidgets:
    """The widgets a reply and a conversation are shown in."""

    title: Static
    sigil: EmotionSigil
    transcript: Transcript
    chips: ChipBar
    prompt: PromptInput
    sources: CitationSidebar
    status: StatusLine

    def show_title(self, title: str) -> None:
        """The conversation's title in the top bar (shown as text, never markup)."""
        self.title.update(Text(safe(title)))
