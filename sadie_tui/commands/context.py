"""What every CLI command gets: the resolved home, the settings, and a way to open the memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Settings, load_settings
from ..paths import resolve_home

if TYPE_CHECKING:
    from ..engine.memory import Memory


@dataclass
class Context:
    home: Path
    settings: Settings
    demo: bool = False
    _memory: Memory | None = field(default=None, repr=False)

    @classmethod
    def create(cls, *, demo: bool = False) -> Context:
        return cls(home=resolve_home(demo=demo), settings=load_settings(), demo=demo)

    def open_memory(self, read_only: bool = False) -> Memory:
        """The memory, opened once per command; a demo home is built on first use."""
        if self._memory is None:
            from ..engine.memory import Memory

            if self.demo:
                from .demo import ensure_demo

                ensure_demo(self.home)
            self._memory = Memory.open(self.home, read_only=read_only)
        return self._memory

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()
            self._memory = None
