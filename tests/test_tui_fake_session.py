"""The app on a typed fake session: no DuckDB, no embedding model — the screens only render
the session's events and records (the seam the faces talk through)."""

from __future__ import annotations

import pytest

from sadie_tui.engine.events import (
    CitationsEvent,
    CitationView,
    Done,
    EmotionEvent,
    Meta,
    Token,
)
from sadie_tui.engine.session import Episode, SessionProtocol
from sadie_tui.launch import Launch
from sadie_tui.tui.app import SadieApp
from sadie_tui.tui.screens.episode import EpisodeScreen
from sadie_tui.tui.widgets.citations import CitationItem, CitationSidebar
from sadie_tui.tui.widgets.prompt import PromptInput
from sadie_tui.tui.widgets.transcript import AssistantMessage
from tests.support.fake_session import FakeSession, now
from tests.support.tui import wait_until

EP = "3f7f7a68-0b1c-4d2e-9f00-1234567890ab"


def test_the_fake_is_a_session() -> None:
    assert isinstance(FakeSession(home=None), SessionProtocol)  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_a_scripted_reply_and_its_episode(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    cite = CitationView(EP, "Shipped the auth refactor", "verbatim", "verbatim", "Warden retro",
                        "2026-03-14")
    fake = FakeSession(
        home=tmp_path,
        replies=[[
            Meta("c1", "fake:1b", "friend", False, "m2", "m1", "Warden"),
            EmotionEvent("reflective"),
            Token("You shipped the auth refactor."),
            CitationsEvent((cite,)),
            Done("m2", 12.0, 1),
        ]],
        episodes={EP: Episode(EP, "Warden retro", "2026-03-14", "journal",
                              "Shipped the auth refactor this week.")},
    )
    launch = Launch(home=tmp_path, settings=fake.settings)
    app = SadieApp(launch, session_factory=lambda _: fake, clock=now, warm_embedder=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        chat = app.chat_screen
        chat.query_one(PromptInput).insert("How did Warden go?")
        await pilot.press("enter")
        reply = await wait_until(pilot, lambda: chat.reply)
        await wait_until(pilot, lambda: reply.status == "complete" and not chat.streaming)
        assert fake.asked == ["How did Warden go?"]
        assert reply.text == "You shipped the auth refactor."
        assert isinstance(reply, AssistantMessage) and "1 source" in reply.header_text().plain
        assert chat.query_one(CitationSidebar).citations == (cite,)
        chat.query_one(CitationItem).action_open()
        screen = await wait_until(pilot, lambda: isinstance(app.screen, EpisodeScreen) and app.screen)
        await wait_until(pilot, lambda: screen.query(".-quoted"))
        assert "Shipped the auth refactor" in str(screen.query_one(".-quoted").render())
