"""What the keyword index needs of a memory: its home folder (the index lives in it) and its
database (the chunks it is built from). A protocol, so the index never imports ``Memory``,
which sits above it and imports the index."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ...store.db import Database


class MemoryFiles(Protocol):
    @property
    def home(self) -> Path: ...

    @property
    def db(self) -> Database: ...
