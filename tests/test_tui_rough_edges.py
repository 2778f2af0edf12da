"""The first half hour's rough edges (issue 28, items 4, 5, 7, 8 and 9), each with the inputs
the issue gives: keys pressed while a reopened conversation loads, ctrl+o over a draft, narrow
terminals, the browser's snippets, focus and pinning, the sidebar's arrows, the footer, ctrl+c
and a reply that fails mid-stream. Pilot over the typed fake session (no DuckDB, no embedder),
every wait on the app's own state."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest

from sadie_tui.engine.conversations import ConversationShow
from sadie_tui.engine.door import Op
from sadie_tui.engine.operations import ListConversations, Pin, ShowConversation, Unpin
from sadie_tui.engine.store.conversations import Conversation, Message
from sadie_tui.launch import Launch
from sadie_tui.tui.app import SadieApp
from sadie_tui.tui.screens.conversations import ConversationList
from sadie_tui.tui.widgets.prompt import PromptInput
from sadie_tui.tui.widgets.transcript import Transcript
from tests.support.fake_session import FakeSession, now
from tests.support.tui import wait_until

pytest_plugins = ["tests.support.tui"]
pytestmark = pytest.mark.asyncio

OLD = "c-old"
AT = datetime(2026, 4, 5, 9, 0)


def conversation(cid: str, title: str, **kwargs: Any) -> Conversation:
    fields: dict[str, Any] = dict(
        summary="",
        emotion="reflective",
        persona="friend",
        pinned=False,
        archived_at=None,
        created_at=AT,
        updated_at=AT,
        message_count=2,
    )
    fields.update(kwargs)
    return Conversation(cid, title, **fields)


def exchange(cid: str, question: str, answer: str) -> list[Message]:
    return [
        Message(f"{cid}-1", cid, "user", question, "complete", None, created_at=AT),
        Message(f"{cid}-2", cid, "assistant", answer, "complete", "reflective", created_at=AT),
    ]


A = TypeVar("A")


@dataclass
class StoredSession(FakeSession):
    """A fake with stored conversations; ``loading`` (when given) holds ``messages`` until set,
    as a slow disk or a busy holder would."""

    stored: dict[str, tuple[Conversation, list[Message]]] = field(default_factory=dict)
    loading: threading.Event | None = None
    loads: list[str] = field(default_factory=list)
    pins: list[tuple[str, bool]] = field(default_factory=list)  # (conversation, pinned)

    def call(self, op: Op[A]) -> A:
        """The stored conversations listed and shown; the rest as the plain fake answers."""
        match op:
            case ListConversations(archived=archived, search=search):
                return cast(A, self._listed(archived, search))
            case Pin(conversation_id=cid) | Unpin(conversation_id=cid) if cid in self.stored:
                self.pins.append((cid, isinstance(op, Pin)))
                return cast(A, self.stored[cid][0])
            case ShowConversation(conversation_id=cid) if cid in self.stored:
                self.loads.append(cid)
                if self.loading is not None:
                    self.loading.wait(30)
                conversation, items = self.stored[cid]
                return cast(A, ConversationShow(conversation, list(items), []))
        return super().call(op)

    def _listed(self, archived: bool, search: str | None) -> list[Conversation]:
        found = [c for c, _ in self.stored.values() if (c.archived_at is not None) == archived]
        if search:
            words = search.casefold()
            found = [
                c
                for c, items in self.stored.values()
                if c in found
                and (
                    words in c.title.casefold() or any(words in m.content.casefold() for m in items)
                )
            ]
        return sorted(found, key=lambda c: (not c.pinned, c.title))


def relaunch_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeSession, **kw: Any):
    """The app on ``fake`` with OLD remembered as the conversation to reopen."""
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    (tmp_path / "tui-state.json").write_text(json.dumps({"conversation_id": OLD}))
    factory = kw.pop("session_factory", lambda _: fake)
    launch = Launch(home=tmp_path, settings=fake.settings)
    return SadieApp(launch, session_factory=factory, clock=now, warm_embedder=False)


def old_session(tmp_path: Path) -> StoredSession:
    return StoredSession(
        home=tmp_path,
        stored={OLD: (conversation(OLD, "Maya's move"), exchange(OLD, "Is Maya moving?", "Yes."))},
    )


async def until(pilot: Any, predicate: Any, what: str = "") -> Any:
    """``wait_until`` with a bound fit for a fake session: nothing here takes seconds."""
    return await wait_until(pilot, predicate, timeout=20, what=what)


async def settled(pilot: Any) -> None:
    """Every worker of the app done (the reopen, the load, the model check)."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


# -- 4. ctrl+n just after a relaunch ------------------------------------------------------------
async def test_ctrl_n_before_the_memory_opens_is_not_lost(tmp_path, monkeypatch) -> None:
    """Pressed while the memory opens (the first second after a relaunch): the reopen of the
    last conversation does not undo it."""
    fake = old_session(tmp_path)
    opening = threading.Event()

    def slow_to_open(_: object) -> FakeSession:
        opening.wait(30)
        return fake

    app = relaunch_app(tmp_path, monkeypatch, fake, session_factory=slow_to_open)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+n")
        assert not app.memory_ready.is_set()
        opening.set()
        await until(pilot, app.memory_ready.is_set)
        await settled(pilot)
        chat = app.chat_screen
        assert chat.conversation_id is None and chat.title_text == "New conversation"
        assert not chat.query_one(Transcript).messages


async def test_ctrl_n_while_the_last_conversation_loads_wins(tmp_path, monkeypatch) -> None:
    """Pressed while the reopened conversation's messages are still being read: the screen
    ends empty, for the new conversation, whenever the load finishes."""
    fake = old_session(tmp_path)
    fake.loading = threading.Event()
    app = relaunch_app(tmp_path, monkeypatch, fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: fake.loads == [OLD], what="the reopen to start")
        await pilot.press("ctrl+n")
        fake.loading.set()
        await settled(pilot)
        chat = app.chat_screen
        assert chat.conversation_id is None and chat.title_text == "New conversation"
        assert not chat.query_one(Transcript).messages
        state = json.loads((tmp_path / "tui-state.json").read_text())
        assert state == {"conversation_id": None}


async def test_the_last_conversation_still_reopens(tmp_path, monkeypatch) -> None:
    fake = old_session(tmp_path)
    app = relaunch_app(tmp_path, monkeypatch, fake)
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.chat_screen
        await until(pilot, lambda: chat.query_one(Transcript).messages, what="the reopen")
        assert chat.conversation_id == OLD and chat.title_text == "Maya's move"


# -- 5. ctrl+o over a half-typed draft ----------------------------------------------------------
async def test_escape_after_ctrl_o_gives_the_draft_back(tmp_path, monkeypatch) -> None:
    """Type, ctrl+o, escape: the box holds the draft again, its cursor where it was."""
    fake = old_session(tmp_path)
    app = relaunch_app(tmp_path, monkeypatch, fake)
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.chat_screen
        await until(pilot, lambda: chat.conversation_id == OLD, what="the reopen")
        prompt = chat.query_one(PromptInput)
        await pilot.press(*"half a thou")
        await pilot.press("left", "left")
        cursor = prompt.cursor_location
        await pilot.press("ctrl+o")
        assert chat.editing and prompt.text == "Is Maya moving?"
        await pilot.press("escape")
        assert not chat.editing
        assert prompt.text == "half a thou" and prompt.cursor_location == cursor


async def test_a_draft_set_aside_by_ctrl_o_comes_back_with_up(tmp_path, monkeypatch) -> None:
    """Type, ctrl+o, change and resend the last message: Up in the empty box brings the draft
    back first."""
    from sadie_tui.engine.events import Done, Meta, Token

    fake = old_session(tmp_path)
    fake.replies.append([Meta(OLD, "fake:1b", "friend", False, "m4", "m3", "Maya's move"),
                         Token("Yes, in May."), Done("m4", 5.0, 1)])  # fmt: skip
    app = relaunch_app(tmp_path, monkeypatch, fake)
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.chat_screen
        await until(pilot, lambda: chat.conversation_id == OLD, what="the reopen")
        prompt = chat.query_one(PromptInput)
        await pilot.press(*"half a thought")
        await pilot.press("ctrl+o")
        prompt.text = "Is Maya moving to Leeds?"
        await pilot.press("enter")
        await until(pilot, lambda: fake.asked and not chat.streaming, what="the resend")
        assert prompt.text == ""
        await pilot.press("up")
        assert prompt.text == "half a thought"


# -- 8. the browser -----------------------------------------------------------------------------
LONG = "c-long"
WORDS = " ".join(f"w{n:04d}" for n in range(1, 834))  # 5,000 characters
CUT = WORDS.rfind(" ", 0, 2500)
LONG_REPLY = WORDS[:CUT] + " the marathon in Lisbon" + WORDS[CUT:]


def browser_session(tmp_path: Path) -> StoredSession:
    long = conversation(LONG, "Long talk", summary="A long talk", updated_at=AT)
    other = conversation("c-other", "Pottery", summary="Pottery class", pinned=True)
    third = conversation("c-third", "Refactor", summary="The refactor")
    return StoredSession(
        home=tmp_path,
        stored={
            LONG: (long, exchange(LONG, "Tell me everything", LONG_REPLY)),
            "c-other": (other, exchange("c-other", "Pottery?", "Your bowl collapsed.")),
            "c-third": (third, exchange("c-third", "Refactor?", "The review queue.")),
        },
    )


def screen_lines(app: Any) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def open_browser(pilot: Any) -> Any:
    from sadie_tui.tui.screens.conversations import BrowserScreen

    app = pilot.app
    await until(pilot, app.memory_ready.is_set)
    await pilot.press("ctrl+l")
    browser = await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen)
    await until(pilot, lambda: browser.conversations, what="the listing")
    return browser


async def test_a_long_message_makes_a_short_snippet(tmp_path, monkeypatch) -> None:
    """A 5,000-character message found by a search shows as one line around the match, cut
    with an ellipsis at both ends, not as thirty lines."""
    fake = browser_session(tmp_path)
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    launch = Launch(home=tmp_path, settings=fake.settings)
    app = SadieApp(launch, session_factory=lambda _: fake, clock=now, warm_embedder=False)
    async with app.run_test(size=(100, 32)) as pilot:
        browser = await open_browser(pilot)
        await pilot.press(*"marathon")
        await until(pilot, lambda: [c.id for c in browser.conversations] == [LONG])
        await until(pilot, lambda: any("marathon" in line for line in screen_lines(app)))
        shown = [line for line in screen_lines(app) if "w0" in line]
        assert len(shown) == 1, shown
        line = shown[0].strip()
        assert "marathon" in line and line.startswith("sadie: …") and line.endswith("…")


def browser_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SadieApp, StoredSession]:
    fake = browser_session(tmp_path)
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    launch = Launch(home=tmp_path, settings=fake.settings)
    app = SadieApp(launch, session_factory=lambda _: fake, clock=now, warm_embedder=False)
    return app, fake


async def test_escape_leaves_the_search_box_keeping_the_filter(tmp_path, monkeypatch) -> None:
    """``/``, typing, escape: focus is on the list with the filter kept, so ``p`` pins the
    highlighted row instead of typing a "p"; a second escape clears the filter, a third goes
    back."""
    from sadie_tui.tui.screens.chat import ChatScreen
    from sadie_tui.tui.screens.conversations import ConversationList

    app, fake = browser_app(tmp_path, monkeypatch)
    pinned = fake.pins
    async with app.run_test(size=(100, 32)) as pilot:
        browser = await open_browser(pilot)
        search = browser.query_one("#browser-search")
        await pilot.press("slash", *"marathon")
        await until(pilot, lambda: [c.id for c in browser.conversations] == [LONG])
        await pilot.press("escape")
        assert isinstance(app.focused, ConversationList) and search.value == "marathon"
        await pilot.press("p")
        assert search.value == "marathon"
        await until(pilot, lambda: pinned == [(LONG, True)], what="the pin")
        await pilot.press("escape")
        assert search.value == "" and app.screen is browser
        await until(pilot, lambda: len(browser.conversations) == 3)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ChatScreen))


async def test_tab_then_down_pins_the_highlighted_row(tmp_path, monkeypatch) -> None:
    """Tab (into the search box and back, or wherever it goes) then Down: ``p`` pins the row
    the list highlights, always."""
    app, fake = browser_app(tmp_path, monkeypatch)
    pinned = fake.pins
    async with app.run_test(size=(100, 32)) as pilot:
        browser = await open_browser(pilot)
        await pilot.press("tab", "down")
        highlighted = browser.query_one(ConversationList).highlighted_id()
        assert highlighted is not None
        await pilot.press("p")
        await until(pilot, lambda: pinned, what="the pin")
        assert [cid for cid, _ in pinned] == [highlighted]
        await pilot.press("tab", "tab", "down", "p")
        await until(pilot, lambda: len(pinned) == 2, what="the second pin")
        assert pinned[1][0] == browser.query_one(ConversationList).highlighted_id()


# -- 9. sources and keys ------------------------------------------------------------------------
EPS = [f"3f7f7a68-0b1c-4d2e-9f00-12345678900{n}" for n in range(3)]


def cited_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SadieApp, FakeSession]:
    """The app on a fake whose one reply cites three notes."""
    from sadie_tui.engine.events import CitationsEvent, CitationView, Done, Meta, Token

    cites = tuple(
        CitationView(ep, f"quote {n}", "verbatim", "verbatim", f"Note {n}", "2026-03-1{n}")
        for n, ep in enumerate(EPS)
    )
    fake = FakeSession(
        home=tmp_path,
        replies=[
            [
                Meta("c1", "fake:1b", "friend", False, "m2", "m1", "Notes"),
                Token("Three."),
                CitationsEvent(cites),
                Done("m2", 5.0, 3),
            ]
        ],  # fmt: skip
    )
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    launch = Launch(home=tmp_path, settings=fake.settings)
    app = SadieApp(launch, session_factory=lambda _: fake, clock=now, warm_embedder=False)
    return app, fake


async def ask(pilot: Any, text: str = "What do my notes say?") -> Any:
    app = pilot.app
    await until(pilot, app.memory_ready.is_set)
    chat = app.chat_screen
    chat.query_one(PromptInput).insert(text)
    await pilot.press("enter")
    reply = await until(pilot, lambda: chat.reply)
    await until(pilot, lambda: reply.status != "streaming" and not chat.streaming)
    return reply


async def test_up_and_down_move_between_citations_and_tab_passes_the_list(
    tmp_path, monkeypatch
) -> None:
    from sadie_tui.tui.widgets.citations import CitationItem
    from sadie_tui.tui.widgets.transcript import MessageView

    app, _ = cited_app(tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        await ask(pilot)
        await until(pilot, lambda: len(app.chat_screen.query(CitationItem)) == 3)
        await pilot.press("tab")
        assert isinstance(app.focused, CitationItem) and app.focused.number == 1
        await pilot.press("down")
        assert isinstance(app.focused, CitationItem) and app.focused.number == 2
        await pilot.press("down", "down")  # the last stays
        assert isinstance(app.focused, CitationItem) and app.focused.number == 3
        await pilot.press("up")
        assert isinstance(app.focused, CitationItem) and app.focused.number == 2
        await pilot.press("tab")  # past the list, in one stop
        assert isinstance(app.focused, MessageView)


async def test_the_footer_names_ctrl_y_on_a_focused_message(tmp_path, monkeypatch) -> None:
    from textual.widgets._footer import FooterKey

    from sadie_tui.tui.widgets.transcript import MessageView

    app, _ = cited_app(tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        reply = await ask(pilot)
        reply.focus()
        await pilot.pause()
        assert isinstance(app.focused, MessageView)
        keys = await until(
            pilot, lambda: {k.key: k.description for k in app.screen.query(FooterKey)}
        )
        assert "ctrl+y" in keys, keys


async def test_ctrl_c_says_how_to_quit_in_plain_words(tmp_path, monkeypatch) -> None:
    app, _ = cited_app(tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        reply = await ask(pilot)
        reply.focus()
        await pilot.press("ctrl+c")
        notes = [n.message for n in app._notifications]
        assert notes and not any("[b]" in n or "[/b]" in n for n in notes), notes
        assert any("ctrl+q" in n and "quit" in n for n in notes), notes


async def test_a_reply_cut_by_the_model_server_says_what_happened_and_that_ctrl_g_retries(
    ctx, ollama
) -> None:
    """The project's Ollama server drops the connection mid-stream (a half-sent body): the
    reply says so in words, and that ctrl+g retries; no exception class name anywhere."""
    import re

    from tests.support.ollama_server import Reply
    from tests.support.tui import make_app

    ollama.queue(Reply(["You wrote ", "that Maya ", "is moving"], stall_after=2, stall_seconds=0))
    app = make_app(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat_screen.query_one("StatusLine").online is not None)
        reply = await ask(pilot, "What did Maya say about moving?")
        assert reply.status == "error"
        note = str(reply.query_one(".note").render())
        said = [note, *(n.message for n in app._notifications)]
        assert "closed the connection" in note and "ctrl+g retries" in note, note
        assert not any(re.search(r"[A-Z][a-z]+[A-Z][A-Za-z]*(Error|Exception)", s) for s in said)


# -- 7. narrow terminals ------------------------------------------------------------------------
@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_a_narrow_chat_keeps_its_width_and_shows_the_sources_over_it(
    tmp_path, monkeypatch, size
) -> None:
    """Below 100 columns the sidebar hides and the chat keeps the screen's width; ctrl+b
    shows the sources over the chat, and ctrl+b or escape hides them. Headers, the status
    line and the footer fit: no word is cut."""
    from sadie_tui.tui.widgets.citations import CitationSidebar

    app, _ = cited_app(tmp_path, monkeypatch)
    async with app.run_test(size=size) as pilot:
        reply = await ask(pilot)
        chat = app.chat_screen
        transcript, sidebar = chat.query_one(Transcript), chat.query_one(CitationSidebar)
        await until(pilot, lambda: not sidebar.display and transcript.size.width >= size[0] - 6)
        width = transcript.size.width
        lines = screen_lines(app)
        header = next(line for line in lines if "sadie · 14:30" in line)
        assert "3 src" in header or "3 sources" in header, header
        assert "● fake:1b" in lines[-2] and "│ friend" in lines[-2] and "…" not in lines[-2]
        footer = lines[-1].rstrip()
        assert footer.endswith("f1 Help") and "▏" not in footer, footer
        await pilot.press("ctrl+b")
        assert sidebar.display and transcript.size.width == width  # over the chat, not beside
        await until(pilot, lambda: any("1. Note 0" in line for line in screen_lines(app)))
        await pilot.press("escape")
        assert not sidebar.display and reply.status == "complete"
        await pilot.press("ctrl+b")
        assert sidebar.display
        await pilot.press("ctrl+b")
        assert not sidebar.display


async def test_a_narrow_browser_footer_cuts_no_key(tmp_path, monkeypatch) -> None:
    app, _ = browser_app(tmp_path, monkeypatch)
    async with app.run_test(size=(60, 20)) as pilot:
        await open_browser(pilot)
        await pilot.pause()
        footer = screen_lines(app)[-1].rstrip()
        assert footer.endswith("f1 Help") and "▏" not in footer, footer


async def test_letters_typed_in_a_burst_after_slash_all_reach_the_search(
    tmp_path, monkeypatch
) -> None:
    """``/bike`` arriving at once (as a terminal sends a fast typist's keys): the letters that
    reach the list before the search box has focus are the search's, so ``e`` does not
    export."""
    from textual import events

    app, _ = browser_app(tmp_path, monkeypatch)
    async with app.run_test(size=(100, 32)) as pilot:
        browser = await open_browser(pilot)
        for key, character in [("slash", "/"), ("b", "b"), ("i", "i"), ("k", "k"), ("e", "e")]:
            app.post_message(events.Key(key, character))
        search = browser.query_one("#browser-search")
        await until(pilot, lambda: search.value.startswith("bik"))
        await pilot.pause()
        assert search.value == "bike"
        assert not (tmp_path / "exports").exists()
