"""The sadie app: owns the session over the memory, themes, keymap and app-wide keys.

The first frame paints before anything heavy happens: the memory (DuckDB) opens in a thread
worker after the first refresh, then the embedding model warms in another; until they are
ready the status line says so, and a message sent meanwhile waits for the memory.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen

from ..display import safe
from ..engine.errors import SadieError
from .commands import system_commands
from .learning import Learning
from .messages import (
    EmbedderReady,
    MemoryChanged,
    MemoryEmpty,
    MemoryFailed,
    MemoryReady,
    MemoryRefreshed,
    ModelChecked,
)
from .probe import Prober
from .screens.chat import ChatScreen
from .screens.passphrase import ask_in_app
from .screens.too_small import TooSmallScreen
from .themes import DEFAULT_THEME, load_themes, resolve_defaults
from .widgets.status import StatusLine
from .widgets.transcript import Transcript

if TYPE_CHECKING:
    from ..engine.reasoners.choose import ServerSource
    from ..engine.session import SessionProtocol
    from ..launch import Launch

MIN_SIZE = (50, 12)
STATE_FILE = "tui-state.json"  # in the memory home: the conversation to reopen

SessionFactory = Callable[["Launch"], "SessionProtocol"]


# Seconds an orderly exit after SIGTERM/SIGHUP may take before the process ends anyway.
EXIT_GRACE = 5.0


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

    PROBE_TICK = 1.0  # how often the app looks whether the model server is due a probe

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
        self.settings = ctx.settings
        self.question = question
        self.session_factory = session_factory or default_session
        self.clock = clock or datetime.now
        self.warm_embedder = warm_embedder
        self.session: SessionProtocol | None = None
        self.memory_empty = False  # no notes yet: the start screen says how to fill it
        self.memory_ready = asyncio.Event()
        self.exit_error: BaseException | None = None
        self.persona = self.settings.chat_persona
        self.model = self.settings.model
        self.model_choice: str | None = None  # a model picked here (None: the configured one)
        self.online: bool | None = None
        self.sent: list[str] = []  # messages sent since the app started, for Up
        self.keymap: dict[str, str] = dict(self.settings.keymap)
        themes, self.theme_problems = load_themes()
        self.sadie_themes = [t.name for t in themes]
        for theme in themes:
            self.register_theme(theme)
        wanted = self.settings.theme
        self.theme = wanted if wanted in self.available_themes else DEFAULT_THEME
        self.set_keymap(self.keymap)
        self.persona_offer: dict[str, str] = {}  # name -> description, from the session
        self.prober = Prober()  # when the model server is asked again whether it answers
        self._too_small: TooSmallScreen | None = None
        self._last_remembered: str | None = None
        self._signals: list[int] = []
        self.learning = Learning(self)  # what is new since you last looked; idle reflection

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

    # -- themes -------------------------------------------------------------------------------
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return resolve_defaults(self.current_theme.to_color_system().generate())

    def set_theme(self, name: str) -> None:
        if name not in self.available_themes:
            self.notify(f"No theme called {name!r}", severity="error")
            return
        self.theme = name
        self._remember("theme", name)

    def action_switch_theme(self) -> None:
        # lazy: screens.dialogs loads only when action_switch_theme runs, off the start-up path
        from .screens.dialogs import Choose

        options = [(name, "") for name in self.sadie_themes]
        options += [
            (n, "Textual") for n in sorted(self.available_themes) if n not in self.sadie_themes
        ]

        def chosen(name: str | None) -> None:
            if name:
                self.set_theme(name)

        self.push_screen(Choose("Theme", options, self.theme), chosen)

    # -- personas -----------------------------------------------------------------------------
    def personas(self) -> dict[str, str]:
        """The personas on offer (name → description) as the session last gave them, for
        the palette: asked for once the memory is open, and again at each F2."""
        return dict(self.persona_offer)

    @work(group="personas", exit_on_error=False)
    async def _ask_personas(self, choose: bool = False) -> None:
        """The session's personas, in a thread (a client asks its holder); each file that did
        not load is named in a notification. With ``choose``, the chooser opens on them."""

        await self.memory_ready.wait()
        if self.session is None:
            return
        try:
            personas = await asyncio.to_thread(self.session.personas)
        except SadieError as exc:  # the folder unreadable, the holder gone: the app stays up
            self.notify(exc.one_line(), title="Personas", severity="error")
            return
        for problem in personas.problems:  # left out of the list, named here
            self.notify(problem.reason, title="Persona skipped", severity="warning")
        self.persona_offer = personas.descriptions()
        if choose:
            self._choose_persona()

    def _choose_persona(self) -> None:
        # lazy: screens.dialogs loads only when _choose_persona runs, off the start-up path
        from .screens.dialogs import Choose

        def chosen(name: str | None) -> None:
            if name:
                self.set_persona(name)

        options = list(self.persona_offer.items()) or [(self.persona, "")]
        self.push_screen(Choose("Persona", options, self.persona), chosen)

    def set_persona(self, name: str) -> None:
        self.persona = name
        for status in self.query(StatusLine):
            status.persona = name
        for screen in self.screen_stack:
            for status in screen.query(StatusLine):
                status.persona = name
        self._remember("chat_persona", name)
        self.notify(f"sadie now replies as the {name}", timeout=3)

    def action_switch_persona(self) -> None:
        # Asked afresh (a file may have just been edited); before the memory is open, the
        # chooser waits for it.
        self._ask_personas(choose=True)

    # -- the model ----------------------------------------------------------------------------
    def action_choose_model(self) -> None:
        self.choose_model()

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
                self.set_model(name)

        self.push_screen(ModelPicker(self, self.model, edit_address=address), chosen)

    def use_model_server(self, address: str) -> ServerSource:
        """Use the model server at ``address`` now (this run, whatever OLLAMA_HOST says),
        save it to config.toml for the next launches, and ask it at once whether the model
        answers. A malformed address is a ``SadieError`` and changes nothing."""
        assert self.session is not None
        source = self.session.use_model_server(address)
        self._remember(source.setting, source.address)
        for status in self._status_lines():
            status.online = None
        self._check_model(fresh=True)
        return source

    def set_model(self, name: str) -> None:
        self.model = self.model_choice = name
        for status in self._status_lines():
            status.model = name
            status.online = None
        self._remember("model", name)
        self.notify(f"sadie now answers with {name}", timeout=3)
        self._check_model(fresh=True)

    def model_failed(self, code: str) -> None:
        """A reply failed on the model: ask the server again now, not at the next tick."""
        if code in ("unreachable", "model_missing", "timeout", "model", "stream"):
            self._check_model(fresh=True)

    @work(thread=True, group="settings", exit_on_error=False)
    def _remember(self, key: str, value: str) -> None:
        # lazy: config loads only when _remember runs, off the start-up path
        from ..config import save_setting

        try:
            save_setting(key, value, self.settings.config_path)
        except OSError as exc:
            self.call_from_thread(self.notify, f"cannot save {key}: {exc}", severity="warning")

    # -- what sadie has learned ---------------------------------------------------------------
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

    async def on_event(self, event: events.Event) -> None:
        """Every key pressed anywhere: the app is not idle, and idle reflection gives way."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            self.learning.touched()
        await super().on_event(event)

    def action_help_quit(self) -> None:
        """ctrl+c (where nothing copies) says how to quit, in words: Textual's own line is
        markup, and sadie's notifications show markup as text."""
        keys = self.keymap.get("quit", "ctrl+q").split(",")[0].strip()
        self.notify(f"Press {keys} to quit sadie", title="Do you want to quit?", timeout=3)

    # -- palette and help ---------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from system_commands(self, screen)

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

    # -- signals -----------------------------------------------------------------------------
    def _catch_signals(self) -> None:
        """SIGTERM and SIGHUP (the terminal closed) end the app like ctrl+q: a running reply
        is kept as ``interrupted``; run.py then prints one line and exits 128 + the signal."""
        # lazy: signals loads only when _catch_signals runs, off the start-up path
        from ..signals import on_loop

        self._signals = on_loop(asyncio.get_running_loop(), self._signalled)

    def _signalled(self, signum: int) -> None:
        # lazy: signals loads only when _signalled runs, off the start-up path
        from ..signals import Terminated

        self.exit_error = Terminated(signum)
        self.learning.stop()
        self.exit(return_code=128 + signum)
        if not self.is_headless:
            threading.Thread(
                target=self._exit_anyway, args=(signum,), name="sadie-exit", daemon=True
            ).start()

    def _exit_anyway(self, signum: int) -> None:
        """End the process if the orderly exit has not, ``EXIT_GRACE`` seconds after the
        signal. Once the terminal is gone (SIGHUP as its window closes mid-reply), Textual's
        output thread can die writing to it, and the driver then waits for that thread
        forever: a sadie with no screen, holding the memory. By then the reply was saved (the
        app's workers are cancelled first); the memory is closed here."""

        # lazy: signals loads only when _exit_anyway runs, off the start-up path
        from ..signals import Terminated

        time.sleep(EXIT_GRACE)  # a watchdog's grace period, not a wait for an event
        try:
            self.ctx.close()
        except Exception:  # noqa: BLE001 - leaving regardless; the data is committed
            pass
        try:
            sys.stderr.write(f"sadie: {Terminated(signum).one_line()}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # the terminal is gone
        os._exit(128 + signum)

    def on_unmount(self) -> None:
        # lazy: signals loads only when on_unmount runs, off the start-up path
        from ..signals import off_loop

        off_loop(asyncio.get_running_loop(), self._signals)
        self.learning.stop()

    # -- startup ------------------------------------------------------------------------------
    def on_mount(self) -> None:
        self._catch_signals()
        if self.theme_problems:
            self.notify("\n".join(self.theme_problems), title="Themes skipped", severity="warning")
        self.call_after_refresh(self._start)

    def get_default_screen(self) -> Screen:
        return ChatScreen(self)

    @property
    def via(self) -> str:
        """The sadie holding the memory when this app is its client, else ""."""
        return self.ctx.via or ""

    async def _start(self) -> None:
        self._check_size(self.size.width, self.size.height)
        if self.question:
            await self.chat_screen.send(self.question)
        self._open_memory()

    # -- the conversation to reopen ---------------------------------------------------------
    @property
    def _state_path(self) -> Path:
        return Path(self.ctx.home) / STATE_FILE

    def remember_conversation(self, conversation_id: str | None) -> None:
        """The conversation on screen, so the next launch opens it again (``open_last``)."""
        if self.settings.open_last and conversation_id != self._last_remembered:
            self._last_remembered = conversation_id
            self._write_state(conversation_id)

    @work(thread=True, group="state", exit_on_error=False)
    def _write_state(self, conversation_id: str | None) -> None:

        try:
            fd = os.open(self._state_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"conversation_id": conversation_id}, out)
        except OSError:
            pass  # a read-only home: the next launch opens a new conversation

    def _last_conversation(self) -> str | None:

        try:
            data = json.loads(self._state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        found = data.get("conversation_id") if isinstance(data, dict) else None
        return found if isinstance(found, str) and found else None

    @property
    def home(self) -> Path:
        """The memory's home."""
        return Path(self.ctx.home)

    @property
    def replying(self) -> bool:
        """Whether a reply is being written."""
        return self.chat_screen.streaming

    @property
    def chat_screen(self) -> ChatScreen:
        return next(s for s in self.screen_stack if isinstance(s, ChatScreen))

    def status_lines(self) -> list[StatusLine]:
        """The status line of every screen on the stack."""
        return self._status_lines()

    def _status_lines(self) -> list[StatusLine]:
        return [w for s in self.screen_stack for w in s.query(StatusLine)]

    @work(thread=True, exclusive=True, group="memory", exit_on_error=False)
    def _open_memory(self) -> None:

        try:
            session = self.session_factory(self.ctx)
        except SadieError as exc:
            self.post_message(MemoryFailed(exc))
            return
        except Exception as exc:  # noqa: BLE001 - no memory, no app: exit with one clear line
            self.post_message(MemoryFailed(SadieError(f"cannot open the memory: {exc}")))
            return
        self.session = session
        self.post_message(MemoryReady())

    def on_memory_ready(self, _: MemoryReady) -> None:
        self.memory_ready.set()
        for status in self._status_lines():
            status.memory_state = "ready"
            status.via = self.via
        if self.ctx.sharing:
            self.notify(
                f"{self.ctx.sharing}: other sadie commands on this memory will say it is in use",
                title="Memory not shared",
                severity="warning",
            )
        assert self.session is not None
        if self.settings.open_last and not self.ctx.new and not self.question:
            last = self._last_conversation()
            chat = self.chat_screen
            # Not when the person already chose (ctrl+n or a message while the memory opened).
            if last is not None and not chat.chosen:
                self._last_remembered = last
                self.run_worker(chat.open_conversation(last), group="open")
        if self.warm_embedder:
            # A daemon thread, not a thread worker: those are joined at exit, and quitting
            # must not wait ~5 s for torch to finish importing.
            threading.Thread(target=self._warm_embedder, name="sadie-warm", daemon=True).start()
        elif self.session.embedder_ready:
            self.post_message(EmbedderReady())
        self._check_model()
        self.prober.asked()
        self.set_interval(self.PROBE_TICK, self.probe_tick)
        self._ask_personas()
        self.learning.started()
        if self.settings.notes and not self.via:  # a client's holder keeps the notes current
            self._watch_notes()
        if not self.via:  # the holder: another terminal's ingest comes through its socket
            self.ctx.on_change(self._changed_elsewhere)
        self._check_empty()

    @work(thread=True, exclusive=True, group="empty", exit_on_error=False)
    def _check_empty(self) -> None:
        """Whether the memory holds no notes yet (a new home): then the start screen and the
        status line say how to fill it, until notes come in."""
        session = self.session
        if session is None:
            return
        try:
            chunks = session.stats().counts.get("chunks")
        except SadieError:
            return  # the check only adds guidance; the memory's own errors show elsewhere
        self.post_message(MemoryEmpty(chunks == 0))

    def on_memory_empty(self, message: MemoryEmpty) -> None:
        if message.empty == self.memory_empty:
            return  # a memory with notes: the usual start screen, as it was
        self.memory_empty = message.empty
        for status in self._status_lines():
            status.memory_empty = message.empty
        for screen in self.screen_stack:
            for transcript in screen.query(Transcript):
                transcript.set_empty(message.empty)

    def _changed_elsewhere(self, line: str) -> None:
        self.post_message(MemoryChanged(line))  # from the holder's threads: post, never call

    def on_memory_changed(self, message: MemoryChanged) -> None:
        """Another terminal changed the memory: say what, and let open screens refresh."""
        self.notify(message.line, title="Memory", timeout=6)
        for screen in self.screen_stack:
            screen.post_message(MemoryRefreshed())
        if self.memory_empty:
            self._check_empty()

    @work(thread=True, exclusive=True, group="notes", exit_on_error=False)
    def _watch_notes(self) -> None:
        """Keep the configured notes folders current while the app holds the memory: what
        changed while it was closed first, then each batch of changes, one quiet notice each."""
        # lazy: textual.worker loads only when _watch_notes runs, off the start-up path
        from textual.worker import get_current_worker

        # lazy: watchfiles loads only when folders are watched
        from ..engine.ingest.watch import Batch, watch_notes

        worker = get_current_worker()
        session = self.session
        assert session is not None

        def show(batch: Batch) -> None:
            if not worker.is_cancelled:
                self.call_from_thread(self.notify, batch.line, title="Notes", timeout=4)
                if self.memory_empty:
                    self.call_from_thread(self._check_empty)

        class Stop:  # watchfiles polls it: the worker is cancelled when the app exits
            def is_set(self) -> bool:
                return worker.is_cancelled

        missing = [str(p) for p in self.settings.notes if not p.exists()]
        if missing:
            show(Batch(error=f"no such folder to watch: {', '.join(missing)}"))
        try:
            watch_notes(session, self.settings.notes, show, stop=Stop())
        except SadieError as exc:
            show(Batch(error=exc.one_line()))

    def on_memory_failed(self, message: MemoryFailed) -> None:
        error = message.error
        self.exit_error = error
        for status in self._status_lines():
            status.memory_state = "failed"
        # One clear line on the terminal after the app closes (run.py prints it), no traceback.
        self.exit(return_code=int(getattr(error, "exit_code", 1)))

    def _warm_embedder(self) -> None:

        assert self.session is not None
        try:
            # The embedding model and the emotion centroids, so no reply pays for them.
            self.session.warm()
        except SadieError as exc:
            self.post_message(EmbedderReady(exc))
            return
        self.post_message(EmbedderReady())

    def on_embedder_ready(self, message: EmbedderReady) -> None:
        # Torch and the embedding model add ~400,000 objects that live as long as the app.
        # Frozen, collections no longer walk them: otherwise each full one stalls the event
        # loop ~250 ms, typically as a long reply finishes (rendering it triggers one), and
        # the last one makes quitting take a second longer.
        gc.freeze()
        if message.error is not None:
            self.notify(
                f"{message.error}\nsearching by keywords and names only",
                title="Embedding model",
                severity="warning",
            )
        notice = self.session.embedder_notice if self.session is not None else None
        if message.error is None and notice:
            # The engine also printed it to stderr, which the running app captures.
            self.notify(notice, title="Embedding model", severity="warning")
        for status in self._status_lines():
            status.embedder_ready = message.error is None

    def probe_tick(self) -> None:
        """Ask the model server again when the prober says it is due: never while a reply
        streams (the reply itself says when the server goes)."""
        busy = any(s.streaming for s in self.screen_stack if isinstance(s, ChatScreen))
        if self.session is not None and self.prober.due(busy=busy):
            self.prober.asked()
            self._check_model(fresh=True)

    @work(exclusive=True, group="model", exit_on_error=False)
    async def _check_model(self, fresh: bool = False) -> None:

        if self.session is None:
            return
        try:
            status = await self.session.check_model(fresh=fresh, model=self.model_choice)
        except SadieError:
            self.prober.checked(False)
            return  # the holder went away: the next reply says so
        self.post_message(ModelChecked(status))

    def on_model_checked(self, message: ModelChecked) -> None:
        """Show the model's state; a change after the first check is a toast each way."""
        status = message.status
        self.prober.checked(status.online)
        was, self.online = self.online, status.online
        for line in self._status_lines():
            line.online = status.online
            line.model = status.model
            if not status.online:
                line.tokens_per_s = None
        if status.online == was:
            return
        if not status.online:
            # Short: the status line says "offline" for as long as it lasts, and F1 the rest.
            fix = f"\n{status.fix}" if status.fix else ""
            gone = "went away" if was else "is not available"
            self.notify(
                f"{status.detail}{fix}\nsadie quotes your notes meanwhile; F4 sets the address",
                title=f"The model {gone}",
                severity="warning",
                timeout=8,
            )
        elif was is False:
            self.notify(f"{status.model} answers again", title="The model is back", timeout=5)

    # -- size ----------------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        self._check_size(event.size.width, event.size.height)

    def _check_size(self, width: int, height: int) -> None:
        small = width < MIN_SIZE[0] or height < MIN_SIZE[1]
        if small and self._too_small is None:
            self._too_small = TooSmallScreen(MIN_SIZE)
            self.push_screen(self._too_small)
        elif not small and self._too_small is not None:
            screen, self._too_small = self._too_small, None
            if screen in self.screen_stack:
                screen.dismiss()

    # -- shutdown ------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        self.learning.stop()
        self.exit()
