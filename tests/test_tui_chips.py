"""Pilot tests of context chips: the picker (ctrl+t) searching all five kinds as you type,
chips held for a new conversation and attached on the first send, removing a focused chip
with delete/backspace or a click, and ctrl+r removing the last one."""

from __future__ import annotations

import pytest

from sadie_tui.engine.chips import list_chips
from sadie_tui.tui.screens.chat import ChatScreen
from sadie_tui.tui.screens.chip_picker import ChipPickerScreen
from sadie_tui.tui.widgets.chip_bar import ChipBar, ChipView
from sadie_tui.tui.widgets.prompt import PromptInput
from tests.support.tui import (
    make_app,
    seed_conversations,
    wait_until,
)

pytest_plugins = ["tests.support.tui"]
pytestmark = pytest.mark.asyncio


async def open_picker(pilot) -> ChipPickerScreen:  # type: ignore[no-untyped-def]
    app = pilot.app
    await wait_until(pilot, app.memory_ready.is_set)
    await pilot.press("ctrl+t")
    picker = await wait_until(
        pilot, lambda: isinstance(app.screen, ChipPickerScreen) and app.screen
    )
    await wait_until(pilot, lambda: picker.candidates, what="the first candidates")
    return picker


async def pick(pilot, query: str, kind: str) -> None:  # type: ignore[no-untyped-def]
    picker = await open_picker(pilot)
    await pilot.press(*query)
    await wait_until(
        pilot,
        lambda: (
            picker.candidates
            and any(c.kind == kind for c in picker.candidates)
            and picker.query_one("Input").value == query
        ),
        what=f"a {kind} candidate for {query!r}",
    )
    index = next(i for i, c in enumerate(picker.candidates) if c.kind == kind)
    for _ in range(index):
        await pilot.press("down")
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ChatScreen))


def bar(app) -> ChipBar:  # type: ignore[no-untyped-def]
    return app.chat_screen.query_one(ChipBar)


async def test_the_picker_searches_all_kinds_as_you_type(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        picker = await open_picker(pilot)
        kinds = {c.kind for c in picker.candidates}
        assert kinds == {"wiki", "source", "brief", "graph_entity", "discourse"}
        await pilot.press(*"maya")
        await wait_until(
            pilot,
            lambda: (
                picker.query_one("Input").value == "maya"
                and all("maya" in (c.label + c.snippet).lower() for c in picker.candidates)
            ),
        )
        found = {c.kind for c in picker.candidates}
        assert {"wiki", "source", "discourse"} <= found
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))
        assert bar(app).items == []


async def test_chips_wait_for_the_first_send_then_go_into_the_briefing(ctx, ollama) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await pick(pilot, "maya", "wiki")
        await wait_until(pilot, lambda: bar(app).items)
        item = bar(app).items[0]
        assert (item.kind, item.label, item.chip_id) == ("wiki", "Maya", None)
        view = bar(app).query_one(ChipView)
        assert "wiki" in str(view.render()) and "Maya" in str(view.render())
        assert "younger sister" in str(view.tooltip)
        prompt = app.chat_screen.query_one(PromptInput)
        prompt.focus()
        prompt.insert("What is my sister like?")
        await pilot.press("enter")
        chat = app.chat_screen
        await wait_until(
            pilot,
            lambda: (
                chat.conversation_id
                and not chat.streaming
                and chat.reply
                and chat.reply.status != "streaming"
            ),
        )
        chips = list_chips(app.session.db, chat.conversation_id)
        assert [(c.kind, c.label) for c in chips] == [("wiki", "Maya")]
        await wait_until(pilot, lambda: bar(app).items and bar(app).items[0].chip_id == chips[0].id)
        briefing = " ".join(m["content"] for m in ollama.requests[0]["messages"])
        assert "younger sister" in briefing


async def test_delete_or_backspace_on_a_focused_chip_removes_it(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await pick(pilot, "maya", "wiki")
        await pick(pilot, "pottery", "source")
        await wait_until(pilot, lambda: len(bar(app).items) == 2)
        views = list(bar(app).query(ChipView))
        views[0].focus()
        await pilot.press("delete")
        await wait_until(pilot, lambda: [i.kind for i in bar(app).items] == ["source"])
        bar(app).query_one(ChipView).focus()
        await pilot.press("backspace")
        await wait_until(pilot, lambda: bar(app).items == [])
        assert bar(app).query_one("#chip-hint").display


async def test_clicking_a_chip_removes_it(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await pick(pilot, "maya", "wiki")
        await wait_until(pilot, lambda: bar(app).query(ChipView))
        await pilot.click(ChipView)
        await wait_until(pilot, lambda: bar(app).items == [])


async def test_ctrl_r_removes_the_last_chip_of_a_saved_conversation(ctx, ollama) -> None:
    ids = seed_conversations(ctx.home)
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        await app.chat_screen.open_conversation(ids["Pottery disasters"])
        cid = ids["Pottery disasters"]
        await wait_until(pilot, lambda: app.chat_screen.conversation_id == cid)
        await pick(pilot, "maya", "wiki")
        await pick(pilot, "week", "brief")
        await wait_until(pilot, lambda: len(list_chips(app.session.db, cid)) == 2)
        await wait_until(pilot, lambda: len(bar(app).items) == 2)
        assert all(i.chip_id for i in bar(app).items)
        await pilot.press("ctrl+r")
        await wait_until(
            pilot, lambda: [c.kind for c in list_chips(app.session.db, cid)] == ["wiki"]
        )
        await wait_until(pilot, lambda: [i.kind for i in bar(app).items] == ["wiki"])
        bar(app).query_one(ChipView).focus()
        await pilot.press("delete")
        await wait_until(pilot, lambda: list_chips(app.session.db, cid) == [])
        await pilot.press("ctrl+r")  # nothing left: says so
        await wait_until(
            pilot, lambda: any("No context" in str(n.message) for n in app._notifications)
        )


async def test_chips_come_back_with_their_conversation(ctx) -> None:
    ids = seed_conversations(ctx.home)
    cid = ids["Maya's move to Leeds"]
    from sadie_tui.engine.chips import add_chip
    from sadie_tui.engine.memory import Memory

    with Memory.open(ctx.home) as memory:
        add_chip(memory.db, cid, "wiki", "Maya")
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        await app.chat_screen.open_conversation(cid)
        await wait_until(pilot, lambda: [i.label for i in bar(app).items] == ["Maya"])
