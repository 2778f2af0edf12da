"""Below ``MIN_SIZE`` the app shows one screen that asks for a larger terminal, and takes it
away again once the terminal is large enough (what was under it is as it was)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from .screens.too_small import TooSmallScreen

if TYPE_CHECKING:
    from textual.screen import Screen

MIN_SIZE = (50, 12)  # columns, rows


class SizeHost(Protocol):
    """What the guard needs of the app: Textual's ``App`` gives both."""

    @property
    def screen_stack(self) -> list[Screen[object]]: ...

    @property
    def push_screen(self) -> Callable[..., object]: ...


class SizeGuard:
    """Owned by the app (``app.size_guard``); told of each size (``check``)."""

    def __init__(self, app: SizeHost, minimum: tuple[int, int] = MIN_SIZE) -> None:
        self.app = app
        self.minimum = minimum
        self._too_small: TooSmallScreen | None = None

    def check(self, width: int, height: int) -> None:
        small = width < self.minimum[0] or height < self.minimum[1]
        if small and self._too_small is None:
            self._too_small = TooSmallScreen(self.minimum)
            self.app.push_screen(self._too_small)
        elif not small and self._too_small is not None:
            screen, self._too_small = self._too_small, None
            if screen in self.app.screen_stack:
                screen.dismiss()
