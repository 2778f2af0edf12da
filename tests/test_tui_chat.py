"""Pilot tests of the chat screen on the real engine: a real ingested DuckDB memory, the real
embedder and the Ollama-protocol test server. They assert on widget state and on what the
engine stored, for every key of the chat screen."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from datetime import datetime

import pytest
from textual import events
from textual.app import App
from textual.widgets import Markdown, Static

from sadie_tui.engine import conversations as conv
from sadie_tui.engine.reasoners.rates import RATES_FILE, TAIL
from sadie_tui.tui.screens.chat import ChatScreen
from sadie_tui.tui.screens.episode import EpisodeScreen
from sadie_tui.tui.widgets.chip_bar import ChipBar
from sadie_tui.tui.widgets.citations import CitationItem, CitationSidebar
from sadie_tui.tui.widgets.prompt import PromptInput
from sadie_tui.tui.widgets.sigil import EmotionSigil
from sadie_tui.tui.widgets.status import StatusLine
from sadie_tui.tui.widgets.transcript import (
    FLUSH_SECONDS,
    AssistantMessage,
    ReplyStream,
    Transcript,
    UserMessage,
)
from tests.support.ollama_server import CITATIONS_MARKER, FakeOllama, Reply, tokens_responder
from tests.support.tui import (
    MODEL,
    finished,
    make_app,
    make_context,
    ready,
    wait_until,
)

pytest_plugins = ["tests.support.tui"]
pytestmark = pytest.mark.asyncio

QUESTION = "What did Maya say about moving?"
NOW = datetime(2026, 3, 14, 9, 30)


def screen(app) -> ChatScreen:  # type: ignore[no-untyped-def]
    return app.chat_screen


async def send(pilot, text: str) -> AssistantMessage:  # type: ignore[no-untyped-def]
    chat = screen(pilot.app)
    prompt = chat.query_one(PromptInput)
    prompt.focus()
    prompt.insert(text)
    await pilot.press("enter")
    return await wait_until(pilot, lambda: chat.reply, what="the reply widget")


async def test_enter_sends_and_the_reply_streams_with_citations(ctx, ollama) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        reply = await finished(pilot, await send(pilot, QUESTION))
        chat = screen(app)
        views = chat.query_one(Transcript).messages
        assert [type(v) for v in views] == [UserMessage, AssistantMessage]
        assert views[0].text == QUESTION
        assert reply.status == "complete"
        assert "you wrote:" in reply.text
        assert "@@CITATIONS@@" not in reply.text
        sidebar = chat.query_one(CitationSidebar)
        assert len(sidebar.citations) == 1
        assert sidebar.citations[0].label == "verbatim"
        assert len(chat.query(CitationItem)) == 1
        assert chat.query_one(EmotionSigil).emotion in reply.header_text().plain
        status = chat.query_one(StatusLine)
        assert status.online is True
        assert status.context is not None and status.context.chunks > 0
        assert status.tokens_per_s
        assert chat.conversation_id is not None
        assert chat.title_text != "New conversation"
        # Both sides are stored.
        stored = conv.messages(app.session.db, chat.conversation_id)
        assert [(m.role, m.status) for m in stored] == [
            ("user", "complete"),
            ("assistant", "complete"),
        ]
        assert stored[1].content == reply.text
        assert len(ollama.requests) == 1


async def test_a_burst_of_2000_tokens_ends_with_the_whole_text_and_its_sources(
    ctx, ollama, monkeypatch
) -> None:
    ollama.responder = tokens_responder(2000)  # one 36,000-character paragraph, sent at once
    sent = "".join(tokens_responder(2000)({}).content)
    expected = sent[: sent.index(CITATIONS_MARKER)].strip()
    shown_with_sources: list[str] = []
    show = CitationSidebar.show

    async def show_sources(sidebar, sources, **kwargs) -> None:  # type: ignore[no-untyped-def]
        if sources.state == "done":  # not the "waiting" of the reply as it starts
            shown_with_sources.append(screen(sidebar.app).reply.markdown.source)
        await show(sidebar, sources, **kwargs)

    monkeypatch.setattr(CitationSidebar, "show", show_sources)
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        reply = await finished(pilot, await send(pilot, QUESTION))
        # The sources come with the end of the text, not a throttle tick before it.
        assert shown_with_sources == [expected]
        assert reply.status == "complete"
        # The filler cites a sentence that does not say what it says (issue 33): the kept
        # text puts the doubt before the whole paragraph.
        doubt, _, kept = reply.text.partition("\n\n")
        assert doubt.startswith("Your notes don't say this directly.") and kept == expected
        await wait_until(pilot, lambda: reply.markdown.source == reply.text)
        paragraphs = reply.markdown.query("MarkdownParagraph")
        assert len(paragraphs) == 2
        assert paragraphs.last().content.plain == expected
        sidebar = screen(app).query_one(CitationSidebar)
        assert sidebar.citations[0].label == "verbatim"
        assert len(screen(app).query(CitationItem)) == 1


class CountingMarkdown(Markdown):
    def __init__(self) -> None:
        super().__init__()
        self.appends = 0

    def append(self, markdown: str):  # type: ignore[no-untyped-def]
        self.appends += 1
        return super().append(markdown)


class MarkdownApp(App[None]):
    def compose(self):  # type: ignore[no-untyped-def]
        yield CountingMarkdown()


async def test_the_reply_stream_appends_a_burst_once_and_stop_shows_all_of_it() -> None:
    async with MarkdownApp().run_test() as pilot:
        markdown = pilot.app.query_one(CountingMarkdown)
        stream = ReplyStream(markdown)
        words = [f"w{n} " for n in range(1000)]
        for word in words:  # all written before the stream's task first runs
            stream.write(word)
        await stream.stop()
        assert markdown.source == "".join(words)
        assert markdown.appends == 1


async def test_the_reply_stream_appends_at_most_every_flush_seconds() -> None:
    async with MarkdownApp().run_test() as pilot:
        markdown = pilot.app.query_one(CountingMarkdown)
        stream = ReplyStream(markdown)
        loop = asyncio.get_running_loop()
        started = loop.time()
        written = []
        while loop.time() - started < 0.3:
            written.append(f"w{len(written)} ")
            stream.write(written[-1])
            await asyncio.sleep(0.002)
        await wait_until(pilot, lambda: markdown.appends >= 2, what="a second append")
        await stream.stop()
        elapsed = loop.time() - started
        assert markdown.source == "".join(written)
        assert markdown.appends <= elapsed / FLUSH_SECONDS + 2


async def test_a_burst_of_typing_then_enter_sends_the_whole_message(ctx) -> None:
    # Keys arriving faster than they are handled (a paste-speed burst, or tmux send-keys)
    # must keep their order: enter must not overtake the letters before it.
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        text = "hello there"
        for character in text:
            app.post_message(events.Key("space" if character == " " else character, character))
        app.post_message(events.Key("enter", "\r"))
        reply = await wait_until(pilot, lambda: screen(app).reply)
        # Shown once the turn's request is out (or after SHOW_WITHIN at most).
        user = await wait_until(pilot, lambda: next(iter(screen(app).query(UserMessage)), None))
        assert user.text == text
        assert screen(app).query_one(PromptInput).text == ""
        await finished(pilot, reply)


async def test_newline_keys_do_not_send(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        prompt = screen(app).query_one(PromptInput)
        await pilot.press("a", "ctrl+j", "b", "shift+enter", "c")
        assert prompt.text == "a\nb\nc"
        assert screen(app).reply is None
        prompt.clear()
        await pilot.press("space", "enter")  # blank: nothing is sent
        assert screen(app).reply is None


async def test_escape_stops_the_reply_and_keeps_what_was_shown(ctx, ollama) -> None:
    ollama.queue(Reply(content=["Hello ", "there, ", "friend ", "and ", "more"], stall_after=3))
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        reply = await send(pilot, "Say hello")
        await wait_until(pilot, lambda: "friend" in reply.text, what="three pieces")
        await pilot.press("escape")
        await finished(pilot, reply)
        assert reply.status == "interrupted"
        assert reply.has_class("-has-note")
        assert reply.text.startswith("Hello there, friend")
        stored = conv.messages(app.session.db, screen(app).conversation_id)
        assert stored[-1].status == "interrupted"
        assert stored[-1].content.strip() == reply.text.strip()


async def test_thinking_shows_elapsed_seconds_then_the_answer(ctx, ollama) -> None:
    ollama.queue(
        Reply(
            thinking=["I should ", "look at ", "the notes."],
            content=["Here ", "it is."],
            stall_after=0,
        )
    )
    app = make_app(ctx, stable=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        reply = await send(pilot, "Think about it")
        placeholder = reply.query_one(".placeholder")
        await wait_until(pilot, lambda: "thinking…" in str(placeholder.render()), what="thinking")
        assert "look at" not in reply.text  # the reasoning itself is never shown
        await pilot.press("escape")
        await finished(pilot, reply)


async def test_ctrl_n_starts_a_new_conversation(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await finished(pilot, await send(pilot, QUESTION))
        first = screen(app).conversation_id
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: not screen(app).query_one(Transcript).messages)
        chat = screen(app)
        assert chat.conversation_id is None
        assert chat.title_text == "New conversation"
        assert chat.query_one(CitationSidebar).citations == ()
        assert chat.query_one(EmotionSigil).emotion == ""
        await finished(pilot, await send(pilot, "How was the pottery class?"))
        assert chat.conversation_id not in (None, first)
        assert len(conv.list_conversations(app.session.db)) == 2


async def test_ctrl_b_toggles_the_sidebar(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        sidebar = screen(app).query_one(CitationSidebar)
        assert sidebar.display  # wide: shown by default
        await pilot.press("ctrl+b")
        assert not sidebar.display
        await pilot.press("ctrl+b")
        assert sidebar.display
        await pilot.resize_terminal(70, 30)
        await pilot.pause()
        await pilot.press("ctrl+b")
        assert not sidebar.display
        await pilot.press("ctrl+b")
        assert sidebar.display


async def test_copy_last_reply_a_focused_message_and_a_quote(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        reply = await finished(pilot, await send(pilot, QUESTION))
        await pilot.press("ctrl+y")
        assert app.clipboard == reply.text
        user = screen(app).query_one(UserMessage)
        user.focus()
        await pilot.press("ctrl+y")
        assert app.clipboard == QUESTION
        citation = screen(app).query_one(CitationItem)
        citation.focus()
        await pilot.press("ctrl+y")
        assert app.clipboard == citation.citation.quote


async def test_ctrl_y_with_nothing_to_copy_says_so(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert app.clipboard == ""
        assert any("no reply to copy" in str(n.message) for n in app._notifications)


async def test_selecting_a_citation_opens_the_episode_with_the_quote_highlighted(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await finished(pilot, await send(pilot, QUESTION))
        item = screen(app).query_one(CitationItem)
        item.focus()
        await pilot.press("enter")
        episode = await wait_until(
            pilot, lambda: isinstance(app.screen, EpisodeScreen) and app.screen, what="episode"
        )
        await wait_until(pilot, lambda: episode.query(".-quoted"), what="the highlighted quote")
        quoted = episode.query_one(".-quoted")
        assert item.citation.quote.lower() in str(quoted.render()).lower()
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen))


async def test_a_missing_model_is_explained_and_offline_still_answers(home, ollama) -> None:
    ctx = make_context(home, ollama.url, model="llama-nope:7b")
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        status = screen(app).query_one(StatusLine)
        await wait_until(pilot, lambda: status.online is False, what="the model check")
        notes = " ".join(str(n.message) for n in app._notifications)
        assert "ollama pull llama-nope:7b" in notes
        reply = await finished(pilot, await send(pilot, QUESTION))
        assert reply.status == "complete"
        assert reply.text  # the offline reader quotes the notes
        assert status.online is False
        assert ollama.requests == []


async def test_ollama_down_is_explained_and_offline_still_answers(home) -> None:
    with FakeOllama() as server:
        url = server.url
    ctx = make_context(home, url)  # nothing listens there any more
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        status = screen(app).query_one(StatusLine)
        await wait_until(pilot, lambda: status.online is False, what="the model check")
        assert any(n.severity == "warning" for n in app._notifications)
        reply = await finished(pilot, await send(pilot, QUESTION))
        assert reply.status == "complete" and reply.text


async def test_an_error_mid_stream_shows_why(ctx, ollama) -> None:
    ollama.queue(
        Reply(content=["Part ", "of ", "it"], error_after=2, error_message="GPU fell over")
    )
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        reply = await finished(pilot, await send(pilot, QUESTION))
        assert reply.status == "error"
        assert reply.has_class("-error")
        note = str(reply.query_one(".note").render())
        assert note.startswith("✗")
        assert any(n.severity == "error" for n in app._notifications)


async def test_a_blocked_reply_shows_the_rule(ctx, ollama) -> None:
    (ctx.home / "policies.toml").write_text(
        textwrap.dedent(
            """
            [[policy]]
            name = "no-diagnoses"
            action = "block"
            pattern = "(?i)you have depression"
            message = "sadie does not diagnose"
            """
        ),
        encoding="utf-8",
    )
    ollama.queue("It sounds like you have depression.\n@@CITATIONS@@\n[]")
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        reply = await finished(pilot, await send(pilot, "Why am I so tired?"))
        assert reply.status == "blocked"
        assert "no-diagnoses" in str(reply.query_one(".note").render())
        assert "you have depression" not in reply.text
        assert screen(app).query_one(EmotionSigil).emotion == "serious"


async def test_markup_in_notes_replies_and_messages_is_shown_as_text(ctx, ollama) -> None:
    evil = "[@click=app.quit]quit[/] and [bold]bold[/bold] and [link=x]y[/link]"
    ollama.queue(f"Your note says {evil}.\n@@CITATIONS@@\n[]")
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        reply = await finished(pilot, await send(pilot, f"odd brackets {evil}"))
        user = screen(app).query_one(UserMessage)
        assert evil in str(user.query_one(".body").render())
        markdown_text = "".join(str(b._content) for b in reply.query("MarkdownBlock"))
        assert "[@click=app.quit]" in markdown_text and "[bold]" in markdown_text
        # Clicking the words does nothing: the app is still running.
        await pilot.click(AssistantMessage, offset=(20, 1))
        await pilot.pause()
        assert app.is_running
        # A note holding markup, opened as an episode and found by the chip picker, stays text.
        from sadie_tui.engine.events import CitationView

        episode_id = app.session.db.fetchone(
            "SELECT id::VARCHAR FROM episodes WHERE title = 'Odd brackets'"
        )[0]
        quote = "[bold]not bold[/bold]"
        await app.push_screen(
            EpisodeScreen(
                app.session,
                CitationView(
                    episode_id, quote, "verbatim", "verbatim", "Odd brackets", "2026-04-02"
                ),
            )
        )
        episode = app.screen
        await wait_until(pilot, lambda: episode.query(".-quoted"))
        shown = str(episode.query_one(".-quoted").render())
        assert "[@click=app.quit]" in shown and "[bold]not bold[/bold]" in shown
        await pilot.click(".-quoted", offset=(25, 0))
        await pilot.pause()
        assert app.is_running
        # Notifications (errors, paths, model names) are plain text too.
        app.screen.notify(evil)
        await pilot.pause()
        assert app._notifications and not any(n.markup for n in app._notifications)


async def test_a_message_sent_before_the_memory_opens_waits_for_it(ctx) -> None:
    import threading

    from tests.support.tui import StableSession

    # The memory opens only once the test has seen the message wait for it: no wall time.
    may_open = threading.Event()

    def slow_session(launch):  # type: ignore[no-untyped-def]
        assert may_open.wait(120)  # runs in the memory worker thread
        return StableSession(launch)

    app = make_app(ctx, session_factory=slow_session)
    async with app.run_test(size=(100, 30)) as pilot:
        assert not app.memory_ready.is_set()
        reply = await send(pilot, QUESTION)  # accepted at once
        assert screen(app).query_one(UserMessage).text == QUESTION
        placeholder = reply.query_one(".placeholder")
        await wait_until(pilot, lambda: "opening your memory" in str(placeholder.render()))
        may_open.set()
        await finished(pilot, reply)
        assert reply.status == "complete"


async def test_a_question_on_the_command_line_opens_already_answering(ctx) -> None:
    app = make_app(ctx, question=QUESTION)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: screen(app).query(UserMessage))
        assert screen(app).query_one(UserMessage).text == QUESTION
        reply = await finished(pilot, await wait_until(pilot, lambda: screen(app).reply))
        assert reply.status == "complete" and "you wrote" in reply.text


async def test_a_second_sadie_on_the_same_home_gets_the_lock_message(ctx) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import duckdb, sys, time
            con = duckdb.connect({str(ctx.home / "sadie.duckdb")!r})
            print('locked', flush=True)
            time.sleep(60)
        """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        app = make_app(ctx)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: app.exit_error is not None, timeout=10)
        assert type(app.exit_error).__name__ == "LockedError"
        assert "in use" in app.exit_error.one_line()
        assert app.return_code == 3
    finally:
        holder.kill()
        holder.wait()


async def test_chip_bar_starts_empty_with_a_hint(ctx) -> None:
    app = make_app(ctx)
    async with app.run_test(size=(100, 30)):
        bar = screen(app).query_one(ChipBar)
        assert bar.items == []
        assert bar.query_one("#chip-hint").display


# -- grounding when the model ignores the format --------------------------------------------

PLANTED = (
    "You walked by the river with Maya after lunch. She is moving to Leeds on 3 June, and "
    "Beatriz will drive the van."
)


async def test_a_reply_without_tail_is_checked_repaired_and_flagged(ctx, ollama) -> None:
    # No citations tail; the citation pass (structured outputs) answers a moment later.
    ollama.queue(Reply(PLANTED), Reply('{"citations": []}', stream=False, delay=0.3))
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        reply = await send(pilot, QUESTION)
        await wait_until(
            pilot, lambda: "checking sources…" in reply.header_text().plain, what="checking"
        )
        await finished(pilot, reply)
        assert "checking sources" not in reply.header_text().plain
        # Nothing cited by the model or the pass: sadie's own match, labelled as such.
        sidebar = screen(app).query_one(CitationSidebar)
        assert sidebar.citations and all(c.label == "found by sadie" for c in sidebar.citations)
        flagged = sidebar.query_one("#sources-unsupported")
        assert flagged.display
        assert "2 details not found in your notes" in str(flagged.render())
        # The planted date and name are marked in the reply; the known name is not.
        assert reply.has_class("-flagged")
        source = reply.query_one(Markdown).source
        assert "~~3 June~~" in source and "~~Beatriz~~" in source
        assert "~~Maya~~" not in source and "~~Leeds~~" not in source


async def test_the_wait_for_the_first_token_is_shown(ctx, ollama) -> None:
    ollama.queue(Reply(["Hello ", "there."], delay=1.2))
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        reply = await send(pilot, QUESTION)
        placeholder = reply.query_one(".placeholder")
        await wait_until(
            pilot,
            lambda: "reading your notes… 1 s" in str(placeholder.render()),
            what="the waiting seconds",
        )
        await finished(pilot, reply)
        assert reply.text.startswith("Hello there.")


async def test_a_repaired_reply_says_so_in_the_sidebar(ctx, ollama) -> None:
    ollama.queue(Reply("You walked by the river with Maya."))  # the pass uses the schema
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        reply = await finished(pilot, await send(pilot, QUESTION))
        sidebar = screen(app).query_one(CitationSidebar)
        assert sidebar.citations and sidebar.citations[0].origin == "model"
        state = sidebar.query_one("#sources-state")
        assert state.display and "second, checked pass" in str(state.render())
        assert not reply.has_class("-flagged")


async def test_a_new_message_leaves_the_older_ones_styles_alone(ctx, monkeypatch) -> None:
    """Mounting a message must not restyle every message above it: no rule of theirs may
    depend on order (a `*:last-child` made every view re-styled on each mount, a cost that
    grew with the conversation)."""
    from textual.css.stylesheet import Stylesheet

    app = make_app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        transcript = screen(app).query_one(Transcript)
        for n in range(8):
            reply = AssistantMessage(
                f"Reply {n}.\n\nA second paragraph.", live=False, status="complete"
            )
            await transcript.add(UserMessage(f"Message {n}", NOW), reply)
        await pilot.pause()
        old = {node for view in transcript.messages for node in view.walk_children(with_self=True)}
        styled: list = []
        real_apply = Stylesheet.apply

        def apply(self, node, **kwargs):  # type: ignore[no-untyped-def]
            styled.append(node)
            return real_apply(self, node, **kwargs)

        monkeypatch.setattr(Stylesheet, "apply", apply)
        await transcript.add(UserMessage("One more", NOW), AssistantMessage("And its reply."))
        await pilot.pause()
        assert styled, "the new messages were styled"
        assert not [node for node in styled if node in old]


async def test_a_model_that_never_writes_citations_is_not_asked_and_the_pass_points(
    ctx, ollama
) -> None:
    # This model wrote no citations tail in its last six replies (kept beside the memory):
    # the briefing leaves the instructions out, and the checked pass finds the sources.
    (ctx.home / RATES_FILE).write_text(
        json.dumps({"@features": {f"{TAIL} {MODEL}": {"tried": 6, "paid": 0, "skipped": 0}}}),
        encoding="utf-8",
    )
    ollama.queue(
        Reply("You wrote that Maya is moving to Leeds in May."),
        Reply('{"s": ["S1"]}', stream=False),
    )
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        reply = await finished(pilot, await send(pilot, QUESTION))
        assert reply.status == "complete"
        system = ollama.requests[0]["messages"][0]["content"]
        assert CITATIONS_MARKER not in system
        chat = screen(app)
        sidebar = chat.query_one(CitationSidebar)
        assert len(sidebar.citations) == 1
        state = sidebar.query_one("#sources-state", Static)
        assert str(state.render()) == (
            "This model does not write citations itself; these came from a checked pass."
        )
