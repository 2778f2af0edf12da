"""The app hands each message from its parts' workers to the part that owns it: the keeper's
four (routed by ``@on`` to ``MemoryKeeper.receive``) and model control's ``ModelChecked``.
On the real app over the typed fake session, asserting on what each part then shows."""

from __future__ import annotations

import pytest

from sadie_tui.engine.context import ModelStatus
from sadie_tui.engine.errors import SadieError
from sadie_tui.launch import Launch
from sadie_tui.tui.app import SadieApp
from sadie_tui.tui.messages import (
    EmbedderReady,
    MemoryChanged,
    MemoryEmpty,
    MemoryFailed,
    ModelChecked,
)
from sadie_tui.tui.widgets.status import StatusLine
from tests.support.fake_session import FakeSession, now
from tests.support.tui import wait_until


def _app(tmp_path, monkeypatch) -> SadieApp:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    fake = FakeSession(home=tmp_path)
    launch = Launch(home=tmp_path, settings=fake.settings)
    return SadieApp(launch, session_factory=lambda _: fake, clock=now, warm_embedder=False)


def _titles(app: SadieApp) -> list[str]:
    return [n.title for n in app._notifications]


@pytest.mark.asyncio
async def test_each_message_of_the_keeper_reaches_it(tmp_path, monkeypatch) -> None:
    app = _app(tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        status = app.chat_screen.query_one(StatusLine)

        app.post_message(MemoryEmpty(not app.memory_empty))
        wanted = not app.memory_empty
        await wait_until(pilot, lambda: status.memory_empty is wanted, what="empty")
        assert app.memory_empty is wanted

        app.post_message(EmbedderReady(SadieError("no embedding model here")))
        await wait_until(pilot, lambda: status.embedder_ready is False, what="embedder")
        assert "Embedding model" in _titles(app)

        app.post_message(MemoryChanged("3 notes added from another terminal"))
        await wait_until(pilot, lambda: "Memory" in _titles(app), what="changed")
        assert "3 notes added from another terminal" in [n.message for n in app._notifications]

        broken = SadieError("the memory file is broken")
        app.post_message(MemoryFailed(broken))
        await wait_until(pilot, lambda: app.exit_error is broken, what="failed")
    assert app.return_code == 1


@pytest.mark.asyncio
async def test_a_model_check_reaches_model_control(tmp_path, monkeypatch) -> None:
    app = _app(tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        status = app.chat_screen.query_one(StatusLine)
        await wait_until(pilot, lambda: status.online is True, what="the first check")
        gone = ModelStatus(False, "fake:1b", "http://fake", "nothing answers", "start it")
        app.post_message(ModelChecked(gone))
        await wait_until(pilot, lambda: status.online is False, what="offline")
        assert app.models.online is False
        assert "The model went away" in _titles(app)
