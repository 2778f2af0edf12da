"""The model server moved (issue 28, item 6): F4 (and the palette's "Model server
address…") shows the address in use and where it came from, says why the models cannot be
listed, and takes the new address — used at once even with OLLAMA_HOST set, the models listed
from the new server, saved to config.toml. A server going away while the app is idle is
noticed at the next probe, driven here by a clock the test moves. Pilot on the real engine
and the project's Ollama-protocol server."""

from __future__ import annotations

import pytest
from textual.widgets import Input, OptionList, Static

from sadie_tui.commands.context import Context
from sadie_tui.config import load_settings
from sadie_tui.tui.screens.chat import ChatScreen
from sadie_tui.tui.screens.model_picker import ModelPicker
from sadie_tui.tui.widgets.status import StatusLine
from tests.support.ollama_server import FakeOllama
from tests.support.tui import make_app, ready, wait_until

pytest_plugins = ["tests.support.tui"]
pytestmark = pytest.mark.asyncio

OLD = "http://127.0.0.1:9"  # the server's old port, closed now


def launch(home, tmp_path, config: str) -> Context:  # type: ignore[no-untyped-def]
    path = tmp_path / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(config, encoding="utf-8")
    return Context(home=home, settings=load_settings(path))


def text(picker: ModelPicker, selector: str) -> str:
    return str(picker.query_one(selector, Static).render())


async def picker_failed(pilot) -> ModelPicker:  # type: ignore[no-untyped-def]
    app = pilot.app
    return await wait_until(
        pilot,
        lambda: isinstance(app.screen, ModelPicker) and app.screen.failed and app.screen,
        what="the picker to say why it cannot list the models",
    )


async def test_f4_changes_the_address_lists_the_new_servers_models_and_saves_it(
    home, tui_env, tmp_path
) -> None:
    with FakeOllama(models=["qwen3:1.7b", "gemma3:270m"]) as moved:
        ctx = launch(home, tmp_path, f'# mine\nollama_host = "{OLD}"  # the old port\n')
        app = make_app(ctx)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            status = app.chat_screen.query_one(StatusLine)
            await wait_until(pilot, lambda: status.online is False, what="offline")
            await pilot.press("f4")
            picker = await picker_failed(pilot)
            assert text(picker, "#server-source") == f"Model server: {OLD} (from config.toml)"
            assert f"Cannot list the models: Ollama is not reachable at {OLD}" in text(
                picker, "#server-state"
            )
            box = picker.query_one(Input)
            assert box.has_focus and box.value == OLD
            box.value = moved.url
            await pilot.press("enter")
            await wait_until(pilot, lambda: picker.names, what="the new server's models")
            assert sorted(picker.names) == ["gemma3:270m", "qwen3:1.7b"]
            assert ("GET", "/api/tags") in moved.hits
            assert text(picker, "#server-source") == f"Model server: {moved.url} (set in the app)"
            assert picker.query_one(OptionList).has_focus
            await wait_until(pilot, lambda: status.online is True, what="online at once")
            await pilot.press("enter")  # the highlighted (current) model
            await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))
            saved = ctx.settings.config_path
            await wait_until(
                pilot, lambda: load_settings(saved).ollama_host == moved.url, what="saved"
            )
            kept = saved.read_text()
            assert "# mine" in kept and f'ollama_host = "{moved.url}"' in kept


async def test_with_ollama_host_set_the_dialog_says_which_wins_and_the_app_choice_applies(
    home, tui_env, tmp_path, monkeypatch
) -> None:
    with FakeOllama() as moved:
        # The person edited config.toml to the new port; the shell still says the old one.
        monkeypatch.setenv("OLLAMA_HOST", OLD)
        app = make_app(launch(home, tmp_path, f'ollama_host = "{moved.url}"\n'))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            app.choose_model(address=True)  # the palette's "Model server address…"
            picker = await picker_failed(pilot)
            assert text(picker, "#server-source") == (
                f"Model server: {OLD} (from OLLAMA_HOST in the environment)"
            )
            conflict = picker.query_one("#server-conflict", Static)
            assert conflict.display
            assert text(picker, "#server-conflict") == (
                f"! config.toml says {moved.url}, and OLLAMA_HOST in the environment wins over it"
            )
            picker.query_one(Input).value = moved.url
            await pilot.press("enter")
            await wait_until(pilot, lambda: picker.names, what="the models")
            assert text(picker, "#server-conflict") == (
                f"! OLLAMA_HOST={OLD} in the environment wins again at the next launch"
                f" (unset it to keep {moved.url})"
            )
            status = app.chat_screen.query_one(StatusLine)
            await wait_until(pilot, lambda: status.online is True, what="online")


async def test_a_server_going_away_while_idle_is_noticed_at_the_next_probe(
    home, tui_env, tmp_path
) -> None:
    server = FakeOllama().start()
    try:
        app = make_app(launch(home, tmp_path, f'ollama_host = "{server.url}"\n'))
        now = [1000.0]
        app.prober.clock = lambda: now[0]
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            status = app.chat_screen.query_one(StatusLine)
            await wait_until(pilot, lambda: status.online is True, what="online")
            server.stop()
            app.probe_tick()
            assert status.online is True  # not due yet: a good probe waits a few seconds
            now[0] += 5.0
            app.probe_tick()
            await wait_until(pilot, lambda: status.online is False, what="noticed")
            assert "The model went away" in [n.title for n in app._notifications]
    finally:
        server.stop()
