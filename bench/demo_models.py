"""What the real-model benches share: each model on a private copy of the demo memory.

    for model, memory, companion in each_model(models, host):
        ...

The copy keeps the person's demo home untouched (a bench writes conversations and
telemetry), and ``SADIE_MODEL`` / ``OLLAMA_HOST`` point the engine at the model server.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from sadie_tui.commands.demo import ensure_demo
from sadie_tui.config import load_settings
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.session import Session
from sadie_tui.paths import resolve_home


def each_model(models: Sequence[str], host: str) -> Iterator[tuple[str, Memory, Session]]:
    os.environ["OLLAMA_HOST"] = host
    os.environ["SADIE_REASONER"] = "ollama"
    demo = resolve_home(demo=True)
    ensure_demo(demo, quiet=True)
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            home = Path(tmp) / model.replace(":", "_")
            # A sadie holding the demo leaves its socket there: not a file to copy.
            shutil.copytree(demo, home, ignore=shutil.ignore_patterns("*.sock"))
            os.environ["SADIE_MODEL"] = model
            with Memory.open(home) as memory:
                yield model, memory, Session(memory, load_settings())
