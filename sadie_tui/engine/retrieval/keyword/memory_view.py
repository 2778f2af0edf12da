"""What the keyword index needs of a memory: its home folder (the index lives in it) and its
database (the chunks it is built from). A protocol: a search needs no more of a memory, and a
test or a bench may hand it anything with both."""

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
