"""What the screens and the command palette need of the app: the session, the clock, the
messages sent so far, the persona and model a reply uses, the personas and themes to offer,
and the parts that own the model (``models``) and what is remembered (``preferences``).

A protocol, so the screens and the palette never import ``app`` (which imports them to
show them); ``SadieApp`` satisfies it, and hands itself to the screens it makes. This is the
app's whole public surface for them: no screen or widget reads the app's private attributes
or reaches a session feature with ``getattr`` (``tests/test_tui_host.py`` checks).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio

    from textual.app import App
    from textual.binding import Binding
    from textual.dom import DOMNode

    from ..engine.session import SessionProtocol
    from .model_control import ModelControl
    from .preferences import Preferences


class SadieHost(Protocol):
    clock: Callable[[], datetime]
    session: SessionProtocol | None  # None until the memory has opened
    memory_ready: asyncio.Event  # set once the memory is open (session is then set)
    sent: list[str]  # messages sent since the app started, for Up
    persona: str  # the persona chat replies as
    model: str  # the model on show (the configured one, or one picked here)
    model_choice: str | None  # a model picked here (None: the configured one)
    keymap: dict[str, str]  # binding id -> keys, as the person remapped them
    sadie_themes: list[str]
    models: ModelControl  # the model, the server's address, whether it answers
    preferences: Preferences  # the persona, the conversation to reopen (remembered)

    @property
    def via(self) -> str:
        """The sadie holding the memory when this app is its client, else ""."""
        ...

    def choose_model(self, *, address: bool = False) -> None: ...

    def personas(self) -> dict[str, str]: ...

    def set_theme(self, name: str) -> None: ...

    # Textual's App gives these two; the palette and help use them.
    def get_key_display(self, binding: Binding) -> str: ...

    def run_action(
        self, action: str, default_namespace: DOMNode | None = None
    ) -> Awaitable[bool]: ...


# Any: the callback's own arguments, passed on as they come (Textual's call_from_thread)
def from_thread(app: App[Any], callback: Callable[..., Awaitable[None]], *args: Any) -> None:
    """Run the coroutine function ``callback(*args)`` on the app's loop from a worker thread
    and wait for it (``App.call_from_thread``, whose annotation makes mypy infer ``Never``
    for a coroutine callback: the one place that is typed away)."""
    call: Callable[..., object] = app.call_from_thread
    call(callback, *args)
