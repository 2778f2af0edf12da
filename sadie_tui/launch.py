"""What every face starts from: the resolved home, the settings, and the session over it.

Shared by the CLI and the TUI (neither imports the other's modules): a face builds a
``Launch`` from its options and asks it for the ``Session``, opened once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import Settings, load_settings
from .paths import resolve_home

if TYPE_CHECKING:
    from .engine.session import Session

DemoBuilder = Callable[[Path], Any]


@dataclass
class Launch:
    home: Path
    settings: Settings
    demo: bool = False
    _session: Session | None = field(default=None, repr=False)

    @classmethod
    def create(cls, *, demo: bool = False) -> Launch:
        return cls(home=resolve_home(demo=demo), settings=load_settings(), demo=demo)

    def session(
        self,
        *,
        read_only: bool = False,
        wait_for_embedder: bool = True,
        build_demo: DemoBuilder | None = None,
    ) -> Session:
        """The session, opened once; a demo home is built first (``build_demo`` shows the
        face's own progress; by default it builds quietly)."""
        if self._session is None:
            from .engine.session import Session

            if self.demo:
                if build_demo is not None:
                    build_demo(self.home)
                else:
                    from .engine.demo import ensure_demo

                    ensure_demo(self.home)
            self._session = Session.open(
                self.home,
                self.settings,
                read_only=read_only,
                wait_for_embedder=wait_for_embedder,
            )
        return self._session

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
