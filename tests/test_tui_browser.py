"""Pilot tests of the conversation browser (ctrl+l): listing order, open, pin, archive, rename,
forget, export, search and type-ahead, on a real memory with seeded conversations."""

from __future__ import annotations

import pytest

from sadie_tui.engine import conversations as conv
from sadie_tui.tui.screens.chat import ChatScreen
from sadie_tui.tui.screens.conversations import BrowserScreen, ConversationList
from sadie_tui.tui.screens.dialogs import Confirm, TextPrompt
from sadie_tui.tui.widgets.transcript import AssistantMessage, Transcript, UserMessage
from tests.support.tui import (
    make_app,
    seed_conversations,
    wait_until,
)

pytest_plugins = ["tests.support.tui"]
pytestmark = pytest.mark.asyncio


@pytest.fixture
def seeded(home):  # type: ignore[no-untyped-def]
    return seed_conversations(home)


async def open_browser(pilot) -> BrowserScreen:  # type: ignore[no-untyped-def]
    app = pilot.app
    await wait_until(pilot, app.memory_ready.is_set)
    await pilot.press("ctrl+l")
    browser = await wait_until(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen)
    await wait_until(pilot, lambda: browser.conversations, what="the listing")
    return browser


def titles(browser: BrowserScreen) -> list[str]:
    listing = browser.query_one(ConversationList)
    return [
        str(listing.get_option_at_index(i).prompt).split("\n")[0]
        for i in range(listing.option_count)
    ]


def select(browser: BrowserScreen, conversation_id: str) -> None:
    listing = browser.query_one(ConversationList)
    ids = [listing.get_option_at_index(i).id for i in range(listing.option_count)]
    listing.highlighted = ids.index(conversation_id)
    listing.focus()


async def test_pinned_first_then_recent_and_enter_opens(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        rows = titles(browser)
        assert rows[0] == "Pinned"
        assert "Maya's move to Leeds" in rows[1]
        assert rows[2] == "Recent"
        assert "Pottery disasters" in rows[3] and "The refactor" in rows[4]
        assert not any("Old plans" in r for r in rows)  # archived
        select(browser, seeded["Pottery disasters"])
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))
        chat = app.chat_screen
        await wait_until(pilot, lambda: len(chat.query_one(Transcript).messages) == 2)
        assert chat.conversation_id == seeded["Pottery disasters"]
        assert chat.title_text == "Pottery disasters"
        assert isinstance(chat.query_one(Transcript).messages[1], AssistantMessage)
        assert "bowl collapsed" in chat.query_one(Transcript).messages[1].text


async def test_p_pins_and_unpins(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        select(browser, seeded["The refactor"])
        await pilot.press("p")
        await wait_until(
            pilot, lambda: conv.get_conversation(app.session.db, seeded["The refactor"]).pinned
        )
        await wait_until(pilot, lambda: sum("The refactor" in r for r in titles(browser)[:3]) == 1)
        select(browser, seeded["The refactor"])
        await pilot.press("p")
        await wait_until(
            pilot, lambda: not conv.get_conversation(app.session.db, seeded["The refactor"]).pinned
        )


async def test_a_archives_t_shows_the_archive_and_a_restores(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        cid = seeded["Pottery disasters"]
        select(browser, cid)
        await pilot.press("a")
        await wait_until(pilot, lambda: not any("Pottery" in r for r in titles(browser)))
        assert conv.get_conversation(app.session.db, cid).archived_at is not None
        await pilot.press("t")
        await wait_until(
            pilot, lambda: browser.archived and any("Pottery" in r for r in titles(browser))
        )
        assert any("Old plans" in r for r in titles(browser))
        select(browser, cid)
        await pilot.press("a")
        await wait_until(
            pilot, lambda: conv.get_conversation(app.session.db, cid).archived_at is None
        )
        await pilot.press("t")
        await wait_until(
            pilot, lambda: not browser.archived and any("Pottery" in r for r in titles(browser))
        )


async def test_r_renames_in_a_dialog(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        select(browser, seeded["The refactor"])
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPrompt))
        assert app.screen.query_one("Input").value == "The refactor"
        await pilot.press(*"Auth work", "enter")  # the old title is selected: typing replaces it
        await wait_until(
            pilot,
            lambda: (
                conv.get_conversation(app.session.db, seeded["The refactor"]).title == "Auth work"
            ),
        )
        await wait_until(pilot, lambda: any("Auth work" in r for r in titles(browser)))


async def test_d_forgets_after_confirmation(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        cid = seeded["The refactor"]
        select(browser, cid)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("n")  # cancelled: nothing happens
        await wait_until(pilot, lambda: app.screen is browser)
        assert conv.list_conversations(app.session.db, search="refactor")
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        await wait_until(pilot, lambda: not any("The refactor" in r for r in titles(browser)))
        assert not [c for c in conv.list_conversations(app.session.db) if c.id == cid]
        left = app.session.db.fetchone(
            "SELECT count(*) FROM messages WHERE conversation_id = ?", [cid]
        )
        assert left[0] == 0


async def test_e_exports_markdown_into_the_home(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        select(browser, seeded["Maya's move to Leeds"])
        await pilot.press("e")
        exports = ctx.home / "exports"
        await wait_until(pilot, lambda: exports.is_dir() and list(exports.glob("*.md")))
        path = next(exports.glob("*.md"))
        assert path.name.startswith("2026-04-05-maya-s-move-to-leeds-")
        text = path.read_text(encoding="utf-8")
        assert text.startswith("# Maya's move to Leeds")
        assert "Leeds in May" in text
        await wait_until(
            pilot, lambda: any(str(path) in str(n.message) for n in app._notifications)
        )


async def test_slash_searches_titles_and_message_text(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        await pilot.press("slash")
        assert app.focused is browser.query_one("#browser-search")
        await pilot.press(*"bottleneck")  # only in a reply's text
        await wait_until(pilot, lambda: len(browser.conversations) == 1)
        assert browser.conversations[0].title == "The refactor"
        await pilot.press("enter")  # back to the list
        assert isinstance(app.focused, ConversationList)
        await pilot.press("enter")  # opens it
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))
        await wait_until(pilot, lambda: app.chat_screen.conversation_id == seeded["The refactor"])


async def test_typing_on_the_list_goes_to_search(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        assert isinstance(app.focused, ConversationList)
        await pilot.press("m", "o", "v")  # "m" is no binding: it starts a search
        search = browser.query_one("#browser-search")
        assert search.value == "mov"
        await wait_until(
            pilot, lambda: [c.title for c in browser.conversations] == ["Maya's move to Leeds"]
        )
        empty = browser.query_one("#browser-empty")
        await pilot.press(*"zzz")
        await wait_until(pilot, lambda: browser.conversations == [] and empty.display)
        assert "zzz" in str(empty.render())


async def test_escape_goes_back_and_forgetting_the_open_one_starts_fresh(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        select(browser, seeded["Pottery disasters"])
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: app.chat_screen.conversation_id == seeded["Pottery disasters"]
        )
        await wait_until(pilot, lambda: app.chat_screen.query(UserMessage))
        browser = await open_browser(pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))
        assert app.chat_screen.conversation_id == seeded["Pottery disasters"]
        browser = await open_browser(pilot)
        select(browser, seeded["Pottery disasters"])
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        await wait_until(pilot, lambda: not any("Pottery" in r for r in titles(browser)))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))
        await wait_until(pilot, lambda: app.chat_screen.conversation_id is None)
        assert app.chat_screen.query_one(Transcript).messages == []


async def test_ctrl_n_in_the_browser_starts_a_new_conversation(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        select(browser, seeded["Pottery disasters"])
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.chat_screen.query(UserMessage))
        await open_browser(pilot)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))
        await wait_until(pilot, lambda: not app.chat_screen.query(UserMessage))
        assert app.chat_screen.conversation_id is None
