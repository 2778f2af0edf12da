"""Messages the app's background workers post to the UI (thread workers may only post)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from ..engine.context import ModelStatus


class MemoryReady(Message):
    """The memory is open and the companion built; chat can start."""


class MemoryEmpty(Message):
    """Whether the memory holds nothing yet (asked when it opens and when notes come in):
    the start screen and the status line say how to fill it."""

    def __init__(self, empty: bool) -> None:
        super().__init__()
        self.empty = empty


class MemoryFailed(Message):
    """The memory could not be opened (another sadie holds it, a broken file …)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class EmbedderReady(Message):
    """The embedding model finished loading: retrieval uses all three channels now."""

    def __init__(self, error: BaseException | None = None) -> None:
        super().__init__()
        self.error = error


class ModelChecked(Message):
    """The result of asking Ollama whether the model is there (``ModelStatus``)."""

    def __init__(self, status: ModelStatus) -> None:
        super().__init__()
        self.status = status


class MemoryChanged(Message):
    """Another sadie's ingest or reflection, through this app's socket, changed the memory:
    ``line`` says what ("3 notes added from another terminal"). The app shows it and sends
    each open screen a ``MemoryRefreshed``."""

    def __init__(self, line: str) -> None:
        super().__init__()
        self.line = line


class MemoryRefreshed(Message):
    """To a screen: the memory changed under it (``MemoryChanged``), so what it lists may be
    stale. A message of its own: a ``MemoryChanged`` handed to a screen reached the app's
    handler again, which handed it on again, without end."""

    bubble = False
