"""Pilot tests of app-wide behaviour: key ids and remapping from the config, help (F1), the
command palette, themes (shipped, switched, remembered), personas, sizes, quitting."""

from __future__ import annotations

import dataclasses
import gc
import io
import tomllib

import pytest
from rich.console import Console
from textual.command import CommandPalette
from textual.widgets import Static

from sadie_tui.tui.app import SadieApp
from sadie_tui.tui.screens.chat import ChatScreen
from sadie_tui.tui.screens.dialogs import Choose
from sadie_tui.tui.screens.help import HelpScreen
from sadie_tui.tui.screens.too_small import TooSmallScreen
from sadie_tui.tui.themes import VARIABLE_DEFAULTS, load_themes, theme_from_toml
from sadie_tui.tui.widgets.citations import CitationSidebar
from sadie_tui.tui.widgets.prompt import PromptInput
from sadie_tui.tui.widgets.status import StatusLine
from sadie_tui.tui.widgets.transcript import Transcript
from tests.support.tui import (
    make_app,
    wait_until,
)

pytest_plugins = ["tests.support.tui"]
pytestmark = pytest.mark.asyncio

CHAT_IDS = {
    "send",
    "newline",
    "new-conversation",
    "browser",
    "attach-chip",
    "remove-last-chip",
    "attach-record",
    "toggle-sidebar",
    "stop-reply",
    "copy",
    "help",
    "command-palette",
    "quit",
    "switch-persona",
    "switch-theme",
    "choose-model",
    "regenerate",
    "edit-last",
    "scroll-up",
    "scroll-down",
    "scroll-start",
    "scroll-end",
}


def help_text(app: SadieApp) -> str:
    """Everything the help screen shows, as plain text (tables rendered as a terminal would)."""
    console = Console(width=160, file=io.StringIO(), record=True, color_system=None)
    for widget in app.screen.query(Static):
        console.print(widget.content)
    return console.export_text()


async def test_every_chat_binding_has_an_id_and_help_lists_them(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        ids = {a.binding.id for a in app.screen.active_bindings.values() if a.binding.id}
        assert CHAT_IDS <= ids
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = help_text(app)
        for words in (
            "Send",
            "New line",
            "Attach",
            "Remove last chip",
            "Sources",
            "Stop reply",
            "Copy reply",
            "Conversations",
            "Help",
            "Quit",
            "Remove chip",
            "Open episode",
            "Regenerate",
            "Edit last",
            "Scroll up",
            "Model",
            "Earlier message",
            "Attach record",
        ):
            assert words in text, words
        for emotion in (
            "curious",
            "encouraging",
            "focused",
            "playful",
            "serious",
            "reflective",
            "celebrating",
        ):
            assert emotion in text
        assert "reading between the lines" in text and "verbatim" in text and "paraphrase" in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))


async def test_help_on_the_browser_lists_the_browser_keys(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "BrowserScreen")
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = help_text(app)
        for words in ("Pin", "Archive", "Rename", "Forget", "Export", "Search", "Back"):
            assert words in text, words


async def test_keys_are_remapped_from_the_config(ctx) -> None:
    ctx.settings = dataclasses.replace(
        ctx.settings, keymap={"toggle-sidebar": "f5", "new-conversation": "ctrl+o", "help": "f9"}
    )
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        sidebar = app.chat_screen.query_one(CitationSidebar)
        await pilot.press("ctrl+b")
        assert sidebar.display  # the old key does nothing now
        await pilot.press("f5")
        assert not sidebar.display
        await pilot.press("f9")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = help_text(app)
        assert "f5" in text and "f9" in text and "^o" in text
        assert "^b" not in text


async def test_the_command_palette_runs_sadie_actions(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        # The personas on offer are the session's: asked for once the memory is open.
        await wait_until(pilot, lambda: app.personas(), what="the session's personas")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for title in (
            "New conversation",
            "Conversations",
            "Attach context",
            "Attach the offered record",
            "Toggle sources",
            "Stop the reply",
            "Copy last reply",
            "Help",
            "Switch persona…",
            "Switch theme…",
            "Theme: sadie-light",
            "Persona: coach",
        ):
            assert title in titles, title
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"toggle sources")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))
        await wait_until(pilot, lambda: not app.chat_screen.query_one(CitationSidebar).display)


async def test_three_themes_ship_with_the_app_variables() -> None:
    themes, problems = load_themes()
    by_name = {t.name: t for t in themes}
    assert problems == []
    assert {"sadie-dark", "sadie-light", "sadie-high-contrast"} <= set(by_name)
    assert by_name["sadie-light"].dark is False
    assert by_name["sadie-dark"].dark is True
    for name in ("sadie-dark", "sadie-light", "sadie-high-contrast"):
        assert set(VARIABLE_DEFAULTS) <= set(by_name[name].variables), name


async def test_a_broken_theme_file_is_skipped_and_named(tmp_path) -> None:
    (tmp_path / "good.toml").write_text('name = "good"\nprimary = "#ff0000"\n')
    (tmp_path / "bad.toml").write_text('name = "bad"\nprimary = \n')
    themes, problems = load_themes([tmp_path])
    assert [t.name for t in themes] == ["good"]
    assert problems and problems[0].startswith("bad.toml")
    assert theme_from_toml('primary = "#000000"', "fallback").name == "fallback"


async def test_switching_theme_applies_and_is_remembered(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.theme == "sadie-dark"
        await pilot.press("f3")
        chooser = await wait_until(pilot, lambda: isinstance(app.screen, Choose) and app.screen)
        values = [v for v, _ in chooser.options]
        assert values[:3] == ["sadie-dark", "sadie-high-contrast", "sadie-light"]
        await pilot.press("down", "down", "enter")
        await wait_until(pilot, lambda: app.theme == "sadie-light")
        config = ctx.settings.config_path
        await wait_until(pilot, lambda: config.is_file() and "sadie-light" in config.read_text())
        assert tomllib.loads(config.read_text())["theme"] == "sadie-light"
        # Every Textual theme works too: the app's variables fall back to defaults.
        app.set_theme("nord")
        await pilot.pause()
        assert app.theme == "nord"


async def test_the_remembered_theme_is_used_at_start(ctx) -> None:
    ctx.settings = dataclasses.replace(ctx.settings, theme="sadie-high-contrast")
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)):
        assert app.theme == "sadie-high-contrast"
    ctx.settings = dataclasses.replace(ctx.settings, theme="no-such-theme")
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)):
        assert app.theme == "sadie-dark"


async def test_switching_persona_changes_the_next_reply_and_is_remembered(ctx, ollama) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        status = app.chat_screen.query_one(StatusLine)
        assert status.persona == "friend"
        await pilot.press("f2")
        chooser = await wait_until(pilot, lambda: isinstance(app.screen, Choose) and app.screen)
        values = [v for v, _ in chooser.options]
        assert {"analyst", "coach", "friend", "skeptic"} <= set(values)
        options = chooser.query_one("OptionList")
        options.highlighted = values.index("coach")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.persona == "coach" and status.persona == "coach")
        config = ctx.settings.config_path
        await wait_until(pilot, lambda: config.is_file() and "coach" in config.read_text())
        assert tomllib.loads(config.read_text())["chat_persona"] == "coach"
        prompt = app.chat_screen.query_one(PromptInput)
        prompt.insert("How was my week?")
        await pilot.press("enter")
        chat = app.chat_screen
        await wait_until(pilot, lambda: chat.reply and chat.reply.status != "streaming")
        from sadie_tui.engine.conversations import get_conversation

        assert get_conversation(app.session.db, chat.conversation_id).persona == "coach"


async def test_a_broken_persona_file_is_named_and_left_out_of_the_chooser(ctx) -> None:
    from sadie_tui.paths import config_dir

    broken = config_dir() / "personas" / "gardener.toml"
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text("chunks = [1,\n", encoding="utf-8")
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        await pilot.press("f2")
        chooser = await wait_until(pilot, lambda: isinstance(app.screen, Choose) and app.screen)
        assert {"analyst", "coach", "friend", "skeptic"} == {v for v, _ in chooser.options}
        notes = [n.message for n in app._notifications]
        assert any(str(broken) in n and "invalid TOML" in n for n in notes), notes


@pytest.mark.parametrize("size", [(60, 20), (250, 70), (50, 12)])
async def test_small_and_large_terminals_stay_usable(ctx, size) -> None:
    app = make_app(ctx)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen)
        width, height = size
        for selector in ("#prompt", "#status", "#transcript", "#topbar", "#chips"):
            region = app.chat_screen.query_one(selector).region
            assert region.width > 0 and region.height > 0, selector
            assert region.right <= width and region.bottom <= height, selector
        prompt = app.chat_screen.query_one(PromptInput)
        assert app.focused is prompt
        await pilot.press(*"hi")
        assert prompt.text == "hi"


async def test_a_tiny_terminal_gets_a_clear_message_then_recovers(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.resize_terminal(40, 10)
        await wait_until(pilot, lambda: isinstance(app.screen, TooSmallScreen))
        assert "terminal too small" in str(app.screen.query_one("#too-small").render())
        await pilot.resize_terminal(60, 20)
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))
        assert app.chat_screen.query_one(Transcript).region.height > 0


async def test_a_tiny_terminal_at_launch(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(30, 8)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TooSmallScreen))


async def test_ctrl_q_quits(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running)
    assert app.return_code in (0, None)
    assert app.exit_error is None


async def test_first_paint_does_not_wait_for_the_memory(ctx) -> None:
    import time

    def never_ready(launch):  # type: ignore[no-untyped-def]
        time.sleep(1.5)
        raise AssertionError("not needed")

    app = make_app(ctx, session_factory=never_ready)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        status = app.chat_screen.query_one(StatusLine)
        assert status.memory_state == "opening"
        assert "opening memory" in str(status.render())
        assert app.focused is app.chat_screen.query_one(PromptInput)
        app.workers.cancel_all()


async def test_the_status_line_says_when_the_embedder_is_loading(ctx) -> None:
    app = make_app(ctx, warm_embedder=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        status = app.chat_screen.query_one(StatusLine)
        # The test process already loaded it once; a fresh status shows the loading state.
        status.embedder_ready = False
        assert "embedding model loading" in str(status.render())
        status.embedder_ready = True
        assert "embedding model loading" not in str(status.render())


async def test_the_heap_loaded_at_start_is_frozen(ctx) -> None:
    # Collections then skip torch's long-lived objects (a ~250 ms stall each otherwise).
    assert gc.get_freeze_count() == 0
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        status = app.chat_screen.query_one(StatusLine)
        await wait_until(pilot, lambda: status.embedder_ready, what="the embedding model")
        assert gc.get_freeze_count() > 0
