"""The app's side of the learning loop: what is new since the person last looked at "What
sadie has learned", and the reflection the app runs by itself while nobody types.

Idle reflection (``reflect_when_idle``, off by default) runs only while this app holds the
memory, no reply is being written, and no key has been pressed for ``reflect_idle_minutes``:
``Session.reflect`` in a thread, asked to stop by the next key (the batch in flight is
cancelled and lost, as on a kill; the next run starts there). The status line says
"reflecting… N/M" meanwhile, and a notification says what the run found.

When the person last looked is kept in ``tui-beliefs.json`` in the home, beside the file
``open_last`` reads.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..engine.errors import SadieError
from ..engine.operations import ListBeliefs
from ..engine.requests import ReflectJob

if TYPE_CHECKING:
    from ..config import Settings
    from ..engine.reflect.beliefs import Belief
    from ..engine.reflect.report import ReflectReport
    from ..engine.session import SessionProtocol
    from .widgets.status import StatusLine

SEEN_FILE = "tui-beliefs.json"
CHECK_SECONDS = 15.0  # how often the app asks itself whether it has been idle long enough
KEY_ID = "beliefs"  # the binding that opens the screen
KEY_DEFAULT = "f5"


def counted(n: int, noun: str) -> str:
    """ "1 new belief", "3 new beliefs"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def run_summary(report: ReflectReport) -> str | None:
    """What a reflection found, in one line (None: nothing new, contested or retired)."""
    if not (report.new or report.contested or report.retired):
        return None
    parts = [counted(report.new, "new belief")]
    if report.contested:
        parts.append(f"{report.contested} contested")
    if report.retired:
        parts.append(f"{report.retired} retired")
    return "sadie reflected on your notes: " + ", ".join(parts)


def unseen(beliefs: list[Belief], seen: datetime | None) -> int:
    """How many derived beliefs were proposed (still active or contested) after ``seen``."""
    count = 0
    for b in beliefs:
        if b.origin != "derived" or b.status not in ("active", "contested"):
            continue
        created = datetime.fromisoformat(b.created_at) if b.created_at else None
        if seen is None or (created is not None and created > seen):
            count += 1
    return count


class LearningHost(Protocol):
    """What ``Learning`` needs of the app (``SadieApp``; a protocol, as ``host.py``'s, so
    this module never imports the app that owns it)."""

    settings: Settings
    session: SessionProtocol | None
    keymap: dict[str, str]
    clock: Callable[[], datetime]

    @property
    def via(self) -> str: ...

    @property
    def home(self) -> Path: ...

    @property
    def replying(self) -> bool:
        """Whether a reply is being written."""
        ...

    def status_lines(self) -> list[StatusLine]: ...

    # Textual's App gives these.
    @property
    def notify(self) -> Callable[..., None]: ...

    @property
    def run_worker(self) -> Callable[..., object]: ...

    @property
    def set_interval(self) -> Callable[..., object]: ...

    @property
    def call_from_thread(self) -> Callable[..., object]: ...


class Learning:
    """Owned by the app (``app.learning``); the app tells it of keys and of the memory."""

    def __init__(self, app: LearningHost, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.app = app
        self.monotonic = monotonic  # the idle clock (a test's own)
        self.last_input = monotonic()
        self.running = False
        self.stopping = threading.Event()
        self.last_report: ReflectReport | None = None
        self._failure: str | None = None
        self._looked = False  # the screen was opened since the app started

    # -- what the app tells it ----------------------------------------------------------------
    def touched(self) -> None:
        """A key was pressed: not idle any more, and a running reflection stops at once."""
        self.last_input = self.monotonic()
        if self.running:
            self.stopping.set()

    def started(self) -> None:
        """The memory is open: say once what was proposed since the person last looked, and
        watch for idleness when asked to."""
        self.app.run_worker(self._tell_unseen, thread=True, group="learning", exit_on_error=False)
        if self.enabled:
            self.app.set_interval(CHECK_SECONDS, self.check)

    def stop(self) -> None:
        """The app is closing: a running reflection stops at once."""
        self.stopping.set()

    @property
    def enabled(self) -> bool:
        """Idle reflection is on, and this app holds the memory (a client leaves it to the
        sadie that does)."""
        return bool(self.app.settings.reflect_when_idle) and not self.app.via

    @property
    def key(self) -> str:
        """The key that opens the screen, as the person mapped it."""
        return self.app.keymap.get(KEY_ID, KEY_DEFAULT).split(",")[0]

    # -- last looked ----------------------------------------------------------------------------
    @property
    def _seen_path(self) -> Path:
        return self.app.home / SEEN_FILE

    def seen_at(self) -> datetime | None:
        try:
            data = json.loads(self._seen_path.read_text(encoding="utf-8"))
            return datetime.fromisoformat(data["seen_at"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def mark_seen(self) -> None:
        """The person opened the screen: nothing is new any more."""
        self._looked = True
        moment = self.app.clock().isoformat(timespec="seconds")
        try:
            fd = os.open(self._seen_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"seen_at": moment}, out)
        except OSError:
            pass  # a read-only home: the next start says it again

    def _tell_unseen(self) -> None:
        session = self.app.session
        if session is None:
            return
        try:
            found = unseen(session.call(ListBeliefs(origin="derived")), self.seen_at())
        except SadieError:
            return  # the screen says why when it is opened
        if found:
            said = f"sadie proposed {counted(found, 'belief')} since you last looked"
            self.app.call_from_thread(self._notify_unseen, said)

    def _notify_unseen(self, said: str) -> None:
        if not self._looked:  # the person is already looking
            self._notify(said)

    def _notify(self, said: str) -> None:
        self.app.notify(f"{said} — {self.key} shows them", title="What sadie has learned")

    # -- idle reflection ------------------------------------------------------------------------
    def idle_for(self) -> float:
        return self.monotonic() - self.last_input

    def check(self) -> bool:
        """Start a reflection if the app has been idle long enough; whether it started."""
        app = self.app
        if not self.enabled or self.running or app.session is None:
            return False
        if self.idle_for() < app.settings.reflect_idle_minutes * 60:
            return False
        if app.replying:
            return False
        self.running = True
        self.stopping.clear()
        self._show("reflecting…")
        app.run_worker(self._reflect, thread=True, group="reflect", exit_on_error=False)
        return True

    def _reflect(self) -> None:
        app = self.app
        session = app.session
        report = None

        def progress(stage: str, done: int, total: int) -> None:
            if stage == "reflecting":
                app.call_from_thread(self._show, f"reflecting… {done}/{total}")

        try:
            if session is not None:
                report = session.reflect(ReflectJob(progress=progress, stop=self.stopping.is_set))
        except SadieError as exc:
            app.call_from_thread(self._failed, exc.one_line())
        finally:
            app.call_from_thread(self._finished, report)

    def _show(self, text: str) -> None:
        for status in self.app.status_lines():
            status.reflecting = text

    def _failed(self, line: str) -> None:
        if line != self._failure:  # once, not every idle period
            self._failure = line
            self.app.notify(line, title="Idle reflection", severity="warning")

    def _finished(self, report: ReflectReport | None) -> None:
        self.running = False
        self.last_report = report
        self.last_input = self.monotonic()  # the next run waits for another idle stretch
        self._show("")
        said = run_summary(report) if report is not None else None
        if said:
            self._failure = None
            self._notify(said)
