"""Pilot tests of the conversation browser (ctrl+l): listing order, open, pin, archive, rename,
forget, export, search and type-ahead, the highlight and escape, previews and search snippets,
on a real memory with seeded conversations; unit tests of the previews' pure functions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import pytest
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from sadie_tui.engine import conversations as conv
from sadie_tui.engine.operations import ImportConversation, ShowConversation
from sadie_tui.engine.prompt import Briefing, Excerpt
from sadie_tui.engine.reasoners.offline import compose
from sadie_tui.tui import previews
from sadie_tui.tui.commands import system_commands
from sadie_tui.tui.previews import Preview
from sadie_tui.tui.screens.chat import ChatScreen
from sadie_tui.tui.screens.conversations import (
    MATCH_STYLE,
    BrowserScreen,
    ConversationList,
    conversation_prompt,
)
from sadie_tui.tui.screens.dialogs import Confirm, ExportDialog, TextPrompt
from sadie_tui.tui.widgets.transcript import AssistantMessage, Transcript, UserMessage
from tests.support.tui import (
    make_app,
    make_context,
    seed_conversations,
    wait_until,
)

pytest_plugins = ["tests.support.tui"]


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


def _flag_the_date(app, cid: str) -> None:  # type: ignore[no-untyped-def]
    """The Maya reply's date as the app flags it: a detail no note holds."""
    reply = "On 2026-03-20 you wrote that you did not know what to say."
    span = {"text": "2026-03-20", "start": 3, "end": 13, "kind": "date"}
    app.session.db.execute(
        "UPDATE messages SET metadata = ? WHERE conversation_id = ? AND content = ?",
        [json.dumps({"unsupported": [span]}), cid, reply],
    )


async def test_e_asks_where_and_keeps_the_warnings(ctx, seeded, tmp_path, monkeypatch) -> None:
    """Issue #28, item 11: `e` in the browser asks where (a default, editable), writes there,
    says where it went, refuses an existing file unless confirmed, keeps a bad place in the
    dialog with one line, and the export keeps the reply's "details not found" marks."""
    monkeypatch.setenv("HOME", str(tmp_path / "person"))
    (tmp_path / "person" / "Documents").mkdir(parents=True)
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        cid = seeded["Maya's move to Leeds"]
        _flag_the_date(app, cid)
        select(browser, cid)
        await pilot.press("e")
        dialog = await wait_until(
            pilot, lambda: isinstance(app.screen, ExportDialog) and app.screen
        )
        box = dialog.query_one("#export-path", Input)
        documents = tmp_path / "person" / "Documents"
        assert box.value.startswith(f"{documents}/2026-04-05-maya-s-move-to-leeds-")
        assert box.value.endswith(".md")

        # A folder that is not there: one line, the dialog stays, nothing written.
        box.value = str(tmp_path / "nowhere" / "maya.md")
        await pilot.press("enter")
        await wait_until(pilot, lambda: dialog.error)
        assert dialog.error == f"no such folder: {tmp_path / 'nowhere'}"
        assert app.screen is dialog and not (tmp_path / "nowhere").exists()

        # Somewhere chosen: written there, and the notice gives the full path.
        target = tmp_path / "out" / "maya.md"
        target.parent.mkdir()
        box.value = str(target)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is browser, what="the dialog closed")
        text = target.read_text(encoding="utf-8")
        assert text.startswith("# Maya's move to Leeds")
        assert "On <u>2026-03-20</u> you wrote" in text
        assert "⚠ 1 detail not found in your notes (underlined): 2026-03-20" in text
        await wait_until(
            pilot, lambda: any(str(target) in str(n.message) for n in app._notifications)
        )
        assert not (ctx.home / "exports").exists()  # never silently into the memory's home

        # The same file again: refused unless confirmed.
        target.write_text("mine", encoding="utf-8")
        await pilot.press("e")
        dialog = await wait_until(
            pilot, lambda: isinstance(app.screen, ExportDialog) and app.screen
        )
        dialog.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is dialog and dialog.error)
        assert dialog.error == f"{target} exists: not replaced (change the name)"
        assert target.read_text(encoding="utf-8") == "mine"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        await wait_until(pilot, lambda: app.screen is browser)
        assert "⚠ 1 detail not found" in target.read_text(encoding="utf-8")

        # .json: the JSON export, with the marks, which imports again with them.
        await pilot.press("e")
        dialog = await wait_until(
            pilot, lambda: isinstance(app.screen, ExportDialog) and app.screen
        )
        dialog.query_one("#export-path", Input).value = str(tmp_path / "out")  # a folder
        await pilot.press("enter")  # takes the default name
        await wait_until(pilot, lambda: app.screen is browser)
        written = next((tmp_path / "out").glob("2026-04-05-maya-*.md"))
        assert "⚠ 1 detail not found" in written.read_text(encoding="utf-8")
        await pilot.press("e")
        dialog = await wait_until(
            pilot, lambda: isinstance(app.screen, ExportDialog) and app.screen
        )
        dialog.query_one("#export-path", Input).value = str(tmp_path / "out" / "maya.json")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is browser)
        data = json.loads((tmp_path / "out" / "maya.json").read_text(encoding="utf-8"))
        reply = data["messages"][1]
        assert reply["metadata"]["unsupported"][0]["text"] == "2026-03-20"
        copy = app.session.call(ImportConversation(json.dumps(data)))
        kept = app.session.call(ShowConversation(copy.id)).messages[1].metadata["unsupported"]
        assert [s["text"] for s in kept] == ["2026-03-20"]


async def test_a_place_that_is_a_file_is_one_line(ctx, seeded, tmp_path) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        select(browser, seeded["Pottery disasters"])
        await pilot.press("e")
        dialog = await wait_until(
            pilot, lambda: isinstance(app.screen, ExportDialog) and app.screen
        )
        (tmp_path / "a-file").write_text("", encoding="utf-8")
        dialog.query_one("#export-path", Input).value = str(tmp_path / "a-file" / "x.md")
        await pilot.press("enter")
        await wait_until(pilot, lambda: dialog.error)
        assert dialog.error == f"no such folder: {tmp_path / 'a-file'}"
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is browser)
        assert not [n for n in app._notifications if n.title == "Exported"]


async def test_a_path_ending_in_a_separator_is_a_folder(ctx, seeded, tmp_path) -> None:
    """Issue #34, item 4: `/tmp/x/exports/` names a folder. Absent, it is the one line (no
    file called `exports`); present, the export takes the offered name inside it."""
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        select(browser, seeded["Pottery disasters"])
        await pilot.press("e")
        dialog = await wait_until(
            pilot, lambda: isinstance(app.screen, ExportDialog) and app.screen
        )
        (tmp_path / "x").mkdir()
        folder = tmp_path / "x" / "exports"
        dialog.query_one("#export-path", Input).value = f"{folder}/"
        await pilot.press("enter")
        await wait_until(pilot, lambda: dialog.error)
        assert dialog.error == f"no such folder: {folder}"
        assert app.screen is dialog and not folder.exists()
        folder.mkdir()
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is browser, what="the dialog closed")
        assert [p.name for p in folder.iterdir()] == [dialog.default.name]


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


def highlighted_title(browser: BrowserScreen) -> str | None:
    c = browser.selected()
    return c.title if c is not None else None


def footer_keys(screen) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {k.key: k.description for k in screen.query(FooterKey)}


async def test_a_row_is_highlighted_from_a_new_conversation_and_after_t(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)  # from a new conversation: the first row
        await wait_until(pilot, lambda: highlighted_title(browser) == "Maya's move to Leeds")
        await pilot.press("e")  # and e exports it, no "Choose a conversation first"
        await wait_until(pilot, lambda: isinstance(app.screen, ExportDialog))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is browser)
        await pilot.press("t")
        await wait_until(pilot, lambda: browser.archived and highlighted_title(browser))
        assert highlighted_title(browser) == "Old plans"
        await pilot.press("a")  # restored: the archive is empty now
        await wait_until(pilot, lambda: not browser.conversations)
        await pilot.press("t")
        await wait_until(pilot, lambda: not browser.archived and highlighted_title(browser))
        assert highlighted_title(browser) == "Maya's move to Leeds"  # where this tab was left
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: app.chat_screen.conversation_id == seeded["Maya's move to Leeds"]
        )
        assert not any("Choose" in str(n.message) for n in app._notifications)


async def test_opened_from_a_conversation_its_row_is_highlighted(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        await app.chat_screen.open_conversation(seeded["The refactor"])
        await wait_until(pilot, lambda: app.chat_screen.conversation_id == seeded["The refactor"])
        browser = await open_browser(pilot)
        await wait_until(pilot, lambda: highlighted_title(browser) == "The refactor")


async def test_escape_leaves_the_search_box_then_clears_it_then_goes_back(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        search = browser.query_one("#browser-search")
        await pilot.press(*"mov")
        await wait_until(pilot, lambda: len(browser.conversations) == 1)
        assert app.focused is search
        await wait_until(pilot, lambda: footer_keys(browser).get("escape") == "To the list")
        await pilot.press("escape")  # to the list, the search kept
        assert search.value == "mov" and isinstance(app.focused, ConversationList)
        await wait_until(pilot, lambda: footer_keys(browser).get("escape") == "Clear search")
        await pilot.press("escape")
        assert search.value == "" and app.screen is browser
        await wait_until(pilot, lambda: len(browser.conversations) == 3)
        await wait_until(pilot, lambda: footer_keys(browser).get("escape") == "Back")
        await pilot.press("escape")  # no search: back to the conversation
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))


async def test_the_highlight_stays_in_place_after_a_row_moves_or_leaves(ctx, seeded) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        assert [c.title for c in browser.conversations] == [
            "Maya's move to Leeds",
            "Pottery disasters",
            "The refactor",
        ]
        select(browser, seeded["The refactor"])
        await pilot.press("p")  # pinned, it moves up: the third row is Pottery now
        await wait_until(pilot, lambda: "The refactor" in titles(browser)[2])
        assert highlighted_title(browser) == "Pottery disasters"
        await pilot.press("up")
        assert highlighted_title(browser) == "The refactor"
        await pilot.press("a")  # archived from the middle: the next row takes its place
        await wait_until(pilot, lambda: not any("The refactor" in r for r in titles(browser)))
        assert highlighted_title(browser) == "Pottery disasters"
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")  # the last row forgotten: the one before it
        await wait_until(pilot, lambda: not any("Pottery" in r for r in titles(browser)))
        assert highlighted_title(browser) == "Maya's move to Leeds"


async def test_the_footer_says_restore_in_the_archived_tab(home, ollama) -> None:
    seed_conversations(home)
    ctx = make_context(home, ollama.url, keymap={"browser.archive": "x"})
    app = make_app(ctx)
    async with app.run_test(size=(120, 30)) as pilot:
        browser = await open_browser(pilot)
        await wait_until(pilot, lambda: footer_keys(browser).get("x") == "Archive")
        await pilot.press("t")
        await wait_until(pilot, lambda: footer_keys(browser).get("x") == "Restore")
        assert "a" not in footer_keys(browser)  # one remap moved both
        palette = [c.title for c in system_commands(app, browser)]
        assert "Restore" in palette and "Archive" not in palette
        await wait_until(pilot, lambda: highlighted_title(browser) == "Old plans")
        await pilot.press("x")
        await wait_until(pilot, lambda: not browser.conversations)
        restored = [c for c in conv.list_conversations(app.session.db) if c.title == "Old plans"]
        assert restored and restored[0].archived_at is None
        await pilot.press("f1")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen")
        rows = app.screen.bindings_rows
        assert [(r[1], r[3]) for r in rows if r[3] == "browser.archive"] == [
            ("Restore", "browser.archive")
        ]


async def test_previews_are_plain_text_and_searches_show_the_match(ctx, seeded) -> None:
    from sadie_tui.engine.memory import Memory

    app_ctx = ctx
    with Memory.open(ctx.home) as memory:
        c = conv.create_conversation(memory.db, "Notes on the launch", persona="friend")
        conv.add_message(memory.db, c.id, "user", "How did the **launch** go?")
        reply = "# The launch\n\n- It went **well**, see [the retro](https://example.com/r).\n"
        conv.add_message(memory.db, c.id, "assistant", reply)
        summary = conv.summary_from_first_exchange("How did the **launch** go?", reply)
        conv.set_state(memory.db, c.id, summary=summary)
    app = make_app(app_ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = await open_browser(pilot)
        row = next(r for r in prompts(browser) if r.plain.startswith("  Notes on the launch"))
        preview = row.plain.split("\n")[1].strip()
        assert preview == "How did the launch go? → The launch · It went well, see the retro."
        await pilot.press(*"bottleneck")  # only in a reply's text
        await wait_until(
            pilot, lambda: [c.title for c in browser.conversations] == ["The refactor"]
        )
        (row,) = prompts(browser)
        line = row.plain.split("\n")[1]
        assert line.strip() == "sadie: Priya said the review queue is the real bottleneck."
        assert emphasised(row) == ["bottleneck"]


def prompts(browser: BrowserScreen) -> list:  # type: ignore[type-arg]
    listing = browser.query_one(ConversationList)
    return [
        listing.get_option_at_index(i).prompt
        for i in range(listing.option_count)
        if not listing.get_option_at_index(i).disabled
    ]


def emphasised(text) -> list[str]:  # type: ignore[no-untyped-def]
    return [text.plain[s.start : s.end] for s in text.spans if str(s.style) == MATCH_STYLE]


async def test_an_offline_reply_does_not_become_the_preview(home, ollama) -> None:
    ctx = make_context(home, ollama.url, model="llama-nope:7b")  # not pulled: offline
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        chat = app.chat_screen
        chat.query_one("PromptInput").insert("What about the river walk with Maya?")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: chat.reply and chat.reply.status != "streaming" and not chat.streaming
        )
        assert previews.OFFLINE_OPENING in chat.reply.text
        browser = await open_browser(pilot)
        (row,) = prompts(browser)
        preview = row.plain.split("\n")[1]
        assert previews.OFFLINE_OPENING not in preview
        assert preview.strip().startswith("What about the river walk with Maya? → On 2026-03-20")
        assert "Walked by the river" in preview


# -- the previews' pure functions -----------------------------------------------------------


def test_plain_text_drops_markdown_marks() -> None:
    md = (
        "## A heading\n\n"
        "> quoted **bold** and *italic* and _under_ and ~~gone~~\n"
        "- item with [a link](https://x.y) and ![alt text](img.png)\n"
        "1. numbered `code **kept**`\n"
        "* [x] done task\n"
        "---\n"
        "```python\nprint('hi')\n```\n"
        "snake_case_name and 2*3*4 stay, \\*escaped\\* too <https://auto.link>\n"
        "| a | b |\n|---|---|\n"
    )
    assert previews.plain_lines(md) == [
        "A heading",
        "quoted bold and italic and under and gone",
        "item with a link and alt text",
        "numbered code **kept**",
        "done task",
        "print('hi')",
        "snake_case_name and 2*3*4 stay, *escaped* too https://auto.link",
        "| a | b |",
    ]
    assert previews.plain_text("**Maya** is\n\nmoving") == "Maya is moving"
    assert previews.plain_text("") == ""


def offline_reply(*, quotes: bool = True, reason: str = "") -> str:
    excerpt = Excerpt(
        "3f7f7a68-0b1c-4d2e-9f00-1234567890ab",
        "2026-03-20",
        "Walk by the river",
        "Walked by the river with Maya after lunch.",
    )
    briefing = Briefing("", [{"role": "user", "content": "x"}], [excerpt] if quotes else [], {})
    return compose(briefing, "river walk Maya" if quotes else "zzz", reason).split("@@CITATIONS@@")[
        0
    ]


def test_the_offline_banner_is_not_a_preview() -> None:
    for reason in ("", "Ollama is not reachable at http://127.0.0.1:11434: connection refused"):
        reply = offline_reply(reason=reason)
        assert previews.is_offline(reply)
        line = previews.offline_reply_line(reply)
        assert (
            line
            == "On 2026-03-20, in “Walk by the river”: “Walked by the river with Maya after lunch.”"
        )
        summary = conv.summary_from_first_exchange("What about Maya?", reply)
        shown = previews.summary_preview(summary)  # what is left of the quote, if anything
        assert shown.startswith("What about Maya?") and "reachable" not in shown
        assert "here is what" not in shown and "closest" not in shown
    nothing = offline_reply(quotes=False)
    assert previews.offline_reply_line(nothing) == ""
    assert previews.summary_preview(conv.summary_from_first_exchange("", nothing)) == ""
    assert previews.summary_preview("Hi → **Hello** there") == "Hi → Hello there"
    assert previews.summary_preview("Q → # Plan - first - second") == ("Q → Plan · first · second")
    assert previews.summary_preview("Q → 5 - 3 is 2") == "Q → 5 - 3 is 2"


def test_find_and_snippet() -> None:
    assert previews.find("The Review queue", "review QUEUE") == (4, 16)
    assert previews.find("the queue was long", "review queue") == (4, 9)  # a word of it
    assert previews.find("nothing here", "zzz") is None
    assert previews.find("anything", "  ") is None
    text = "one two three four five six seven eight nine ten eleven bottleneck at the end"
    span = previews.find(text, "bottleneck")
    assert span is not None
    assert previews.snippet(text, span, room=len(text)) == Preview(text, span)  # it fits
    shown = previews.snippet(text, span, room=40)
    assert shown.text.startswith("…") and shown.text.endswith("bottleneck at the end")
    assert shown.span is not None
    assert shown.text[shown.span[0] : shown.span[1]] == "bottleneck"
    assert shown.text == "…nine ten eleven bottleneck at the end"  # cut at a word boundary
    assert len(shown.text) <= 40
    tight = previews.snippet(text, span, room=12)  # the match itself still shows
    assert tight.span is not None and tight.text[tight.span[0] : tight.span[1]] == "bottleneck"


@dataclass
class Row:
    id: str
    title: str
    summary: str


@dataclass
class Said:
    role: str
    content: str


def test_describe_reads_a_bounded_number_of_conversations() -> None:
    rows = [Row(str(n), f"Chat {n}", f"Question {n} → Answer {n}") for n in range(10)]
    read: list[str] = []

    def messages(cid: str) -> list[Said]:
        read.append(cid)
        return [Said("user", "hello"), Said("assistant", f"the needle is in {cid}")]

    found = previews.describe(rows, "needle", messages, lookups=3)
    assert read == ["0", "1", "2"]
    assert found["0"] == Preview("sadie: the needle is in 0", (11, 17))
    long = [Row("l", "Long", "")]
    text = "word " * 30 + "needle"
    (shown,) = previews.describe(long, "needle", lambda _: [Said("user", text)], room=40).values()
    assert shown.text.startswith("you: …") and shown.text.endswith("needle")
    assert len(shown.text) <= 40
    assert found["9"] == Preview("Question 9 → Answer 9")  # past the bound: the summary
    read.clear()
    found = previews.describe(rows, "answer 4", messages, lookups=3)
    assert read == []  # the summaries hold it
    assert found["4"].span == (13, 21)
    assert (
        previews.describe(rows, "", messages) == {r.id: Preview(r.summary) for r in rows}
        and read == []
    )
    cancelled = previews.describe(rows, "needle", messages, cancelled=lambda: True)
    assert cancelled == {}


def test_a_row_emphasises_the_match_in_its_title() -> None:
    c = conv.Conversation(
        "id",
        "The refactor",
        "",
        "focused",
        None,
        False,
        None,
        datetime(2026, 4, 1),
        datetime(2026, 4, 1),
        2,
    )
    text = conversation_prompt(c, datetime(2026, 4, 5), search="REFACTOR")
    assert emphasised(text) == ["refactor"]
    assert "\n" not in text.plain  # no preview line for an empty summary
