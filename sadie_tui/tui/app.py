"""The sadie app: composes the parts that own each concern, and is what Textual calls.

The parts are small collaborators the app owns: the memory's keeper (``keeper.py``: open,
hold or be a client, the notes folders, the embedding model), model control
(``model_control.py``: the model, the server's address, the probe), preferences
(``preferences.py``: themes, personas, keys, the conversation to reopen), what is learned
(``learning.py``), the signals (``signal_exit.py``) and the size guard (``size_guard.py``).
The app keeps what the screens read (``host.py``) and Textual's entry points (bindings'
actions, message handlers, hooks), each handing on to the part that owns it.

The first frame paints before anything heavy happens: the memory (DuckDB) opens in a thread
worker after the first refresh, then the embedding model warms in another; until they are
ready the status line says so, and a message sent meanwhile waits for the memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen

from ..display import safe
from .commands import system_commands
from .keeper import KeeperNews, MemoryKeeper
from .learning import Learning
from .messages import EmbedderReady, MemoryChanged, MemoryEmpty, MemoryFailed, ModelChecked
from .model_control import ModelControl
from .preferences import Preferences
from .probe import Prober
from .screens.chat import ChatScreen
from .screens.passphrase import ask_in_app
from .signal_exit import SignalExit
from .size_guard import SizeGuard
from .themes import resolve_defaults
from .widgets.status import StatusLine

if TYPE_CHECKING:
    from ..engine.session import SessionProtocol
    from ..launch import Launch
    from .messages import MemoryReady

SessionFactory = Callable[["Launch"], "SessionProtocol"]


def default_session(launch: Launch) -> SessionProtocol:
    # The model loads beside the memory opening; a message sent before it is ready waits
    # for it briefly, or (a slow fallback) answers by keywords and names, cue-only emotions.
    launch.prewarm_embedder()
    return launch.session(wait_for_embedder=False, remote=True, hold=True)


class SadieApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "sadie"
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        Binding(
            "ctrl+q", "quit", "Quit", id="quit", priority=True, show=False, tooltip="Quit sadie"
        ),
        Binding(
            "f1",
            "help",
            "Help",
            id="help",
            tooltip="Keys of this screen, what the sigils and citation labels mean",
        ),
        Binding(
            "ctrl+p",
            "command_palette",
            "Commands",
            id="command-palette",
            priority=True,
            show=False,
            tooltip="Open the command palette",
        ),
        Binding(
            "f2",
            "switch_persona",
            "Persona",
            id="switch-persona",
            show=False,
            tooltip="Choose the persona sadie replies as (remembered)",
        ),
        Binding(
            "f3",
            "switch_theme",
            "Theme",
            id="switch-theme",
            show=False,
            tooltip="Choose the colour theme (remembered)",
        ),
        Binding(
            "f4",
            "choose_model",
            "Model",
            id="choose-model",
            show=False,
            tooltip="Choose the model from those the Ollama server has pulled (remembered)",
        ),
        Binding(
            "f5",
            "beliefs",
            "Learned",
            id="beliefs",
            show=False,  # the chat's footer is full; F1 and the palette list it
            tooltip="What sadie has learned about you from your notes: accept, reject, edit",
        ),
    ]

    def __init__(
        self,
        ctx: Launch,
        question: str | None = None,
        *,
        session_factory: SessionFactory | None = None,
        clock: Callable[[], datetime] | None = None,
        warm_embedder: bool = True,
    ) -> None:
        super().__init__()
        self.ctx = ctx
        # An encrypted memory's passphrase, and a new memory's first-run choice, asked here.
        ctx.ask = ask_in_app(self)
        ctx.first_run_choice = True
        # An encrypted memory's passphrase, and a new memory's first-run choice, asked here.
        ctx.ask = ask_in_app(self)
        ctx.first_run_choice = True
        self.settings = ctx.settings
        self.home = Path(ctx.home)  # the memory's home
        self.question = question
        self.session_factory = session_factory or default_session
        self.clock = clock or datetime.now
        self.session: SessionProtocol | None = None
        self.memory_empty = False  # no notes yet: the start screen says how to fill it
        self.memory_ready = asyncio.Event()
        self.exit_error: BaseException | None = None
        # What the screens read (host.py); the parts below change them.
        self.persona = self.settings.chat_persona
        self.model = self.settings.model
        self.model_choice: str | None = None  # a model picked here (None: the configured one)
        self.sent: list[str] = []  # messages sent since the app started, for Up
        self.keymap: dict[str, str] = dict(self.settings.keymap)
        # The parts, each owning one concern.
        self.preferences = Preferences(self)  # themes, personas, keys, the conversation to reopen
        self.sadie_themes = self.preferences.sadie_themes
        self.prober = Prober()  # when the model server is asked again whether it answers
        self.models = ModelControl(self, self.preferences.remember, self.prober)
        self.keeper = MemoryKeeper(self, warm_embedder=warm_embedder)
        self.learning = Learning(self)  # what is new since you last looked; idle reflection
        self.signal_exit = SignalExit(self)
        self.size_guard = SizeGuard(self)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Notifications carry file paths, model names and note text: never markup, never a
        raw control character."""
        super().notify(
            safe(message), title=safe(title), severity=severity, timeout=timeout, markup=False
        )

    # -- what the screens read (host.py) -------------------------------------------------------
    @property
    def via(self) -> str:
        """The sadie holding the memory when this app is its client, else ""."""
        return self.ctx.via or ""

    @property
    def chat_screen(self) -> ChatScreen:
        return next(s for s in self.screen_stack if isinstance(s, ChatScreen))

    @property
    def replying(self) -> bool:
        """Whether a reply is being written."""
        return any(s.streaming for s in self.screen_stack if isinstance(s, ChatScreen))

    def status_lines(self) -> list[StatusLine]:
        """The status line of every screen on the stack."""
        return [w for s in self.screen_stack for w in s.query(StatusLine)]

    def personas(self) -> dict[str, str]:
        """The personas on offer (name → description) as the session last gave them, for
        the palette: asked for once the memory is open, and again at each F2."""
        return dict(self.preferences.persona_offer)

    def set_theme(self, name: str) -> None:
        self.preferences.set_theme(name)

    def choose_model(self, *, address: bool = False) -> None:
        """The model picker (F4): the server's models, its address and where that came from;
        with ``address``, the cursor starts in the address box (the palette's "Model server
        address…")."""
        if self.session is None:
            self.notify("The memory is still opening — try again in a moment", timeout=3)
            return
        # lazy: the dialogs load only when a picker opens, off the start-up path
        from .screens.model_picker import ModelPicker

        def chosen(name: str | None) -> None:
            if name:
                self.models.set_model(name)

        self.push_screen(ModelPicker(self, self.model, edit_address=address), chosen)

    # -- Textual's hooks -------------------------------------------------------------------------
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return resolve_defaults(self.current_theme.to_color_system().generate())

    def get_default_screen(self) -> Screen:
        return ChatScreen(self)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from system_commands(self, screen)

    def on_mount(self) -> None:
        self.signal_exit.catch()
        problems = self.preferences.theme_problems
        if problems:
            self.notify("\n".join(problems), title="Themes skipped", severity="warning")
        self.call_after_refresh(self._start)

    async def _start(self) -> None:
        self.size_guard.check(self.size.width, self.size.height)
        if self.question:
            await self.chat_screen.send(self.question)
        self.keeper.open()

    def on_resize(self, event: events.Resize) -> None:
        self.size_guard.check(event.size.width, event.size.height)

    async def on_event(self, event: events.Event) -> None:
        """Every key pressed anywhere: the app is not idle, and idle reflection gives way."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            self.learning.touched()
        await super().on_event(event)

    def on_unmount(self) -> None:
        self.signal_exit.release()
        self.learning.stop()

    # -- messages from the parts' workers ------------------------------------------------------
    def on_memory_ready(self, _: MemoryReady) -> None:
        """The memory is open: each part starts its work on it, in this order."""
        self.keeper.opened()
        if self.settings.open_last and not self.ctx.new and not self.question:
            self.preferences.reopen_last(self.chat_screen)
        self.keeper.warm()
        self.models.started()
        self.preferences.ask_personas()
        self.keeper.keep_current()

    @on(MemoryEmpty)
    @on(MemoryChanged)
    @on(MemoryFailed)
    @on(EmbedderReady)
    def _keeper_news(self, message: KeeperNews) -> None:
        self.keeper.receive(message)

    def on_model_checked(self, message: ModelChecked) -> None:
        self.models.checked(message.status)

    def probe_tick(self) -> None:
        """Ask the model server again if it is due a probe (model_control.py)."""
        self.models.tick()

    def _check_model(self, fresh: bool = False) -> None:
        """Ask now, not at the next probe (the tests' way to skip the wait)."""
        self.models.check(fresh=fresh)

    # -- the keys' actions -----------------------------------------------------------------------
    def action_switch_theme(self) -> None:
        self.preferences.choose_theme()

    def action_switch_persona(self) -> None:
        # Asked afresh (a file may have just been edited); before the memory is open, the
        # chooser waits for it.
        self.preferences.ask_personas(choose=True)

    def action_choose_model(self) -> None:
        self.choose_model()

    def action_beliefs(self) -> None:
        # lazy: screens.beliefs loads only when action_beliefs runs, off the start-up path
        from .screens.beliefs import BeliefsScreen

        if isinstance(self.screen, BeliefsScreen):
            return
        if self.session is None:
            self.notify("The memory is still opening — try again in a moment", timeout=3)
            return
        self.learning.mark_seen()
        self.push_screen(BeliefsScreen(self))

    def action_help_quit(self) -> None:
        """ctrl+c (where nothing copies) says how to quit, in words: Textual's own line is
        markup, and sadie's notifications show markup as text."""
        keys = self.keymap.get("quit", "ctrl+q").split(",")[0].strip()
        self.notify(f"Press {keys} to quit sadie", title="Do you want to quit?", timeout=3)

    def action_help(self) -> None:
        # lazy: screens.help loads only when action_help runs, off the start-up path
        from .screens.help import HelpScreen, class_bindings, screen_bindings
        from .widgets.chip_bar import ChipView
        from .widgets.citations import CitationItem
        from .widgets.prompt import PROMPT_KEYS
        from .widgets.transcript import MessageView

        if isinstance(self.screen, HelpScreen):
            return
        screen = self.screen
        items = []
        if isinstance(screen, ChatScreen):
            items = [
                ("On a focused chip", class_bindings(self, ChipView.BINDINGS)),
                ("On a focused message", class_bindings(self, MessageView.BINDINGS)),
                ("On a focused citation", class_bindings(self, CitationItem.BINDINGS)),
                ("In the message box", class_bindings(self, PROMPT_KEYS)),
            ]
            items = [(heading, rows) for heading, rows in items if rows]
        title = {
            "ChatScreen": "chat",
            "BrowserScreen": "conversations",
            "BeliefsScreen": "what sadie has learned",
        }.get(type(screen).__name__, type(screen).__name__)
        self.push_screen(HelpScreen(title, screen_bindings(screen), items))

    async def action_quit(self) -> None:
        self.learning.stop()
        self.exit()
