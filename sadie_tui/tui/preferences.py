"""What the person chose and the app remembers: the theme, the persona, the keys, each saved to
config.toml for the next launches, and the conversation on screen (``tui-state.json`` in the
memory's home), which the next launch opens again (``open_last``).

Themes are Textual ``Theme`` objects (``themes.py``) registered with the app here; the
personas on offer come from the session once the memory is open, and again at each F2.
Saving happens in thread workers: a read-only config or home never blocks or stops the app.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..engine.errors import SadieError
from .themes import DEFAULT_THEME, load_themes

if TYPE_CHECKING:
    from textual.theme import Theme

    from ..config import Settings
    from ..engine.session import SessionProtocol
    from .widgets.status import StatusLine

STATE_FILE = "tui-state.json"  # in the memory home: the conversation to reopen


class Reopens(Protocol):
    """The chat screen, as ``reopen_last`` sees it (a protocol: the screens import ``host.py``,
    which names this module)."""

    @property
    def chosen(self) -> bool:
        """Whether the person already chose a conversation since the app started."""
        ...

    async def open_conversation(self, conversation_id: str | None) -> None: ...


class PreferencesHost(Protocol):
    """What preferences need of the app (``SadieApp``; a protocol, as ``learning.py``'s).
    The app keeps ``persona``, ``keymap`` and ``theme``, which the screens read; this
    changes them."""

    settings: Settings
    session: SessionProtocol | None
    memory_ready: asyncio.Event
    persona: str
    keymap: dict[str, str]
    theme: str

    @property
    def home(self) -> Path: ...

    def status_lines(self) -> list[StatusLine]: ...

    # Textual's App gives these.
    @property
    def available_themes(self) -> dict[str, Theme]: ...

    @property
    def register_theme(self) -> Callable[[Theme], None]: ...

    @property
    def set_keymap(self) -> Callable[[dict[str, str]], None]: ...

    @property
    def notify(self) -> Callable[..., None]: ...

    @property
    def push_screen(self) -> Callable[..., object]: ...

    @property
    def run_worker(self) -> Callable[..., object]: ...

    @property
    def call_from_thread(self) -> Callable[..., object]: ...


class Preferences:
    """Owned by the app (``app.preferences``): built before the first frame, it registers the
    themes, picks the configured one and applies the person's keymap."""

    def __init__(self, app: PreferencesHost) -> None:
        self.app = app
        themes, self.theme_problems = load_themes()  # shown once the app is mounted
        self.sadie_themes = [t.name for t in themes]
        for theme in themes:
            app.register_theme(theme)
        wanted = app.settings.theme
        app.theme = wanted if wanted in app.available_themes else DEFAULT_THEME
        app.set_keymap(app.keymap)
        self.persona_offer: dict[str, str] = {}  # name -> description, from the session
        self._last_remembered: str | None = None

    def remember(self, key: str, value: str) -> None:
        """Save ``key = value`` to config.toml in a thread; a failure is a warning."""
        self.app.run_worker(
            partial(self._save, key, value),
            name="remember",
            thread=True,
            group="settings",
            exit_on_error=False,
        )

    def _save(self, key: str, value: str) -> None:
        # lazy: config loads only when a setting is saved, off the start-up path
        from ..config import save_setting

        try:
            save_setting(key, value, self.app.settings.config_path)
        except OSError as exc:
            self.app.call_from_thread(
                self.app.notify, f"cannot save {key}: {exc}", severity="warning"
            )

    # -- themes ----------------------------------------------------------------------------------
    def set_theme(self, name: str) -> None:
        if name not in self.app.available_themes:
            self.app.notify(f"No theme called {name!r}", severity="error")
            return
        self.app.theme = name
        self.remember("theme", name)

    def choose_theme(self) -> None:
        """The theme chooser (F3): sadie's themes first, then Textual's own."""
        # lazy: screens.dialogs loads only when a chooser opens, off the start-up path
        from .screens.dialogs import Choose

        options = [(name, "") for name in self.sadie_themes]
        options += [
            (n, "Textual") for n in sorted(self.app.available_themes) if n not in self.sadie_themes
        ]

        def chosen(name: str | None) -> None:
            if name:
                self.set_theme(name)

        self.app.push_screen(Choose("Theme", options, self.app.theme), chosen)

    # -- personas --------------------------------------------------------------------------------
    def ask_personas(self, choose: bool = False) -> None:
        """Ask the session for its personas (once the memory is open); each file that did
        not load is named in a notification. With ``choose``, the chooser opens on them."""
        self.app.run_worker(
            partial(self._ask_personas, choose),
            name="ask_personas",
            group="personas",
            exit_on_error=False,
        )

    async def _ask_personas(self, choose: bool) -> None:
        app = self.app
        await app.memory_ready.wait()
        if app.session is None:
            return
        try:
            # in a thread: a client asks its holder
            personas = await asyncio.to_thread(app.session.personas)
        except SadieError as exc:  # the folder unreadable, the holder gone: the app stays up
            app.notify(exc.one_line(), title="Personas", severity="error")
            return
        for problem in personas.problems:  # left out of the list, named here
            app.notify(problem.reason, title="Persona skipped", severity="warning")
        self.persona_offer = personas.descriptions()
        if choose:
            self._choose_persona()

    def _choose_persona(self) -> None:
        # lazy: screens.dialogs loads only when a chooser opens, off the start-up path
        from .screens.dialogs import Choose

        def chosen(name: str | None) -> None:
            if name:
                self.set_persona(name)

        options = list(self.persona_offer.items()) or [(self.app.persona, "")]
        self.app.push_screen(Choose("Persona", options, self.app.persona), chosen)

    def set_persona(self, name: str) -> None:
        """Reply as ``name`` from now on (remembered); every status line says so."""
        self.app.persona = name
        for status in self.app.status_lines():
            status.persona = name
        self.remember("chat_persona", name)
        self.app.notify(f"sadie now replies as the {name}", timeout=3)

    # -- the conversation to reopen --------------------------------------------------------------
    @property
    def _state_path(self) -> Path:
        return self.app.home / STATE_FILE

    def remember_conversation(self, conversation_id: str | None) -> None:
        """The conversation on screen, so the next launch opens it again (``open_last``)."""
        if self.app.settings.open_last and conversation_id != self._last_remembered:
            self._last_remembered = conversation_id
            self.app.run_worker(
                partial(self._write_state, conversation_id),
                name="write_state",
                thread=True,
                group="state",
                exit_on_error=False,
            )

    def _write_state(self, conversation_id: str | None) -> None:
        try:
            fd = os.open(self._state_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"conversation_id": conversation_id}, out)
        except OSError:
            pass  # a read-only home: the next launch opens a new conversation

    def reopen_last(self, chat: Reopens) -> None:
        """Open on ``chat`` the conversation the last launch left on screen, unless the
        person already chose (ctrl+n, or a message sent while the memory opened)."""
        last = self._last_conversation()
        if last is not None and not chat.chosen:
            self._last_remembered = last
            self.app.run_worker(chat.open_conversation(last), group="open")

    def _last_conversation(self) -> str | None:
        try:
            data = json.loads(self._state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        found = data.get("conversation_id") if isinstance(data, dict) else None
        return found if isinstance(found, str) and found else None
