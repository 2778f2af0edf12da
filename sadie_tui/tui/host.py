"""What the screens and the command palette need of the app: the session, the clock, the
messages sent so far, the personas and themes to offer, and a few things to tell it.

A protocol, so the screens and the palette never import ``app`` (which imports them to
show them); ``SadieApp`` satisfies it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.binding import Binding

    from ..engine.session import SessionProtocol


class SadieHost(Protocol):
    clock: Callable[[], datetime]
    session: SessionProtocol | None  # None until the memory has opened
    sent: list[str]  # messages sent since the app started, for Up
    sadie_themes: list[str]

    def model_failed(self, code: str) -> None: ...

    def remember_conversation(self, conversation_id: str | None) -> None: ...

    def personas(self) -> dict[str, str]: ...

    def set_persona(self, name: str) -> None: ...

    def set_theme(self, name: str) -> None: ...

    # Textual's App gives these two; the palette uses them.
    def get_key_display(self, binding: Binding) -> str: ...

    def run_action(self, action: str, default_namespace: Any = None) -> Awaitable[bool]: ...
