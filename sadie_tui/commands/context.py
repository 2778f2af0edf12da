"""What every CLI command gets: the ``Launch`` (home, settings, the session), with the demo
memory built behind the CLI's own progress bar."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..launch import Launch

if TYPE_CHECKING:
    from ..engine.session import Session


@dataclass
class Context(Launch):
    def session(self, **kwargs: Any) -> Session:
        from .demo import ensure_demo

        kwargs.setdefault("build_demo", ensure_demo)
        return super().session(**kwargs)
