"""SVG snapshots (pytest-textual-snapshot) of every screen, on the real engine with a frozen
clock and frozen timings: the chat mid-stream, checking its sources and finished (in each
theme), the offline state and its banner given once, the model picker, the chip picker, the
chip bar (and its overflow), the browser (and its search, and its export dialog), help, an
opened episode, what sadie has learned and the too-small message.

Update after an intended change with ``pytest tests/test_tui_snapshots.py --snapshot-update``
and look at the report before committing.
"""

from __future__ import annotations

import dataclasses

import pytest
from textual.widgets import Input, TextArea

from sadie_tui.engine.operations import AcceptBelief, ListBeliefs
from sadie_tui.tui.screens.chip_picker import ChipPickerScreen
from sadie_tui.tui.screens.conversations import BrowserScreen
from sadie_tui.tui.screens.dialogs import ExportDialog
from sadie_tui.tui.screens.episode import EpisodeScreen
from sadie_tui.tui.screens.help import HelpScreen
from sadie_tui.tui.widgets.citations import CitationItem
from sadie_tui.tui.widgets.prompt import PromptInput
from tests.support.ollama_server import Reply
from tests.support.tui import (
    make_app,
    make_context,
    seed_conversations,
    wait_until,
)

pytest_plugins = ["tests.support.tui"]
SIZE = (100, 32)
QUESTION = "What did Maya say about moving?"


def steady(app) -> None:  # type: ignore[no-untyped-def]
    """No blinking cursors in a snapshot."""
    for screen in app.screen_stack:
        for widget in screen.query("TextArea, Input"):
            if isinstance(widget, TextArea | Input):
                widget.cursor_blink = False


async def ask(pilot, text: str = QUESTION, *, finish: bool = True):  # type: ignore[no-untyped-def]
    app = pilot.app
    await wait_until(pilot, app.memory_ready.is_set)
    await wait_until(pilot, lambda: app.chat_screen.query_one("StatusLine").online is not None)
    prompt = app.chat_screen.query_one(PromptInput)
    prompt.insert(text)
    await pilot.press("enter")
    chat = app.chat_screen
    reply = await wait_until(pilot, lambda: chat.reply)
    if finish:
        await wait_until(pilot, lambda: reply.status != "streaming" and not chat.streaming)
    return reply


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    steady(pilot.app)
    await pilot.pause(0.1)
    await pilot.wait_for_scheduled_animations()
    steady(pilot.app)


@pytest.mark.parametrize("theme", ["sadie-dark", "sadie-light", "sadie-high-contrast"])
def test_chat_finished(snap_compare, ctx, theme) -> None:
    ctx.settings = dataclasses.replace(ctx.settings, theme=theme)

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await ask(pilot)
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=SIZE, run_before=run)


def test_chat_mid_stream(snap_compare, ctx, ollama) -> None:
    words = (
        "You wrote that **Maya** is moving to Leeds in May, and that you did not know what to say. "
    )
    pieces = [w + " " for w in words.split()]
    ollama.queue(Reply(content=pieces, stall_after=12))

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        reply = await ask(pilot, finish=False)
        await wait_until(pilot, lambda: "and that" in reply.text, what="twelve pieces")
        await pilot.pause(0.2)
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=SIZE, run_before=run)


def test_offline_state(snap_compare, home, ollama) -> None:
    ctx = make_context(home, ollama.url, model="llama-nope:7b")

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await ask(pilot)
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=SIZE, run_before=run)


def test_offline_banner_once(snap_compare, home, ollama) -> None:
    """Two offline replies in one conversation: the banner in full once, then short."""
    ctx = make_context(home, ollama.url, model="llama-nope:7b")

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        first = await ask(pilot)
        await ask(pilot, "And how did the pottery class go?")
        assert first is not pilot.app.chat_screen.reply
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=(100, 40), run_before=run)


def test_checking_sources(snap_compare, ctx, ollama) -> None:
    """The prose is complete and the citation pass is running (it never answers here)."""
    ollama.queue(Reply(["Maya is moving to Leeds in May, you wrote."]))
    ollama.queue(Reply(["{}"], stall_after=0, stall_seconds=60))

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        reply = await ask(pilot, finish=False)
        await wait_until(pilot, lambda: reply.checking, what="the citation pass")
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=SIZE, run_before=run)


def test_model_picker(snap_compare, ctx, ollama) -> None:
    from textual.widgets import Input, Static

    from sadie_tui.tui.screens.model_picker import ModelPicker

    ollama.models.extend(["gemma3:270m", "llama3.2:3b"])

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        app = pilot.app
        await wait_until(pilot, app.memory_ready.is_set)
        await pilot.press("f4")
        picker = await wait_until(
            pilot, lambda: isinstance(app.screen, ModelPicker) and app.screen.names and app.screen
        )
        # The test server's port changes from run to run: shown as Ollama's usual one.
        usual = "http://127.0.0.1:11434"
        picker.query_one("#server-source", Static).update("Model server: " + usual)
        picker.query_one(Input).value = usual
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=SIZE, run_before=run)


def test_chip_picker(snap_compare, ctx) -> None:
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        app = pilot.app
        await wait_until(pilot, app.memory_ready.is_set)
        await pilot.press("ctrl+t")
        picker = await wait_until(
            pilot, lambda: isinstance(app.screen, ChipPickerScreen) and app.screen
        )
        await pilot.press(*"maya")
        await wait_until(
            pilot,
            lambda: (
                picker.candidates
                and picker.query_one(Input).value == "maya"
                and all("maya" in (c.label + c.snippet).lower() for c in picker.candidates)
            ),
        )
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=SIZE, run_before=run)


def test_chip_bar_with_chips(snap_compare, ctx) -> None:
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        app = pilot.app
        await wait_until(pilot, app.memory_ready.is_set)
        from sadie_tui.engine.chips import find_attachable

        found = find_attachable(app.session.db, "maya")
        for kind in ("wiki", "graph_entity", "discourse"):
            await app.chat_screen.attach(next(c for c in found if c.kind == kind))
        await wait_until(pilot, lambda: len(app.chat_screen.query("ChipView")) == 3)
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=SIZE, run_before=run)


def test_chip_bar_overflow(snap_compare, ctx) -> None:
    """More chips than fit at 80 columns: whole chips, "‹ N more" for the rest, the latest
    in view."""

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        app = pilot.app
        await wait_until(pilot, app.memory_ready.is_set)
        from sadie_tui.engine.chips import find_attachable

        found = find_attachable(app.session.db, "maya") + find_attachable(app.session.db, "week")
        kinds = ("wiki", "graph_entity", "discourse", "brief")
        for kind in kinds:
            await app.chat_screen.attach(next(c for c in found if c.kind == kind))
        await wait_until(pilot, lambda: len(app.chat_screen.query("ChipView")) == len(kinds))
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=(80, 24), run_before=run)


async def open_browser(pilot) -> None:  # type: ignore[no-untyped-def]
    """ctrl+l once the memory is open, and wait for the list."""
    app = pilot.app
    await wait_until(pilot, app.memory_ready.is_set)
    await pilot.press("ctrl+l")
    browser = await wait_until(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen)
    await wait_until(pilot, lambda: browser.conversations)
    await settle(pilot)


def test_browser(snap_compare, ctx) -> None:
    seed_conversations(ctx.home)
    assert snap_compare(make_app(ctx), terminal_size=SIZE, run_before=open_browser)


def test_browser_search_shows_the_match(snap_compare, ctx) -> None:
    seed_conversations(ctx.home)

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        app = pilot.app
        await wait_until(pilot, app.memory_ready.is_set)
        await pilot.press("ctrl+l")
        browser = await wait_until(
            pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen
        )
        await wait_until(pilot, lambda: browser.conversations)
        await pilot.press(*"queue")  # in the refactor's reply only
        await wait_until(
            pilot,
            lambda: (
                [c.title for c in browser.conversations] == ["The refactor"]
                and "queue" in str(browser.query_one("#browser-list").get_option_at_index(0).prompt)
            ),
        )
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=SIZE, run_before=run)


def test_export_dialog_with_a_bad_place(snap_compare, ctx, monkeypatch) -> None:
    seed_conversations(ctx.home)
    monkeypatch.setenv("HOME", "/home/you")  # no Documents there: the offer is ~

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        app = pilot.app
        await wait_until(pilot, app.memory_ready.is_set)
        await pilot.press("ctrl+l")
        browser = await wait_until(
            pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen
        )
        await wait_until(pilot, lambda: browser.conversations)
        await pilot.press("e")
        dialog = await wait_until(
            pilot, lambda: isinstance(app.screen, ExportDialog) and app.screen
        )
        assert dialog.query_one(Input).value.startswith("/home/you/")
        dialog.query_one(Input).value = "/no/such/folder/maya.md"
        await pilot.press("enter")
        await wait_until(pilot, lambda: dialog.error)
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=SIZE, run_before=run)


def test_help(snap_compare, ctx) -> None:
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=(100, 50), run_before=run)


def test_episode_with_the_quote_highlighted(snap_compare, ctx) -> None:
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        app = pilot.app
        await ask(pilot)
        app.chat_screen.query_one(CitationItem).focus()
        await pilot.press("enter")
        episode = await wait_until(
            pilot, lambda: isinstance(app.screen, EpisodeScreen) and app.screen
        )
        await wait_until(pilot, lambda: episode.query(".-quoted"))
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=SIZE, run_before=run)


def test_beliefs(snap_compare, ctx, ollama) -> None:
    """What sadie has learned, after a reflection with the scripted model: one belief
    accepted, one proposed."""
    from sadie_tui.config import Settings
    from sadie_tui.engine.session import Session
    from sadie_tui.tui.learning import SEEN_FILE
    from sadie_tui.tui.screens.beliefs import BeliefsScreen
    from tests.support.reflect_model import ReflectModel
    from tests.test_tui_learning import POTTERY, RIVER

    ollama.responder = ReflectModel(beliefs=[POTTERY, RIVER])
    session = Session.open(ctx.home, Settings(ollama_host=ollama.url, reasoner="ollama"))
    try:
        assert session.reflect().new == 2
        pottery = next(b for b in session.call(ListBeliefs()) if b.statement == POTTERY.statement)
        session.call(AcceptBelief(pottery.id))
    finally:
        session.close()
    # Looked at since: no notice of new beliefs racing the screen into the picture.
    (ctx.home / SEEN_FILE).write_text('{"seen_at": "2999-01-01T00:00:00"}')

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        app = pilot.app
        await wait_until(pilot, app.memory_ready.is_set)
        await pilot.press("f5")
        await wait_until(pilot, lambda: isinstance(app.screen, BeliefsScreen) and app.screen.loaded)
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=SIZE, run_before=run)


def test_too_small(snap_compare, ctx) -> None:
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "TooSmallScreen")
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=(40, 10), run_before=run)


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=["80x24", "60x20"])
def test_chat_narrow(snap_compare, ctx, size) -> None:
    """Below 100 columns: no sidebar beside the chat, shorter wordings, whole footer keys."""

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await ask(pilot)
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=size, run_before=run)


def test_chat_narrow_sources_over_the_chat(snap_compare, ctx) -> None:
    """ctrl+b at 80 columns: the sources over the chat, which keeps its width."""

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await ask(pilot)
        await pilot.press("ctrl+b")
        await settle(pilot)

    assert snap_compare(make_app(ctx), terminal_size=(80, 24), run_before=run)


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=["80x24", "60x20"])
def test_browser_narrow(snap_compare, ctx, size) -> None:
    seed_conversations(ctx.home)
    assert snap_compare(make_app(ctx), terminal_size=size, run_before=open_browser)
