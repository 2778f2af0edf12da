"""Issue #28, item 10: while the app holds the memory, `sadie ingest PATH` in another terminal
reads the notes in through it, and the app says so in a notice.

Real parts: the app under Pilot holding the memory (served on its socket), `sadie ingest` as a
subprocess on the same home.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from sadie_tui.engine.operations import SearchMemory
from tests.support.tui import make_app, make_context, wait_until

pytest_plugins = ["tests.support.tui"]
pytestmark = pytest.mark.asyncio

ROOT = Path(__file__).resolve().parent.parent


def _holding(launch):  # type: ignore[no-untyped-def]
    return launch.session(wait_for_embedder=False, remote=True, hold=True)


async def test_notes_from_another_terminal_show_a_notice(home: Path, ollama, tmp_path) -> None:
    trip = tmp_path / "trip"
    trip.mkdir()
    for day, place in enumerate(("Porto", "Braga", "Faro"), 1):
        (trip / f"2026-04-0{day}.md").write_text(
            f"Walked around {place} with Ines all afternoon.\n", encoding="utf-8"
        )
    ctx = make_context(home, ollama.url)
    app = make_app(ctx, stable=False, session_factory=_holding, warm_embedder=False)
    env = dict(os.environ, SADIE_HOME=str(home), SADIE_REASONER="offline")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set, what="the memory")
        assert (home / "sadie.sock").is_socket()
        ingest = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sadie_tui.cli",
            "ingest",
            str(trip),
            env=env,
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(ingest.communicate(), timeout=120)
        assert ingest.returncode == 0, err.decode()
        assert re.search(r"^added\s+3$", out.decode(), re.MULTILINE), out.decode()
        await wait_until(
            pilot,
            lambda: [
                n
                for n in app._notifications
                if str(n.message) == "3 notes added from another terminal"
            ],
            timeout=30,
            what="the notice",
        )
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert said.count("3 notes added from another terminal") == 1, said  # once
        assert any("Braga" in c.text for c in app.session.call(SearchMemory("Braga")).chunks)
