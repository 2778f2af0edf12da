"""The app keeps the `notes` folders of the config current while it holds the memory, and a
citation to a note removed since then opens to a clear line, not an error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from sadie_tui.engine.events import CitationView
from sadie_tui.engine.operations import SearchMemory
from sadie_tui.tui.screens.episode import REMOVED, EpisodeScreen
from tests.support.tui import make_app, make_context, wait_until

pytest_plugins = ["tests.support.tui"]
pytestmark = pytest.mark.asyncio


def _found(app: Any, words: str) -> bool:
    return any(words in c.text for c in app.session.call(SearchMemory(words)).chunks)


async def test_an_edit_in_a_watched_folder_reaches_search(home: Path, ollama, tmp_path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    note = vault / "garden.md"
    note.write_text("Planted broad beans along the east fence.\n", encoding="utf-8")
    ctx = make_context(home, ollama.url, notes=[vault])
    app = make_app(ctx, warm_embedder=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set, what="the memory")
        # What was written while the app was closed is read when the watch starts.
        await wait_until(pilot, lambda: _found(app, "broad beans"), what="the note read")
        note.write_text("Planted runner beans along the east fence.\n", encoding="utf-8")
        await wait_until(pilot, lambda: _found(app, "runner beans"), what="the edit read")
        assert not _found(app, "broad beans")
        await wait_until(
            pilot,
            lambda: any("re-read 1 note" in str(n.message) for n in app._notifications),
            what="the quiet notice",
        )
        # The episode screen of a citation to a note deleted since: a clear line, the quote.
        episode_id = app.session.db.fetchone(
            "SELECT id::VARCHAR FROM episodes WHERE source_key = ?", [str(note.resolve())]
        )[0]
        note.unlink()
        await wait_until(pilot, lambda: not _found(app, "runner beans"), what="the note gone")
        view = CitationView(episode_id, "runner beans", "verbatim", "verbatim", "Garden", "")
        await app.push_screen(EpisodeScreen(app.session, view))
        screen = app.screen
        await wait_until(pilot, lambda: screen.query("#episode-removed"), what="the line")
        assert str(screen.query_one("#episode-removed", Static).render()) == REMOVED
        assert "runner beans" in " ".join(str(s.render()) for s in screen.query(Static))


async def test_a_client_of_another_holder_does_not_watch(home: Path, ollama, tmp_path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text("A note only the holder would read.\n", encoding="utf-8")
    ctx = make_context(home, ollama.url, notes=[vault])
    ctx.via = "another sadie (pid 1)"  # what Launch sets when it becomes a holder's client
    app = make_app(ctx, warm_embedder=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set, what="the memory")
        await pilot.pause()
        assert not [w for w in app.workers if w.group == "notes"]
