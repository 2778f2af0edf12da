"""Issue 34, item 3: a record the persona leaves out is offered, never briefed, until the
person attaches it as a ``record`` chip (``engine/records_offer.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sadie_tui.config import load_settings
from sadie_tui.engine import chips
from sadie_tui.engine import conversations as conv
from sadie_tui.engine.events import ContextBudget, Done, RecordOffer, from_json, to_json
from sadie_tui.engine.operations import AddChip
from sadie_tui.engine.records_offer import STRONG_SHARE, message_words, strongly_matches
from sadie_tui.engine.session import Session
from tests.support.ollama_server import Reply
from tests.support.turns import run_chat

AURORA = "Calendar event: call with the Aurora CTO, 2026-03-02 15:00–15:30."
ASK = "What did we agree in my call with the Aurora CTO?"


def add_records(memory, folder: Path) -> None:
    """The Aurora call beside the sleep-tracker record NOTES already holds."""
    folder.mkdir()
    row = {"source": "calendar", "observed_at": "2026-03-02T15:00:00", "text": AURORA}
    (folder / "observations.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    memory.ingest([folder])


@pytest.fixture
def records(memory, tmp_path: Path):
    add_records(memory, tmp_path / "calendar")
    return memory


def session(memory) -> Session:
    return Session(memory, load_settings())


def budget_of(events: list) -> ContextBudget:
    return next(e for e in events if isinstance(e, ContextBudget))


def aurora_id(memory) -> str:
    row = memory.db.fetchone("SELECT id::VARCHAR FROM observations WHERE source = 'calendar'")
    assert row
    return str(row[0])


# -- the rule ---------------------------------------------------------------------------------
def test_a_record_strongly_matches_when_it_holds_half_the_message_words() -> None:
    words = message_words(ASK)
    assert set(words) == {"agre", "call", "aurora", "cto"}
    assert strongly_matches(words, AURORA)  # 3 of 4
    assert not strongly_matches(words, "Calendar event: dentist, 2026-03-04 09:00.")  # 0 of 4
    assert not strongly_matches(words, "Call with the bank, 2026-03-05.")  # 1 of 4
    assert strongly_matches(message_words("how did I sleep?"), "Slept 5h42m; 3 awakenings.")
    assert not strongly_matches([], AURORA)  # a message with no content words offers nothing
    assert STRONG_SHARE == 0.5


def test_the_offer_is_on_the_wire_and_read_back() -> None:
    offer = RecordOffer("r1", "calendar", "2026-03-02", AURORA)
    event = ContextBudget(1, 0, 0, 0, 1.0, True, offered=(offer,))
    data = to_json(event)
    assert data["offered"] == [
        {"id": "r1", "source": "calendar", "date": "2026-03-02", "text": AURORA}
    ]
    assert from_json(data) == event
    assert offer.line == f"2026-03-02 calendar · {AURORA}"
    long = RecordOffer("r2", "bank", "2026-03-03", "Paid " + "x" * 200 + "\nsecond line")
    assert long.line.endswith("x…") and len(long.line) == len("2026-03-03 bank · ") + 80


# -- the chat turn ------------------------------------------------------------------------------
def test_a_matching_record_is_offered_and_not_briefed(server, records) -> None:
    server.queue(Reply("I do not see that call in your notes."))
    events = run_chat(session(records), ASK)
    assert isinstance(events[-1], Done)
    offered = budget_of(events).offered
    assert offered == (RecordOffer(aurora_id(records), "calendar", "2026-03-02", AURORA),)
    briefing = server.requests[0]["messages"][0]["content"]
    assert "Aurora CTO" not in briefing.replace(ASK, "")  # the friend's rule holds
    assert "Slept 5h42m" not in briefing  # nor is the record that does not match offered
    assert chips.list_chips(records.db, events[0].conversation_id) == []


def test_nothing_is_offered_for_a_message_no_record_matches(server, records) -> None:
    server.queue(Reply("You ran with Ines."))
    events = run_chat(session(records), "What did Ines and I do on the weekend?")
    assert budget_of(events).offered == ()


def test_a_persona_that_takes_records_gets_no_offer(server, records) -> None:
    # The skeptic briefs records itself: the Aurora call is in its briefing, not offered.
    server.queue(Reply("You had a call with the Aurora CTO."))
    events = run_chat(session(records), ASK, persona="skeptic")
    assert budget_of(events).offered == ()
    assert "Aurora CTO" in server.requests[0]["messages"][0]["content"].replace(ASK, "")


def test_an_attached_record_is_in_the_next_briefing_and_not_offered_again(server, records) -> None:
    server.queue(Reply("I do not see that call."), Reply("You had it on 2 March."))
    comp = session(records)
    first = run_chat(comp, ASK)
    cid = first[0].conversation_id
    (offer,) = budget_of(first).offered
    chip = comp.call(AddChip(cid, "record", offer.id))
    assert (chip.kind, chip.label) == ("record", "2026-03-02 calendar")
    second = run_chat(comp, "When was it?", conversation_id=cid)
    assert budget_of(second).offered == () and budget_of(second).chips == 1
    briefing = server.requests[1]["messages"][0]["content"]
    assert f"[record] 2026-03-02 calendar\n{AURORA}" in briefing


def test_a_record_chip_is_found_and_resolved(records) -> None:
    (found,) = chips.find_attachable(records.db, "aurora", kind="record")
    assert (found.kind, found.label, found.date) == ("record", "2026-03-02 calendar", "2026-03-02")
    cid = conv.create_conversation(records.db, "Aurora").id
    chip = chips.add_chip(records.db, cid, "observation", found.ref_id[:8])
    content = chips.resolve(records.db, chip)
    assert (content.title, content.text, content.episode_id) == (
        "2026-03-02 calendar",
        AURORA,
        None,
    )


def test_sadie_chat_says_a_record_matches_and_how_to_attach_it(server, records) -> None:
    from click.testing import CliRunner

    from sadie_tui.cli import main_group

    records.close()  # the command opens the memory itself
    server.queue(Reply("I do not see that call."))
    result = CliRunner().invoke(main_group, ["chat", ASK])
    assert result.exit_code == 0, result.output
    cid = result.stderr.split("conversation ", 1)[1][:8]
    line = next(x for x in result.stderr.splitlines() if "a record matches" in x)
    assert f"2026-03-02 calendar · {AURORA}" in line
    assert f"sadie chips add {cid} record " in line
