"""What every CLI command gets: the ``Launch`` (home, settings, the session), with the demo
memory built behind the CLI's own progress bar."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..launch import Launch
from .demo import ensure_demo

if TYPE_CHECKING:
    from ..engine.session import SessionProtocol


@dataclass
class Context(Launch):
    def session(self, **kwargs: Any) -> SessionProtocol:
        """As ``Launch.session``; a memory held by ``sadie serve`` is reached over its socket."""
        kwargs.setdefault("build_demo", ensure_demo)
        kwargs.setdefault("remote", True)
        return super().session(**kwargs)
