"""The learning loop in the app on a real memory (real DuckDB, real embedder) and the
project's Ollama-protocol server with a scripted reflecting model: idle reflection starts only
once the app has been idle long enough (a controllable idle clock, no sleeps), shows its
progress on the status line, says what it found, and gives way at once to a key (the request
in flight is dropped); the beliefs it derived open on "What sadie has learned" with their
quotes, each opening its note."""

from __future__ import annotations

import dataclasses
import threading

import pytest
from textual.widgets import OptionList

from sadie_tui.engine.operations import ShowBelief
from sadie_tui.tui.screens.beliefs import BeliefScreen, BeliefsScreen
from sadie_tui.tui.screens.episode import EpisodeScreen
from sadie_tui.tui.widgets.prompt import PromptInput
from sadie_tui.tui.widgets.status import StatusLine
from tests.support.ollama_server import Reply
from tests.support.reflect_model import ReflectModel, Scripted
from tests.support.tui import make_app, ready, wait_until

pytest_plugins = ["tests.support.tui"]

POTTERY = Scripted(
    "pottery",
    "I enjoy pottery even when it goes wrong",
    "First pottery class tonight",
    "preference",
)
RIVER = Scripted(
    "river", "I walk by the river with Maya", "Walked by the river with Maya after lunch"
)
IDLE = 10 * 60


class IdleClock:
    """The idle clock the app reads: moved by the test, never by time."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _idle_app(ctx, clock: IdleClock):  # type: ignore[no-untyped-def]
    ctx.settings = dataclasses.replace(ctx.settings, reflect_when_idle=True)
    app = make_app(ctx)
    app.learning.monotonic = clock
    app.learning.last_input = 0.0
    return app


def _said(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(str(n.message) for n in app._notifications)


@pytest.mark.asyncio
async def test_idle_reflection_then_the_beliefs_it_found(ctx, ollama) -> None:
    ollama.responder = ReflectModel(beliefs=[POTTERY, RIVER])
    clock = IdleClock()
    app = _idle_app(ctx, clock)
    async with app.run_test(size=(110, 36)) as pilot:
        await ready(pilot)
        clock.now = IDLE - 1
        assert not app.learning.check()  # not idle long enough yet
        clock.now = IDLE
        assert app.learning.check()
        status = app.chat_screen.query_one(StatusLine)
        assert status.reflecting.startswith("reflecting…")
        await wait_until(pilot, lambda: not app.learning.running, what="the reflection")
        report = app.learning.last_report
        assert report is not None and report.new == 2 and report.stopped is None
        assert status.reflecting == ""
        said = "sadie reflected on your notes: 2 new beliefs — f5 shows them"
        await wait_until(pilot, lambda: said in _said(app), what="the notice")  # posted, not set
        assert not app.learning.check()  # the next run waits for another idle stretch

        await pilot.press("f5")
        screen = await wait_until(
            pilot,
            lambda: isinstance(app.screen, BeliefsScreen) and app.screen.loaded and app.screen,
        )
        listing = screen.query_one(OptionList)
        rows = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert rows[0] == "Proposed and active (2)"
        assert {r.split("\n")[0] for r in rows[1:]} == {POTTERY.statement, RIVER.statement}
        listing.highlighted = next(i for i, r in enumerate(rows) if r.startswith("I walk"))
        await pilot.press("enter")
        belief = await wait_until(
            pilot, lambda: isinstance(app.screen, BeliefScreen) and app.screen.detail and app.screen
        )
        assert [e.quote for e in belief.detail.evidence] == [RIVER.quote]
        await pilot.press("enter")
        note = await wait_until(pilot, lambda: isinstance(app.screen, EpisodeScreen) and app.screen)
        await wait_until(pilot, lambda: note.query(".-quoted"))
        assert RIVER.quote in str(note.query_one(".-quoted").render())
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is belief)
        await pilot.press("a")
        await wait_until(pilot, lambda: belief.detail.belief.status == "accepted")
        assert app.session.call(ShowBelief(belief.detail.belief.id)).belief.status == "accepted"


@pytest.mark.asyncio
async def test_a_key_stops_idle_reflection_at_once(ctx, ollama) -> None:
    asked = threading.Event()

    def slow(body: dict) -> Reply:
        if body.get("format"):
            asked.set()
            return Reply(content="{}", delay=600.0)  # would answer in ten minutes
        return Reply(content="hello")

    ollama.responder = slow
    clock = IdleClock()
    app = _idle_app(ctx, clock)
    async with app.run_test(size=(110, 36)) as pilot:
        await ready(pilot)
        clock.now = IDLE
        assert app.learning.check()
        await wait_until(pilot, asked.is_set, what="the reflection's first request")
        status = app.chat_screen.query_one(StatusLine)
        assert status.reflecting.startswith("reflecting… 0/")
        await pilot.press("h")
        await wait_until(pilot, lambda: not app.learning.running, timeout=20, what="the stop")
        report = app.learning.last_report
        assert report is not None and report.stopped == "stopped" and report.new == 0
        assert report.left > 0  # the batch in flight waits for the next run
        assert app.chat_screen.query_one(PromptInput).text == "h"  # the key still typed
        assert status.reflecting == ""


@pytest.mark.asyncio
async def test_no_idle_reflection_unless_asked(ctx, ollama) -> None:
    clock = IdleClock()
    app = make_app(ctx)  # reflect_when_idle is off by default
    app.learning.monotonic = clock
    async with app.run_test(size=(110, 36)) as pilot:
        await ready(pilot)
        clock.now = 24 * 3600
        assert not app.learning.check()
        assert not ollama.format_requests
