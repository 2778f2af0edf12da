"""A model's habits (``reasoners.rates``): a step that never pays with a model is left out,
tried again now and then, and remembered beside the memory: the citations tail a small model
never writes (each asking costs it the instructions' tokens) and the ask's revision it never
improves on (each costs a draft)."""

from __future__ import annotations

import asyncio

from sadie_tui.config import load_settings
from sadie_tui.engine.prompt import CITATION_RULES, OPINION_ALONE, OPINION_RULE
from sadie_tui.engine.reasoners.rates import (
    HABIT_RETRY,
    HABIT_TRIES,
    RATES_FILE,
    REVISE,
    TAIL,
    Rates,
)
from sadie_tui.engine.session import Session
from tests.support.ollama_server import Reply

MODEL = "m:1b"


def test_a_step_that_never_pays_is_left_out_then_tried_again(tmp_path):
    rates = Rates(tmp_path / RATES_FILE)
    for _ in range(HABIT_TRIES - 1):
        assert rates.pays(MODEL, TAIL)
        rates.tried(MODEL, TAIL, paid=False)
    assert rates.pays(MODEL, TAIL)  # judged only after HABIT_TRIES tries
    rates.tried(MODEL, TAIL, paid=False)
    assert not rates.pays(MODEL, TAIL) and rates.habit(MODEL, TAIL) == f"0 of {HABIT_TRIES}"
    for _ in range(HABIT_RETRY - 1):
        rates.skipped(MODEL, TAIL)
    assert not rates.pays(MODEL, TAIL)
    rates.skipped(MODEL, TAIL)
    assert rates.pays(MODEL, TAIL)  # tried again after HABIT_RETRY turns without it
    rates.tried(MODEL, TAIL, paid=False)
    assert not rates.pays(MODEL, TAIL)
    # Kept beside the memory: the next launch knows; another model and step do not.
    rates.save()
    again = Rates(tmp_path / RATES_FILE)
    assert not again.pays(MODEL, TAIL)
    assert again.pays("other:7b", TAIL) and again.pays(MODEL, REVISE)


def test_a_step_that_pays_one_time_in_habit_tries_is_kept():
    rates = Rates()
    for n in range(4 * HABIT_TRIES):
        rates.tried(MODEL, REVISE, paid=n % HABIT_TRIES == 0)
        assert rates.pays(MODEL, REVISE)
    rates.tried(MODEL, REVISE, paid=False)
    assert not rates.pays(MODEL, REVISE)  # 4 of 25: under one in six


def _ask(session, question):
    return asyncio.run(session.ask(question))


def _system(request):
    return request["messages"][0]["content"]


def test_a_model_that_never_writes_the_tail_is_no_longer_asked_for_it(server, memory):
    session = Session(memory, load_settings())
    for _ in range(HABIT_TRIES + 1):
        # No tail: the citation pass points at the race-day sentence.
        server.queue(Reply("You finished in 3:58."), Reply('{"s": ["S1"]}', stream=False))
    results = [_ask(session, "How fast was my marathon?") for _ in range(HABIT_TRIES + 1)]
    drafts = [r for r in server.requests if not r.get("format")]
    assert len(drafts) == HABIT_TRIES + 1
    for request in drafts[:HABIT_TRIES]:
        assert CITATION_RULES in _system(request) and OPINION_RULE in _system(request)
        assert OPINION_ALONE not in _system(request)
    last = _system(drafts[-1])
    assert "@@CITATIONS@@" not in last and OPINION_ALONE in last and OPINION_RULE not in last
    assert [r.grounding["tail"] for r in results] == ["missing"] * HABIT_TRIES + ["unasked"]
    # Still grounded: the pass's citation checks out as it did when the tail was asked for.
    first, final = results[0], results[-1]
    assert final.grounding["repaired"] is True and final.answer == first.answer
    assert [(c.episode_id, c.quote, c.support) for c in final.citations] == [
        (c.episode_id, c.quote, c.support) for c in first.citations
    ]
    assert final.grounding["score"] == first.grounding["score"] == 1.0
    # The next sadie on this memory knows it from the first turn.
    known = Rates(memory.home / RATES_FILE)
    assert not known.pays(final.model, TAIL)


def test_a_model_that_writes_the_tail_keeps_being_asked(server, memory):
    session = Session(memory, load_settings())
    episode = memory.db.fetchone("SELECT id::VARCHAR FROM episodes WHERE title = 'Race day'")[0]
    tail = (
        f'\n@@CITATIONS@@\n[{{"episode": "{episode}", '
        '"quote": "Finished the Lisbon marathon in 3:58", "support": "verbatim"}]'
    )
    for _ in range(HABIT_TRIES + 1):
        server.queue(Reply("You finished in 3:58." + tail))
    results = [_ask(session, "How fast was my marathon?") for _ in range(HABIT_TRIES + 1)]
    assert all(CITATION_RULES in _system(r) for r in server.requests)
    assert {r.grounding["tail"] for r in results} == {"ok"}


def test_revisions_never_kept_are_no_longer_asked_for(server, memory):
    session = Session(memory, load_settings())
    for _ in range(HABIT_TRIES):
        # 3:15 is in no note: the draft is revised, the revision is no better, the draft kept.
        server.queue(
            Reply("You ran it in 3:15."),
            Reply('{"s": []}', stream=False),
            Reply("You ran it in 3:15."),
            Reply('{"s": []}', stream=False),
        )
    server.queue(Reply("You ran it in 3:15."), Reply('{"s": []}', stream=False))
    results = [_ask(session, "How fast was my marathon?") for _ in range(HABIT_TRIES + 1)]
    assert len(server.requests) == 4 * HABIT_TRIES + 2
    notes = [[s.note for s in r.stages if s.name == "revise"] for r in results]
    assert notes[:HABIT_TRIES] == [["draft kept; 1 unsupported"]] * HABIT_TRIES
    assert notes[-1] == [f"skipped: this model's revisions were kept 0 of {HABIT_TRIES} times"]
    assert results[-1].answer == results[0].answer
