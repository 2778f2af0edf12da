"""Issue #34, item 8: looks. The header's register name shows whole for `encouraging` (the
longest); in sadie-light every register's colour reads on the bars it is drawn on;
pinning a row during a browser search leaves no empty "Recent" heading; the footer says
"Unpin" on a pinned row, "Pin" on another."""

from __future__ import annotations

import pytest
from rich.cells import cell_len
from textual.app import App
from textual.color import Color
from textual.widgets._footer import FooterKey

from sadie_tui.engine import conversations as conv
from sadie_tui.engine.emotions import EMOTIONS
from sadie_tui.tui.registers import colour
from sadie_tui.tui.screens.conversations import ConversationList
from sadie_tui.tui.themes import load_themes
from sadie_tui.tui.widgets.sigil import EmotionSigil
from tests.support.tui import make_app, wait_until
from tests.test_tui_browser import open_browser, seeded, select, titles

pytest_plugins = ["tests.support.tui"]
pytestmark = pytest.mark.asyncio
__all__ = ["seeded"]  # the browser tests' fixture, used here too


class SigilHost(App[None]):
    def compose(self):
        yield EmotionSigil()


async def test_the_header_names_every_register_whole() -> None:
    app = SigilHost()
    async with app.run_test(size=(80, 3)) as pilot:
        sigil = app.query_one(EmotionSigil)
        for emotion in ("curious", "encouraging", "playful", "celebrating"):
            sigil.emotion = emotion
            await wait_until(
                pilot,
                lambda e=emotion: sigil.size.width >= cell_len(f"? {e}"),
                timeout=10,
                what=f"the sigil wide enough for {emotion}",
            )
            line = "".join(s.text for s in sigil.render_line(0))
            assert emotion in line, (emotion, line)


def _luminance(c: Color) -> float:
    def channel(v: int) -> float:
        x = v / 255
        return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)


def contrast(a: Color, b: Color) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


async def test_every_register_reads_on_sadie_light() -> None:
    themes, _ = load_themes()
    light = next(t for t in themes if t.name == "sadie-light")
    for emotion in EMOTIONS:
        ink = Color.parse(colour(emotion, dark=light.dark) or "")
        for bar in (light.panel, light.background, light.surface):
            ratio = contrast(ink, Color.parse(bar or ""))
            assert ratio >= 4.5, (emotion, bar, round(ratio, 2))


async def test_pinning_during_a_search_leaves_no_empty_heading(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        await pilot.press("slash", *"refactor")
        await wait_until(pilot, lambda: len(browser.conversations) == 1, what="the search")
        await pilot.press("enter")  # to the list, the search kept
        await pilot.press("p")
        await wait_until(
            pilot, lambda: conv.get_conversation(app.session.db, seeded["The refactor"]).pinned
        )
        await wait_until(pilot, lambda: titles(browser)[:1] == ["Pinned"], what="the heading")
        assert "Recent" not in titles(browser)


def _footer_words(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [k.description for k in app.screen.query(FooterKey)]


async def test_the_footer_says_unpin_on_a_pinned_row(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(140, 30)) as pilot:
        browser = await open_browser(pilot)
        select(browser, seeded["Maya's move to Leeds"])  # the pinned one
        await wait_until(pilot, lambda: "Unpin" in _footer_words(app), what="Unpin")
        assert "Pin" not in _footer_words(app)
        select(browser, seeded["Pottery disasters"])
        await wait_until(pilot, lambda: "Pin" in _footer_words(app), what="Pin")
        assert "Unpin" not in _footer_words(app)
        assert isinstance(app.focused, ConversationList)
