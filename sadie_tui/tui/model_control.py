"""The app's side of the model server: which model answers, where the server is, and whether
it answers now.

The model and the server's address are picked in the model picker (F4) and remembered in
config.toml; whether the server answers is asked when the memory opens, after each change,
after a reply failed on the model, and on ``probe.py``'s schedule meanwhile. A change in the
answer after the first is one notification each way; the status lines show it always.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Protocol

from ..engine.errors import SadieError
from .messages import ModelChecked
from .probe import Prober

if TYPE_CHECKING:
    from textual.message import Message

    from ..engine.context import ModelStatus
    from ..engine.reasoners.choose import ServerSource
    from ..engine.session import SessionProtocol
    from .widgets.status import StatusLine

PROBE_TICK = 1.0  # how often the app looks whether the model server is due a probe
# A reply that failed with one of these codes failed on the model server: ask it again now.
MODEL_CODES = ("unreachable", "model_missing", "timeout", "model", "stream")


class ModelHost(Protocol):
    """What model control needs of the app (``SadieApp``; a protocol, as ``learning.py``'s).
    The app keeps ``model`` and ``model_choice``, which the screens read; this changes them."""

    session: SessionProtocol | None
    model: str
    model_choice: str | None

    @property
    def replying(self) -> bool: ...

    def status_lines(self) -> list[StatusLine]: ...

    # Textual's App gives these.
    @property
    def notify(self) -> Callable[..., None]: ...

    @property
    def post_message(self) -> Callable[[Message], bool]: ...

    @property
    def run_worker(self) -> Callable[..., object]: ...

    @property
    def set_interval(self) -> Callable[..., object]: ...


class ModelControl:
    """Owned by the app (``app.models``); the screens reach it through ``SadieHost.models``."""

    def __init__(
        self, app: ModelHost, remember: Callable[[str, str], None], prober: Prober | None = None
    ) -> None:
        self.app = app
        self.remember = remember  # a setting saved to config.toml for the next launches
        self.prober = prober or Prober()  # when the model server is asked again
        self.online: bool | None = None  # None until the first answer

    def started(self) -> None:
        """The memory is open: ask the server now, then on the probe's schedule."""
        self.check()
        self.prober.asked()
        self.app.set_interval(PROBE_TICK, self.tick)

    # -- choosing ------------------------------------------------------------------------------
    def set_model(self, name: str) -> None:
        """Answer with ``name`` from now on (remembered), and ask whether it answers."""
        self.app.model = self.app.model_choice = name
        for status in self.app.status_lines():
            status.model = name
            status.online = None
        self.remember("model", name)
        self.app.notify(f"sadie now answers with {name}", timeout=3)
        self.check(fresh=True)

    def use_server(self, address: str) -> ServerSource:
        """Use the model server at ``address`` now (this run, whatever OLLAMA_HOST says),
        save it to config.toml for the next launches, and ask it at once whether the model
        answers. A malformed address is a ``SadieError`` and changes nothing."""
        assert self.app.session is not None
        source = self.app.session.use_model_server(address)
        self.remember(source.setting, source.address)
        for status in self.app.status_lines():
            status.online = None
        self.check(fresh=True)
        return source

    # -- asking ----------------------------------------------------------------------------------
    def failed(self, code: str) -> None:
        """A reply failed with ``code``: on the model, ask the server again now, not at the
        next tick."""
        if code in MODEL_CODES:
            self.check(fresh=True)

    def tick(self) -> None:
        """Ask the model server again when the prober says it is due: never while a reply
        streams (the reply itself says when the server goes)."""
        if self.app.session is not None and self.prober.due(busy=self.app.replying):
            self.prober.asked()
            self.check(fresh=True)

    def check(self, fresh: bool = False) -> None:
        """Ask whether the model answers (``fresh``: not a cached answer), in a worker; a
        newer question cancels an older one."""
        self.app.run_worker(
            partial(self._check, fresh),
            name="check_model",
            exclusive=True,
            group="model",
            exit_on_error=False,
        )

    async def _check(self, fresh: bool) -> None:
        session = self.app.session
        if session is None:
            return
        try:
            status = await session.check_model(fresh=fresh, model=self.app.model_choice)
        except SadieError:
            self.prober.checked(False)
            return  # the holder went away: the next reply says so
        self.app.post_message(ModelChecked(status))

    def checked(self, status: ModelStatus) -> None:
        """Show the model's state; a change after the first check is a toast each way."""
        app = self.app
        self.prober.checked(status.online)
        was, self.online = self.online, status.online
        for line in app.status_lines():
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
            app.notify(
                f"{status.detail}{fix}\nsadie quotes your notes meanwhile; F4 sets the address",
                title=f"The model {gone}",
                severity="warning",
                timeout=8,
            )
        elif was is False:
            app.notify(f"{status.model} answers again", title="The model is back", timeout=5)
