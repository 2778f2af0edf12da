"""``Session.chat(..., chips=)``: chips sent with a message are attached by the engine, in one
place, before the turn reads the conversation's chips; to the conversation the turn creates
when there is none yet. A chip that cannot be attached fails the turn before any reply, and
takes back only a conversation the turn itself created."""

from __future__ import annotations

from sadie_tui.config import load_settings
from sadie_tui.engine import conversations as conv
from sadie_tui.engine.chips import NewChip, list_chips
from sadie_tui.engine.errors import ErrorKind
from sadie_tui.engine.events import ContextBudget, Done, ErrorEvent, Meta
from sadie_tui.engine.session import Session
from tests.support.ollama_server import Reply, split_pieces
from tests.support.turns import run_chat


def session(memory) -> Session:
    return Session(memory, load_settings())


def test_chips_go_with_the_first_message_into_the_new_conversation(server, memory):
    server.queue(Reply(split_pieces("You run with Ines on weekends.", 3)))
    events = run_chat(
        session(memory), "What do Ines and I do?", chips=[NewChip("wiki", "Ines", "my Ines")]
    )
    meta = events[0]
    assert isinstance(meta, Meta) and isinstance(events[-1], Done)
    chips = list_chips(memory.db, meta.conversation_id)
    assert [(c.kind, c.label) for c in chips] == [("wiki", "my Ines")]
    assert next(e for e in events if isinstance(e, ContextBudget)).chips == 1
    briefing = server.requests[0]["messages"][0]["content"]
    assert "Runs with me on weekends" in briefing  # attached before the turn briefed


def test_chips_go_into_an_existing_conversation_named_by_a_prefix(server, memory):
    cid = conv.create_conversation(memory.db, "Runs").id
    server.queue(Reply(split_pieces("Yes.", 2)))
    events = run_chat(
        session(memory), "And Ines?", conversation_id=cid[:8], chips=[NewChip("wiki", "Ines")]
    )
    assert isinstance(events[0], Meta) and events[0].conversation_id == cid
    assert [c.label for c in list_chips(memory.db, cid)] == ["Ines"]


def test_a_bad_chip_fails_the_turn_and_takes_back_the_new_conversation(server, memory):
    events = run_chat(session(memory), "hello", chips=[NewChip("wiki", "nobody")])
    assert len(events) == 1 and isinstance(events[0], ErrorEvent)
    assert events[0].code == ErrorKind.NOT_FOUND
    assert conv.list_conversations(memory.db) == []
    assert server.requests == []  # the model was never asked


def test_a_bad_chip_leaves_an_existing_conversation_alone(server, memory):
    cid = conv.create_conversation(memory.db, "Runs").id
    events = run_chat(
        session(memory), "hello", conversation_id=cid[:8], chips=[NewChip("wiki", "nobody")]
    )
    assert [type(e) for e in events] == [ErrorEvent]
    assert [c.id for c in conv.list_conversations(memory.db)] == [cid]
    assert conv.messages(memory.db, cid) == []


def test_a_who_is_message_gets_the_wiki_page_as_a_chip_marked_as_sadies(server, memory):
    # Issue 34, item 10: what sadie puts in the briefing is a chip the person sees and can
    # remove, marked as sadie's; the model is never told the person attached it.
    from sadie_tui.engine.prompt import ADDED_HEADING, ATTACHED_HEADING

    server.queue(Reply(split_pieces("Ines is your partner.", 2)), Reply("Yes."))
    events = run_chat(session(memory), "Who is Ines?")
    cid = events[0].conversation_id
    (chip,) = list_chips(memory.db, cid)
    assert (chip.kind, chip.label, chip.added_by) == ("wiki", "Ines", "sadie")
    budget = next(e for e in events if isinstance(e, ContextBudget))
    assert budget.added == ("Ines",) and budget.chips == 1
    briefing = server.requests[0]["messages"][0]["content"]
    assert ADDED_HEADING in briefing and ATTACHED_HEADING not in briefing
    assert "Runs with me on weekends" in briefing
    # Asked again, the chip is already there: nothing is added twice.
    again = run_chat(session(memory), "Who is Ines, again?", conversation_id=cid)
    assert next(e for e in again if isinstance(e, ContextBudget)).added == ()
    assert len(list_chips(memory.db, cid)) == 1


def test_a_chip_sadie_added_is_marked_in_the_bar():
    from sadie_tui.tui.widgets.chip_bar import ChipItem, chip_text

    mine = chip_text(ChipItem("wiki", "w1", "Ines")).plain
    sadies = chip_text(ChipItem("wiki", "w1", "Ines", added_by="sadie")).plain
    assert sadies == "✦ " + mine and not mine.startswith("✦")
