"""The app as a daily driver (issue 13): keys always land, the sidebar follows its reply, the
model is watched and chosen live, regenerate / edit / history, and the last conversation
reopens. Pilot on the real engine: a real DuckDB memory, the real embedder, the project's
Ollama-protocol server. Every wait is on the app's own state, never on a sleep."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input, OptionList, Static

from sadie_tui.engine.operations import ShowConversation
from sadie_tui.tui.screens.chat import ChatScreen
from sadie_tui.tui.screens.episode import EpisodeScreen
from sadie_tui.tui.screens.model_picker import ModelPicker
from sadie_tui.tui.widgets.citations import CitationItem, CitationSidebar
from sadie_tui.tui.widgets.prompt import PromptInput
from sadie_tui.tui.widgets.status import StatusLine
from sadie_tui.tui.widgets.transcript import AssistantMessage, MessageView, Transcript, UserMessage
from tests.support.ollama_server import FakeOllama, Reply
from tests.support.tui import finished, make_app, make_context, ready, wait_until

pytest_plugins = ["tests.support.tui"]
pytestmark = pytest.mark.asyncio

QUESTION = "What did Maya say about moving?"


def chat(app) -> ChatScreen:  # type: ignore[no-untyped-def]
    return app.chat_screen


async def send(pilot, text: str) -> AssistantMessage:  # type: ignore[no-untyped-def]
    screen = chat(pilot.app)
    before = screen.reply
    prompt = screen.query_one(PromptInput)
    prompt.focus()
    prompt.insert(text)
    await pilot.press("enter")
    reply = await wait_until(pilot, lambda: screen.reply is not before and screen.reply)
    return await finished(pilot, reply)


def stored(app) -> list[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    cid = chat(app).conversation_id
    return [(m.role, m.status, m.content) for m in app.session.call(ShowConversation(cid)).messages]


# -- keys land ------------------------------------------------------------------------------
async def test_typing_with_a_citation_focused_goes_to_the_input(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await send(pilot, QUESTION)
        screen = chat(app)
        citation = screen.query_one(CitationItem)
        citation.focus()
        await pilot.press("enter")  # opens the note
        await wait_until(pilot, lambda: isinstance(app.screen, EpisodeScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))
        prompt = screen.query_one(PromptInput)
        await wait_until(pilot, lambda: app.focused is prompt, what="focus back on the input")
        citation.focus()  # and even from a focused citation, letters go to the input
        clipboard = app.clipboard
        await pilot.press(*"why y")
        assert prompt.text == "why y" and app.focused is prompt
        assert app.clipboard == clipboard  # y copied nothing
        screen.query_one(UserMessage).focus()
        await pilot.press("?")
        assert prompt.text == "why y?"


async def test_page_keys_scroll_the_transcript_from_the_input(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 20)) as pilot:
        await ready(pilot)
        for n in range(4):
            await send(pilot, f"{QUESTION} ({n})")
        transcript = chat(app).query_one(Transcript)
        prompt = chat(app).query_one(PromptInput)
        assert app.focused is prompt and transcript.max_scroll_y > 0
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        await pilot.press("ctrl+home")
        await wait_until(pilot, lambda: transcript.scroll_y == 0, what="the top")
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: transcript.scroll_y > 0, what="a page down")
        await pilot.press("ctrl+end")
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        await pilot.press("pageup")
        await wait_until(pilot, lambda: transcript.scroll_y < transcript.max_scroll_y)
        assert app.focused is prompt


async def test_tab_goes_input_chips_sources_then_messages(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await send(pilot, QUESTION)
        order = [type(w).__name__ for w in chat(app).focus_chain]
        kinds = ["PromptInput", "ChipView", "CitationItem", "UserMessage", "AssistantMessage"]
        ranks = [kinds.index(k) for k in order if k in kinds]
        assert ranks == sorted(ranks) and ranks[0] == 0, order
        assert "CitationItem" in order and order.index("CitationItem") < order.index("UserMessage")


# -- the sidebar follows its reply ------------------------------------------------------------
async def test_the_sidebar_shows_the_focused_reply_and_says_which(ctx, ollama) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        first = await send(pilot, QUESTION)
        ollama.queue(Reply(["Nothing in your notes says that."]))  # no citations at all
        second = await send(pilot, "What is the capital of Peru?")
        sidebar = chat(app).query_one(CitationSidebar)
        assert sidebar.following is second and sidebar.caption.startswith("sadie's reply")
        assert "Nothing in your notes" in sidebar.caption
        await wait_until(pilot, lambda: not sidebar.citations)
        first.focus()
        await wait_until(pilot, lambda: sidebar.citations, what="the first reply's sources")
        assert sidebar.following is first and "Walk by the river" in sidebar.caption
        assert sidebar.citations[0].title == "Walk by the river"


async def test_a_reply_shows_checking_sources_in_the_sidebar(ctx, ollama) -> None:
    ollama.queue(Reply(["Maya is moving, you wrote."]))  # no tail: the citation pass runs
    ollama.queue(Reply(['{"citations": []}'], delay=3))
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = chat(app)
        prompt = screen.query_one(PromptInput)
        prompt.insert(QUESTION)
        await pilot.press("enter")
        reply = await wait_until(pilot, lambda: screen.reply)
        sidebar = screen.query_one(CitationSidebar)
        state = sidebar.query_one("#sources-state", Static)
        await wait_until(pilot, lambda: reply.checking, what="the citation pass")
        await wait_until(pilot, lambda: "checking sources" in str(state.render()))
        await finished(pilot, reply)
        assert "checking sources" not in str(state.render())


async def test_a_stopped_reply_keeps_the_citations_its_tail_had(ctx, ollama) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        ep = app.session.inner.db.fetchone(
            "SELECT id::VARCHAR FROM episodes WHERE title = 'Walk by the river'"
        )[0]
        entry = json.dumps({"episode": ep, "quote": "Walked by the river", "support": "verbatim"})
        ollama.queue(
            Reply(["You walked by the river.\n@@CITATIONS@@\n[" + entry + ', {"ep'], stall_after=1)
        )
        screen = chat(app)
        screen.query_one(PromptInput).insert(QUESTION)
        await pilot.press("enter")
        reply = await wait_until(pilot, lambda: screen.reply)
        await wait_until(pilot, lambda: "river" in reply.text, what="the prose")
        await pilot.press("escape")
        sidebar = screen.query_one(CitationSidebar)
        await wait_until(pilot, lambda: sidebar.citations, what="the kept citations")
        # Stopped after the marker: the prose was complete, so the reply is kept complete
        # with the citation that had arrived, checked (issue 28).
        assert reply.status == "complete"
        assert [c.episode_id for c in sidebar.citations] == [ep]
        assert reply.sources.count == 1


# -- the model ----------------------------------------------------------------------------------
async def test_the_model_going_away_and_coming_back_is_said_each_way(home, tui_env) -> None:
    server = FakeOllama().start()
    port = server.port
    try:
        app = make_app(make_context(home, server.url))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            status = chat(app).query_one(StatusLine)
            await wait_until(pilot, lambda: status.online is True, what="online")
            await send(pilot, QUESTION)
            server.stop()
            failed = await send(pilot, "And after that?")
            assert failed.status == "error"
            await wait_until(pilot, lambda: status.online is False, what="offline")
            titles = [n.title for n in app._notifications]
            assert "The model went away" in titles
            offline = await send(pilot, "And after that?")  # at once offline, not another error
            assert offline.status == "complete" and "No language model" in offline.text
            assert status.tokens_per_s is None
            server = FakeOllama(port=port).start()
            app._check_model(fresh=True)  # the half-minute probe, without waiting for it
            await wait_until(pilot, lambda: status.online is True, what="back online")
            assert "The model is back" in [n.title for n in app._notifications]
    finally:
        server.stop()


async def test_the_model_picker_lists_the_servers_models_and_remembers(ctx, ollama) -> None:
    from sadie_tui.config import load_settings

    ollama.models.append("gemma3:270m")
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("f4")
        picker = await wait_until(
            pilot, lambda: isinstance(app.screen, ModelPicker) and app.screen.names and app.screen
        )
        assert picker.names == ["gemma3:270m", "qwen3:1.7b"]
        listed = picker.query_one(OptionList)
        assert "GB" in str(listed.get_option("qwen3:1.7b").prompt)
        await pilot.press("up")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))
        assert app.model == "gemma3:270m"
        status = chat(app).query_one(StatusLine)
        await wait_until(pilot, lambda: status.online is True and status.model == "gemma3:270m")
        await send(pilot, QUESTION)
        assert ollama.requests[-1]["model"] == "gemma3:270m"
        await wait_until(
            pilot, lambda: load_settings(ctx.settings.config_path).model == "gemma3:270m"
        )


async def test_the_picker_says_why_when_no_server_answers(home, tui_env) -> None:
    app = make_app(make_context(home, "http://127.0.0.1:9"))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("f4")
        picker = await wait_until(
            pilot, lambda: isinstance(app.screen, ModelPicker) and app.screen.failed and app.screen
        )
        state = str(picker.query_one("#server-state", Static).render())
        assert state.startswith("✗ Cannot list the models: Ollama is not reachable at")
        assert "Change the address above" in state
        assert picker.query_one(Input).has_focus


# -- regenerate, edit, history ------------------------------------------------------------------
async def test_regenerate_replaces_the_reply_on_screen_and_in_storage(ctx, ollama) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        ollama.queue(Reply(["The first try."]))
        await send(pilot, QUESTION)
        ollama.queue(Reply(["The second try."]))
        screen = chat(app)
        before = screen.reply
        await pilot.press("ctrl+g")
        again = await wait_until(pilot, lambda: screen.reply is not before and screen.reply)
        await finished(pilot, again)
        views = [(type(v).__name__, v.text) for v in screen.query_one(Transcript).messages]
        assert views == [("UserMessage", QUESTION), ("AssistantMessage", "The second try.")]
        assert stored(app) == [
            ("user", "complete", QUESTION),
            ("assistant", "complete", "The second try."),
        ]


async def test_retry_after_an_error_with_ctrl_g(ctx, ollama) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        ollama.queue(Reply(["Half "], error_after=1))
        failed = await send(pilot, QUESTION)
        assert failed.status == "error"
        ollama.queue(Reply(["A whole answer."]))
        screen = chat(app)
        await pilot.press("ctrl+g")
        again = await wait_until(pilot, lambda: screen.reply is not failed and screen.reply)
        await finished(pilot, again)
        assert stored(app) == [
            ("user", "complete", QUESTION),
            ("assistant", "complete", "A whole answer."),
        ]


async def test_edit_the_last_message_and_resend_it(ctx, ollama) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await send(pilot, "What did Maya say abut moving?")
        screen = chat(app)
        prompt = screen.query_one(PromptInput)
        await pilot.press("ctrl+o")
        assert prompt.text == "What did Maya say abut moving?" and screen.editing
        assert prompt.border_title and "editing" in prompt.border_title
        prompt.text = QUESTION
        before = screen.reply
        await pilot.press("enter")
        again = await wait_until(pilot, lambda: screen.reply is not before and screen.reply)
        await finished(pilot, again)
        assert not screen.editing
        users = [v.text for v in screen.query_one(Transcript).messages if v.role == "user"]
        assert users == [QUESTION]
        assert [r for r, _, _ in stored(app)] == ["user", "assistant"]
        assert stored(app)[0][2] == QUESTION


async def test_escape_cancels_an_edit(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await send(pilot, QUESTION)
        screen = chat(app)
        await pilot.press("ctrl+o")
        assert screen.editing
        await pilot.press("escape")
        assert not screen.editing and screen.query_one(PromptInput).text == ""


async def test_up_recalls_earlier_messages_for_editing(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await send(pilot, "first question")
        await send(pilot, "second question")
        prompt = chat(app).query_one(PromptInput)
        await pilot.press("up")
        assert prompt.text == "second question"
        await pilot.press("up")
        assert prompt.text == "first question"
        await pilot.press("down")
        assert prompt.text == "second question"
        await pilot.press("down")
        assert prompt.text == ""
        await pilot.press("ctrl+n")  # a new conversation: the others' messages still come back
        await wait_until(pilot, lambda: not chat(app).query_one(Transcript).messages)
        await pilot.press("up")
        assert prompt.text == "second question"
        prompt.insert(" again")  # edited: the arrows move the cursor again
        await pilot.press("up")
        assert prompt.text == "second question again"


# -- relaunch -----------------------------------------------------------------------------------
async def test_a_relaunch_reopens_the_last_conversation(ctx, ollama) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await send(pilot, QUESTION)
        cid = chat(app).conversation_id
        await wait_until(pilot, lambda: (ctx.home / "tui-state.json").is_file())
    ctx.close()

    again = make_app(ctx)
    async with again.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: chat(again).conversation_id == cid, what="the reopen")
        views = await wait_until(pilot, lambda: chat(again).query_one(Transcript).messages)
        assert [v.text for v in views][0] == QUESTION
        sidebar = chat(again).query_one(CitationSidebar)
        await wait_until(pilot, lambda: sidebar.citations, what="its sources")
    ctx.close()

    ctx.new = True  # sadie --new
    blank = make_app(ctx)
    async with blank.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.pause()
        assert chat(blank).conversation_id is None
        assert not chat(blank).query_one(Transcript).messages


# -- small things -------------------------------------------------------------------------------
async def test_ctrl_n_during_a_reply_says_it_stopped_it(ctx, ollama) -> None:
    ollama.queue(Reply(["one ", "two ", "three ", "four"], delay=0.5))
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = chat(app)
        screen.query_one(PromptInput).insert(QUESTION)
        await pilot.press("enter")
        reply = await wait_until(pilot, lambda: screen.reply)
        await wait_until(pilot, lambda: reply.text, what="the first words")
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: screen.conversation_id is None and not screen.streaming)
        assert any("Stopped the reply" in n.message for n in app._notifications)
        status = screen.query_one(StatusLine)
        assert status.tokens_per_s is None


async def test_a_focused_message_stands_out(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        reply = await send(pilot, QUESTION)
        plain = reply.styles.border_left
        reply.focus()
        await pilot.pause()
        assert reply.has_focus and reply.styles.border_left != plain
        assert isinstance(reply, MessageView)
