"""The app while a model writes its sources slowly (issue 28, item 3): the header says
"writing its sources…" as soon as the prose is complete, and Esc then keeps the reply with
the citations that had arrived, checked; Esc during the prose is a stop as before. Pilot on
the real engine and the project's Ollama-protocol server, its tail held behind a gate."""

from __future__ import annotations

import json
import threading

import pytest
from textual.widgets import Static

from sadie_tui.engine.operations import ShowConversation
from sadie_tui.tui.widgets.citations import CitationSidebar
from sadie_tui.tui.widgets.prompt import PromptInput
from tests.support.ollama_server import Reply
from tests.support.tui import make_app, ready, wait_until

pytest_plugins = ["tests.support.tui"]
pytestmark = pytest.mark.asyncio

QUESTION = "What did Maya say about moving?"
PROSE = "You walked by the river with Maya, and she is moving to Leeds in May."


def header(reply) -> str:  # type: ignore[no-untyped-def]
    return str(reply.header_text())


async def test_esc_while_it_writes_its_sources_keeps_the_reply_and_its_checked_sources(
    ctx, ollama
) -> None:
    app = make_app(ctx)
    gate = threading.Event()  # the rest of the tail never comes: the person stops it
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        ep = app.session.inner.db.fetchone(
            "SELECT id::VARCHAR FROM episodes WHERE title = 'Walk by the river'"
        )[0]
        cited = json.dumps(
            {"episode": ep, "quote": "She is moving to Leeds in May", "support": "verbatim"}
        )
        ollama.queue(
            Reply(
                [PROSE[:35], PROSE[35:], "\n@@CITATIONS@@\n[" + cited + ', {"episode": "', "x"],
                gate_after=3,
                gate=gate,
            )
        )
        try:
            screen = app.chat_screen
            screen.query_one(PromptInput).insert(QUESTION)
            await pilot.press("enter")
            reply = await wait_until(pilot, lambda: screen.reply)
            await wait_until(
                pilot, lambda: "writing its sources…" in header(reply), what="the header"
            )
            assert "replying…" not in header(reply)
            assert reply.text == PROSE  # all of the prose is on screen already
            sidebar = screen.query_one(CitationSidebar)
            state = sidebar.query_one("#sources-state", Static)
            assert "writing its sources" in str(state.render())
            await pilot.press("escape")
            await wait_until(pilot, lambda: sidebar.citations, what="the checked citations")
            assert reply.status == "complete"
            assert [c.episode_id for c in sidebar.citations] == [ep]
            assert sidebar.citations[0].support == "verbatim"
            note = str(reply.query_one(".note", Static).render())
            assert "stopped while writing its sources: 1 checked" in note
            assert "before its sources were checked" not in str(
                sidebar.query_one("#sources-empty", Static).render()
            )
            assert "1 had arrived and was checked" in str(state.render())
            stored = app.session.call(ShowConversation(screen.conversation_id)).messages[-1]
            assert stored.status == "complete" and stored.content == PROSE
        finally:
            gate.set()


async def test_esc_during_the_prose_still_stops_it(ctx, ollama) -> None:
    app = make_app(ctx)
    gate = threading.Event()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        ollama.queue(Reply([PROSE[:35], PROSE[35:]], gate_after=1, gate=gate))
        try:
            screen = app.chat_screen
            screen.query_one(PromptInput).insert(QUESTION)
            await pilot.press("enter")
            reply = await wait_until(pilot, lambda: screen.reply)
            await wait_until(pilot, lambda: reply.text, what="the first words")
            assert "replying… esc stops" in header(reply)
            await pilot.press("escape")
            await wait_until(pilot, lambda: reply.status == "interrupted")
            note = str(reply.query_one(".note", Static).render())
            assert "stopped — what you see is what was kept" in note
        finally:
            gate.set()
