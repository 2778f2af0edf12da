"""The app on a typed fake session: no DuckDB, no embedding model — the screens only render
the session's events and records (the seam the faces talk through)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from sadie_tui.engine.episodes import Episode
from sadie_tui.engine.errors import ConfigError
from sadie_tui.engine.events import (
    CitationsEvent,
    CitationView,
    ContextBudget,
    Done,
    EmotionEvent,
    Meta,
    Token,
)
from sadie_tui.engine.personas import PersonaProblem, Personas, load_personas
from sadie_tui.engine.session import SessionProtocol
from sadie_tui.launch import Launch
from sadie_tui.tui import turn_controller
from sadie_tui.tui.app import SadieApp
from sadie_tui.tui.screens.episode import EpisodeScreen
from sadie_tui.tui.widgets.citations import CitationItem, CitationSidebar
from sadie_tui.tui.widgets.prompt import PromptInput
from sadie_tui.tui.widgets.sigil import EmotionSigil
from sadie_tui.tui.widgets.status import StatusLine
from sadie_tui.tui.widgets.transcript import AssistantMessage, UserMessage
from tests.support.fake_session import FakeSession, now
from tests.support.tui import wait_until

EP = "3f7f7a68-0b1c-4d2e-9f00-1234567890ab"


def test_the_fake_is_a_session() -> None:
    assert isinstance(FakeSession(home=None), SessionProtocol)  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_a_scripted_reply_and_its_episode(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    cite = CitationView(
        EP, "Shipped the auth refactor", "verbatim", "verbatim", "Warden retro", "2026-03-14"
    )
    fake = FakeSession(
        home=tmp_path,
        replies=[
            [
                Meta("c1", "fake:1b", "friend", False, "m2", "m1", "Warden"),
                EmotionEvent("reflective"),
                Token("You shipped the auth refactor."),
                CitationsEvent((cite,)),
                Done("m2", 12.0, 1),
            ]
        ],
        episodes={
            EP: Episode(
                EP, "Warden retro", "2026-03-14", "journal", "Shipped the auth refactor this week."
            )
        },
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
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, EpisodeScreen) and app.screen
        )
        await wait_until(pilot, lambda: screen.query(".-quoted"))
        assert "Shipped the auth refactor" in str(screen.query_one(".-quoted").render())


def _app(tmp_path, monkeypatch, replies):
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    fake = FakeSession(home=tmp_path, replies=replies)
    launch = Launch(home=tmp_path, settings=fake.settings)
    app = SadieApp(launch, session_factory=lambda _: fake, clock=now, warm_embedder=False)
    return app, fake


async def _send_to_gate(pilot, fake, text, gate):  # type: ignore[no-untyped-def]
    """Send ``text`` and wait until the fake turn waits at ``gate``; the chat screen."""
    app = pilot.app
    await wait_until(pilot, app.memory_ready.is_set)
    chat = app.chat_screen
    chat.query_one(PromptInput).insert(text)
    await pilot.press("enter")
    await wait_until(pilot, lambda: fake.waiting is gate)
    return chat


@pytest.mark.asyncio
async def test_the_messages_are_mounted_once_the_request_is_out(tmp_path, monkeypatch) -> None:
    """Meta and the register are shown at once; the two messages wait for the budget (the
    engine sends it once the request is written), so their layout overlaps the model."""
    monkeypatch.setattr(turn_controller, "SHOW_WITHIN", 3600.0)  # only the budget shows them
    sent = asyncio.Event()
    app, fake = _app(
        tmp_path,
        monkeypatch,
        [
            [
                Meta("c1", "fake:1b", "friend", False, "m2", "m1", "Warden"),
                EmotionEvent("reflective"),
                sent,
                ContextBudget(
                    chunks=3, messages=0, messages_dropped=0, chips=0, retrieval_ms=4.0, vector=True
                ),
                Token("You shipped it."),
                Done("m2", 12.0, 3),
            ]
        ],
    )
    async with app.run_test(size=(120, 40)) as pilot:
        chat = await _send_to_gate(pilot, fake, "How did Warden go?", sent)
        await pilot.pause()
        assert chat.conversation_id == "c1" and chat.title_text == "Warden"
        assert chat.query_one(EmotionSigil).emotion == "reflective"
        assert not chat.query(UserMessage) and not chat.query(AssistantMessage)
        sent.set()
        reply = await wait_until(pilot, lambda: chat.reply.status == "complete" and chat.reply)
        assert [m.text for m in chat.query(UserMessage)] == ["How did Warden go?"]
        assert reply.text == "You shipped it." and reply.emotion == "reflective"
        assert "reflective" in reply.header_text().plain


@pytest.mark.asyncio
async def test_a_turn_slow_to_send_shows_the_message_all_the_same(tmp_path, monkeypatch) -> None:
    """Held before its request (a slow model check, say): the message shows after
    SHOW_WITHIN, and escape stops the turn with the reply kept as interrupted."""
    never = asyncio.Event()
    app, fake = _app(
        tmp_path,
        monkeypatch,
        [
            [
                Meta("c1", "fake:1b", "friend", False, "m2", "m1", "Warden"),
                never,
            ]
        ],
    )
    async with app.run_test(size=(120, 40)) as pilot:
        chat = await _send_to_gate(pilot, fake, "Are you there?", never)
        user = await wait_until(pilot, lambda: next(iter(chat.query(UserMessage)), None))
        assert user.text == "Are you there?"
        reply = await wait_until(pilot, lambda: next(iter(chat.query(AssistantMessage)), None))
        assert reply is chat.reply and chat.streaming
        await pilot.press("escape")
        await wait_until(pilot, lambda: reply.status == "interrupted" and not chat.streaming)


@pytest.mark.asyncio
async def test_the_last_replys_rate_is_gone_once_the_next_one_starts(tmp_path, monkeypatch) -> None:
    held = asyncio.Event()
    meta = Meta("c1", "fake:1b", "friend", False, "m2", "m1", "Warden")
    app, fake = _app(
        tmp_path,
        monkeypatch,
        [
            [meta, Token("One."), Done("m2", 12.0, 3, tokens=40, tokens_per_s=25.0)],
            [Meta("c1", "fake:1b", "friend", False, "m4", "m3", "Warden"), held],
        ],
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        chat = app.chat_screen
        status = chat.query_one(StatusLine)
        for text in ("First?", "Second?"):
            chat.query_one(PromptInput).insert(text)
            await pilot.press("enter")
            await wait_until(pilot, lambda text=text: fake.asked[-1:] == [text])
            if text == "First?":
                await wait_until(pilot, lambda: not chat.streaming and status.tokens_per_s == 25.0)
        await wait_until(pilot, lambda: fake.waiting is held and chat.reply.message_id == "m4")
        assert status.tokens_per_s is None
        assert "tok/s" not in str(status.render())
        await pilot.press("escape")
        await wait_until(pilot, lambda: not chat.streaming)


def test_the_status_line_counts_in_words_that_agree():
    from sadie_tui.engine.events import ContextBudget
    from sadie_tui.tui.widgets.status import StatusLine

    status = StatusLine()
    status.context = ContextBudget(
        chunks=1, messages=1, messages_dropped=0, chips=1, retrieval_ms=3.0, vector=True
    )
    plain = status.render().plain
    assert "1 chunk · 1 msg · 1 chip · 3 ms" in plain and "chips" not in plain
    status.context = ContextBudget(
        chunks=12, messages=0, messages_dropped=0, chips=2, retrieval_ms=3.0, vector=True
    )
    assert "12 chunks · 0 msgs · 2 chips" in status.render().plain


class HolderSession(FakeSession):
    """Personas that are not this config folder's (as a holder's would be): one of its own,
    and a file it could not load."""

    def personas(self) -> Personas:
        offered = Personas()
        friend = load_personas(self.home / "none")["friend"]
        offered["gardener"] = replace(friend, name="gardener", description="Slow and seasonal.")
        broken = Path("/holder/personas/broken.toml")
        error = ConfigError(f"persona file {broken}: invalid TOML (line 1)", title="Persona")
        offered.problems.append(PersonaProblem(broken, error))
        return offered


@pytest.mark.asyncio
async def test_the_personas_on_offer_are_the_sessions(tmp_path, monkeypatch) -> None:
    """The palette and F2 offer what ``Session.personas`` gives, and name each file it could
    not load in a notification."""
    from sadie_tui.tui.screens.dialogs import Choose

    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    fake = HolderSession(home=tmp_path)
    launch = Launch(home=tmp_path, settings=fake.settings)
    app = SadieApp(launch, session_factory=lambda _: fake, clock=now, warm_embedder=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.personas(), what="the session's personas")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Persona: gardener" in titles and "Persona: coach" not in titles
        notes = [n.message for n in app._notifications]
        assert any("/holder/personas/broken.toml: invalid TOML" in n for n in notes), notes
        await pilot.press("f2")
        chooser = await wait_until(pilot, lambda: isinstance(app.screen, Choose) and app.screen)
        assert [name for name, _ in chooser.options] == ["gardener"]


@pytest.mark.asyncio
async def test_f2_before_the_memory_is_open_waits_for_it(tmp_path, monkeypatch) -> None:
    """The personas come from the session: F2 pressed while the memory opens shows the
    chooser once it is open (the refresh at opening does not swallow it)."""
    import threading

    from sadie_tui.tui.screens.dialogs import Choose

    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    fake = HolderSession(home=tmp_path)
    opening = threading.Event()

    def slow_to_open(_: object) -> FakeSession:
        opening.wait(30)
        return fake

    launch = Launch(home=tmp_path, settings=fake.settings)
    app = SadieApp(launch, session_factory=slow_to_open, clock=now, warm_embedder=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        assert not isinstance(app.screen, Choose) and not app.memory_ready.is_set()
        opening.set()
        # Until its list has focus the chooser is still mounting: leaving the app then (the
        # test's end) would remove the list under its on_mount on a busy machine.
        chooser = await wait_until(
            pilot,
            lambda: isinstance(app.screen, Choose) and app.screen.focused and app.screen,
            timeout=30,
        )
        assert [name for name, _ in chooser.options] == ["gardener"]
