"""Issue #34, item 6: small terminals. F4's address box in sight and focused first at 60×20;
the footer never cuts a key at 60 columns (also after a resize from 80); the chip line is
never cut mid-word at 100 columns, beside the sidebar. Pilot on the real engine and the
project's Ollama-protocol server (the offline notice is in ``tests/test_tmux_first_hour.py``)."""

from __future__ import annotations

import pytest
from rich.cells import cell_len
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from sadie_tui.commands.context import Context
from sadie_tui.config import load_settings
from sadie_tui.tui.screens.model_picker import ModelPicker
from sadie_tui.tui.widgets.chip_bar import ChipBar
from sadie_tui.tui.widgets.fitting import FittingFooter, FittingLine, key_width
from tests.support.tui import make_app, ready, wait_until

pytest_plugins = ["tests.support.tui"]
pytestmark = pytest.mark.asyncio

OLD = "http://127.0.0.1:9"  # nothing listens there


async def test_f4_address_box_is_in_sight_and_focused_at_60x20(
    home, tui_env, tmp_path, monkeypatch
) -> None:
    # The shell and config.toml disagree: the dialog's longest form (a conflict line too).
    monkeypatch.setenv("OLLAMA_HOST", OLD)
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('ollama_host = "http://127.0.0.1:10"\n', encoding="utf-8")
    app = make_app(Context(home=home, settings=load_settings(config)))
    async with app.run_test(size=(60, 20)) as pilot:
        await ready(pilot)
        await pilot.press("f4")
        picker = await wait_until(
            pilot, lambda: isinstance(app.screen, ModelPicker) and app.screen
        )
        box = picker.query_one("#server-address", Input)
        assert app.focused is box  # from the start, not the (empty) list
        await wait_until(pilot, lambda: picker.failed, what="the listing to fail")
        assert app.focused is box
        region = box.region
        assert region.height == 3 and region.bottom <= 20, region
        widget, _ = app.screen.get_widget_at(region.x + 3, region.y + 1)
        assert widget is box  # drawn there, not clipped by the dialog
        await pilot.press("ctrl+u", *"http://127.0.0.1:11")
        assert box.value == "http://127.0.0.1:11"


def _fits(footer: FittingFooter, width: int) -> bool:
    keys = list(footer.query(FooterKey))
    return bool(keys) and sum(key_width(k) for k in keys) <= width - 2


async def test_the_footer_fits_after_a_resize_from_80_to_60(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        footer = app.chat_screen.query_one(FittingFooter)
        await wait_until(pilot, lambda: _fits(footer, 80), what="the footer at 80")
        await pilot.resize_terminal(60, 20)
        await wait_until(pilot, lambda: _fits(footer, 60), what="the footer fitted to 60")
        actions = [k.action for k in footer.query(FooterKey)]
        assert "app.help" in actions or "help" in actions


async def test_the_chip_line_is_not_cut_beside_the_sidebar_at_100(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        bar = app.chat_screen.query_one(ChipBar)
        hint = bar.query_one("#chip-hint", FittingLine)
        await wait_until(pilot, lambda: hint.size.width > 0, what="the chip line drawn")
        shown = str(hint.render())
        assert shown in (hint.long, hint.short)
        assert cell_len(shown) <= bar.content_size.width, (shown, bar.content_size)
