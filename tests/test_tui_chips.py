"""Pilot tests of context chips: the picker (ctrl+t) searching all six kinds as you type,
chips held for a new conversation and attached on the first send, removing a focused chip
with delete/backspace or a click, ctrl+r removing the last one, and a bar with more chips
than fit (whole chips only, hints for the rest, the keyboard reaching every one)."""

from __future__ import annotations

import pytest

from sadie_tui.engine.chips import list_chips
from sadie_tui.tui.screens.chat import ChatScreen
from sadie_tui.tui.screens.chip_picker import ChipPickerScreen
from sadie_tui.tui.widgets.chip_bar import (
    LABEL_MAX,
    ChipBar,
    ChipItem,
    ChipMore,
    ChipView,
    chip_text,
    chip_window,
)
from sadie_tui.tui.widgets.prompt import PromptInput
from tests.support.tui import (
    make_app,
    seed_conversations,
    wait_until,
)

pytest_plugins = ["tests.support.tui"]


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


# -- overflow: whole chips, hints for the rest ------------------------------------------------


async def attach_many(pilot, count: int) -> ChipBar:  # type: ignore[no-untyped-def]
    """``count`` chips held for a new conversation, attached the way the picker does."""
    app = pilot.app
    await wait_until(pilot, app.memory_ready.is_set)
    from sadie_tui.engine.chips import find_attachable

    picked: dict[str, object] = {}
    for query in ("maya", "pottery", "priya", "week", "river"):
        for c in find_attachable(app.session.db, query):
            picked.setdefault(f"{c.kind}:{c.ref_id}", c)
    assert len(picked) >= count
    for candidate in list(picked.values())[:count]:
        await app.chat_screen.attach(candidate)
    chips = bar(app)
    await wait_until(pilot, lambda: len(chips.query(ChipView)) == count)
    await pilot.pause()
    return chips


def check_whole(chips: ChipBar) -> tuple[list[ChipView], int]:
    """Every chip shown lies wholly inside the bar with its ✕; the hints count the others."""
    views = list(chips.query(ChipView))
    shown = [v for v in views if v.display]
    assert shown, "at least one chip shows"
    for view in shown:
        assert chips.content_region.contains_region(view.region), view.item.label
        assert str(view.render()).endswith(" ✕")
        assert len(str(view.render())) <= view.content_size.width
    hidden = len(views) - len(shown)
    counted = 0
    for hint in chips.query(ChipMore):
        if hint.display:
            assert chips.content_region.contains_region(hint.region)
            counted += int(str(hint.render()).split()[1 if "‹" in str(hint.render()) else 0])
    assert counted == hidden
    # One run, in order.
    indexes = [views.index(v) for v in shown]
    assert indexes == list(range(indexes[0], indexes[-1] + 1))
    return views, hidden


@pytest.mark.parametrize("width", [60, 120])
async def test_chips_that_do_not_fit_are_counted_never_cut(ctx, width) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(width, 30)) as pilot:
        chips = await attach_many(pilot, 6)
        views, hidden = check_whole(chips)
        assert hidden > 0
        assert views[-1].display  # at rest the latest chip shows
        # The keyboard walks every chip; the one focused always shows whole.
        start = next(i for i, v in enumerate(views) if v.display)
        views[start].focus()
        await wait_until(pilot, lambda: app.focused is views[start])
        for _ in range(start):
            await pilot.press("shift+tab")
            check_whole(chips)
            assert app.focused.display
        assert app.focused is views[0]
        seen = [app.focused]
        for _ in range(len(views) - 1):
            await pilot.press("tab")
            await wait_until(pilot, lambda: app.focused is not seen[-1])
            check_whole(chips)
            assert app.focused.display
            seen.append(app.focused)
        assert seen == views
        await pilot.press("left")
        assert app.focused is views[-2]
        await pilot.press("right", "tab")  # past the last chip: on to the next field
        await wait_until(pilot, lambda: not isinstance(app.focused, ChipView))
        await wait_until(pilot, lambda: views[-1].display)  # back at rest


async def test_removing_chips_brings_the_rest_back_into_view(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 30)) as pilot:
        chips = await attach_many(pilot, 5)
        views = list(chips.query(ChipView))
        assert not views[0].display  # the bar holds the latest chips
        views[-1].focus()
        await wait_until(pilot, lambda: app.focused is views[-1])
        await pilot.press("delete")
        await wait_until(pilot, lambda: len(chips.items) == 4)
        await wait_until(pilot, lambda: isinstance(app.focused, ChipView))
        assert app.focused.item == views[-2].item  # its neighbour
        check_whole(chips)
        await pilot.press("delete")
        await wait_until(pilot, lambda: len(chips.items) == 3)
        await pilot.pause()
        left, hidden = check_whole(chips)  # three fit: all of them, nothing scrolled away
        assert hidden == 0 and all(v.display for v in left)
        assert not any(h.display for h in chips.query(ChipMore))


async def test_a_click_on_a_hint_brings_in_the_hidden_chip(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(60, 30)) as pilot:
        chips = await attach_many(pilot, 5)
        views = list(chips.query(ChipView))
        before = chips.query_one("#chip-before", ChipMore)
        assert before.display and not views[0].display
        start = next(i for i, v in enumerate(views) if v.display)
        await pilot.click(before)
        await wait_until(pilot, lambda: app.focused is views[start - 1])
        assert views[start - 1].display
        check_whole(chips)
        assert len(chips.items) == 5  # a click on a hint removes nothing


def test_chip_window() -> None:
    assert chip_window([10, 10], 30) == (0, 2)  # all fit
    assert chip_window([], 30) == (0, 0)
    five = [20] * 5  # hints: "‹ N more" and "N more ›" take 9 cells each
    assert chip_window(five, 50) == (3, 5)  # at rest: the latest
    assert chip_window(five, 50, focus=0, first=3) == (0, 2)
    assert chip_window(five, 50, focus=2, first=0) == (2, 3)
    assert chip_window(five, 50, focus=1, first=0) == (0, 2)  # in view: no move
    assert chip_window([100], 50) == (0, 1)  # always one
    assert chip_window([20] * 3, 50, focus=2, first=3) == (1, 3)  # a gap closes


def test_a_long_label_is_cut_but_keeps_its_kind_and_cross() -> None:
    item = ChipItem("source", "x", "Physio — FisioLuz, the long appointment on Thursday")
    text = chip_text(item).plain
    assert text.endswith(" · source ✕") and "…" in text
    assert len(text) <= LABEL_MAX + len(" · source ✕")
    squeezed = chip_text(item, 20).plain
    assert len(squeezed) <= 20 and squeezed.endswith(" · source ✕")
    assert chip_text(ChipItem("wiki", "m", "Maya")).plain == "Maya · wiki ✕"


async def test_a_who_is_message_shows_the_chip_sadie_added(ctx, ollama) -> None:
    # Issue 34, item 10: the wiki page sadie puts in the briefing appears in the bar, marked
    # ✦, with a notice naming the key that removes it.
    from tests.support.ollama_server import Reply

    app = make_app(ctx)
    ollama.queue(Reply("Maya is your sister."))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        app.screen.query_one(PromptInput).insert("Who is Maya?")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bar(app).items, what="the chip sadie added")
        item = bar(app).items[0]
        assert (item.kind, item.label, item.added_by) == ("wiki", "Maya", "sadie")
        assert str(bar(app).query_one(ChipView).render()).startswith("✦ Maya")
        await wait_until(
            pilot,
            lambda: any(
                "attached the page on “Maya”" in str(n.message) for n in app._notifications
            ),
            what="the notice",
        )


async def test_a_record_the_persona_leaves_out_is_offered_and_one_key_attaches_it(
    home, ollama
) -> None:
    # Issue 34, item 3: the friend leaves records out; the record that matches the message
    # is offered in a notice naming the key, ctrl+f attaches it as a record chip, and the
    # next message has it in the briefing.
    from sadie_tui.engine.memory import Memory
    from tests.support.ollama_server import Reply
    from tests.support.tui import make_context
    from tests.test_records_offer import ASK, AURORA, add_records

    with Memory.open(home) as memory:
        add_records(memory, home.parent / "calendar")
    app = make_app(make_context(home, ollama.url))
    ollama.queue(Reply("I do not see that call in your notes."), Reply("On 2 March."))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        app.screen.query_one(PromptInput).insert(ASK)
        await pilot.press("enter")
        notice = "a record matches: 2026-03-02 calendar · Calendar event: call with the Aurora CTO"
        await wait_until(
            pilot,
            lambda: any(
                notice in str(n.message) and "ctrl+f attaches it" in str(n.message)
                for n in app._notifications
            ),
            timeout=60,
            what="the offer's notice",
        )
        assert AURORA not in ollama.requests[0]["messages"][0]["content"]
        await wait_until(pilot, lambda: not app.screen.streaming, what="the reply's end")
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: bar(app).items, timeout=60, what="the record's chip")
        item = bar(app).items[0]
        assert (item.kind, item.label) == ("record", "2026-03-02 calendar")
        assert str(bar(app).query_one(ChipView).render()).endswith("· record ✕")
        app.screen.query_one(PromptInput).insert("When was it?")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(ollama.requests) >= 2, what="the second request")
        assert AURORA in ollama.requests[1]["messages"][0]["content"]
