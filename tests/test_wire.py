"""The wire codec (``engine/wire.py``): every shape's JSON reads back as the same value, derived
fields are printed and never read, the events keep their one JSON form (``type`` first), and
a body that does not fit its shape is refused in one line naming the field. Pure: no memory,
no server."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

import pytest

from sadie_tui.engine import events as ev
from sadie_tui.engine.chips import Candidate, NewChip
from sadie_tui.engine.conversations import Conversation, ConversationShow, Message
from sadie_tui.engine.episodes import Episode
from sadie_tui.engine.operations import Rename
from sadie_tui.engine.reasoners.ollama import ModelInfo
from sadie_tui.engine.retrieval import BeliefHit, ObservationHit, TimeWindow
from sadie_tui.engine.retrieval.recency import Recency
from sadie_tui.engine.retrieval.report import Search, SearchChunk
from sadie_tui.engine.store.chips import Chip
from sadie_tui.engine.turns.ask import AskResult, Stage
from sadie_tui.engine.wire import ShapeError, dump, load
from sadie_tui.serve.shapes import ApiChatRequest, AskRequest, ChatRequest, Error

WHEN = datetime(2026, 3, 14, 9, 5, 7, 123000)
CITES = (
    ev.CitationView("e1", "Ran 18 km", "verbatim", "paraphrase", "Long run", "2026-11-20"),
    ev.CitationView("e2", "knee", "inference", "inference", backs="b", unbacked=("18 km",)),
    ev.CitationView("e3", "Ines", "verbatim", "verbatim", origin="sadie"),
)
CONVERSATION = Conversation("c1", "Runs", "s", None, "friend", True, WHEN, WHEN, WHEN, 2)
MESSAGE = Message(
    "m1", "c1", "assistant", "hi", "complete", "curious", [CITES[0].as_json()], "qwen3:1.7b",
    12.5, {"tail": "ok"}, WHEN,
)  # fmt: skip
CHIP = Chip("ch", "c1", "wiki", "Ines", "Ines", None, WHEN)
SEARCH = Search(
    "q", "q", "analyst", TimeWindow(WHEN, None, "last week"), Recency("newest", "last time"),
    12.3, True, "t1", ("a notice",),
    (SearchChunk(1, 7, "e1", "Long run", "journal", date(2026, 11, 20), "Ran", {"vector": 0.5,
     "keyword": None}, 0.1, 0.2, True),),
    (BeliefHit("b1", "Running keeps me sane", "active", 0.8, 0.3),),
    (ObservationHit("o1", "sleep-tracker", WHEN, "Slept 5h42m", 0.4, False),),
)  # fmt: skip
ASK = AskResult(
    "q", "a", [CITES[0]], "analyst", False, {"score": 1.0}, [Stage("draft", 1.0)],
    None, "op", "curious", "m", True, 3, 12.0, ["n"], [CITES[2]],
)  # fmt: skip
EVENTS: list[ev.Event] = [
    ev.Meta("c", "m", "friend", True, "mid", "uid", "title", ("a", "b")),
    ev.Status("embedding model loading…"),
    ev.EmotionEvent("curious"),
    ev.ContextBudget(3, 4, 1, 2, 12.5, True),
    ev.Waiting(0.5),
    ev.Thinking(1.5),
    ev.Token("hé\n"),
    ev.Checking(),
    ev.CitationsEvent(
        CITES, ({"text": "18 km", "start": 1, "end": 6},), True, "missing", CITES[2:]
    ),
    ev.Replace("v", "policy: x"),
    ev.Done("mid", 12.3, 4, tokens=5, tokens_per_s=3.25, emotion="curious", cut="length"),
    ev.ErrorEvent("boom", "stream", "run it again", "mid"),
]


@pytest.mark.parametrize(
    "value",
    [
        *CITES,
        CONVERSATION,
        MESSAGE,
        CHIP,
        Candidate("wiki", "Ines", "Ines", "My partner.", None),
        ConversationShow(CONVERSATION, [MESSAGE], [CHIP]),
        SEARCH,
        ASK,
        Episode("e1", "Long run", "2026-11-20", "journal", "Ran 18 km."),
        ModelInfo("qwen3:1.7b", 1, "qwen3", "1.7B", "Q4_K_M"),
        *EVENTS,
    ],
    ids=lambda v: type(v).__name__,
)
def test_every_shape_reads_back_as_itself(value: Any) -> None:
    text = json.dumps(dump(value), ensure_ascii=False)  # what goes over the wire
    assert load(type(value), json.loads(text)) == value


def test_derived_fields_are_printed_and_never_read() -> None:
    assert dump(CONVERSATION)["archived"] is True
    assert [dump(c)["label"] for c in CITES] == [
        "verbatim",
        "reading between the lines",
        "found by sadie",
    ]
    shown = {**dump(CONVERSATION), "archived": False}  # a client's edit of a derived value
    assert load(Conversation, shown).archived is True


def test_the_shapes_that_were_written_by_hand_keep_their_keys() -> None:
    assert list(dump(CITES[0])) == [
        "episode_id", "quote", "support", "claimed", "title", "date", "origin", "backs",
        "unbacked", "doubt", "label",
    ]  # fmt: skip
    assert dump(CHIP)["created_at"] == WHEN.isoformat()
    assert dump(SEARCH)["chunks"][0]["date"] == "2026-11-20"
    assert dump(SEARCH)["window"] == {"start": WHEN.isoformat(), "end": None, "phrase": "last week"}


def test_events_keep_their_one_json_form() -> None:
    for event in EVENTS:
        data = ev.to_json(event)
        assert next(iter(data)) == "type" and data["type"] == event.type
        assert ev.from_json(json.loads(json.dumps(data))) == event
    token = json.dumps(ev.to_json(ev.Token("hé")), ensure_ascii=False)
    assert token == '{"type": "token", "value": "hé"}'
    assert ev.from_json({"type": "token", "value": "x", "later": 1}) == ev.Token("x")
    with pytest.raises(ValueError, match="unknown event type 'nope'"):
        ev.from_json({"type": "nope"})


@pytest.mark.parametrize(
    ("shape", "body", "said"),
    [
        (AskRequest, {}, "'question' is required"),
        (AskRequest, {"question": 3}, "'question' must be a string"),
        (AskRequest, {"question": "  "}, "'question' is empty"),
        (Rename, {"conversation_id": "c1", "title": None}, "'title' must be a string"),
        (ChatRequest, {"regenerate": "true"}, "'regenerate' must be true or false"),
        (ApiChatRequest, {"auto_continue": 1}, "'auto_continue' must be true or false"),
        (ChatRequest, {"chips": {"kind": "wiki"}}, "'chips' must be a list"),
        (ChatRequest, {"chips": ["wiki"]}, "'chips[0]' must be an object"),
        (ChatRequest, {"chips": [{"kind": "wiki"}]}, "'chips[0].ref' is required"),
        (NewChip, {"kind": " ", "ref": "x"}, "'kind' is empty"),
        (Error, [], "the body must be an object"),
    ],
)
def test_a_body_that_does_not_fit_is_refused_in_one_line(shape: Any, body: Any, said: str) -> None:
    with pytest.raises(ShapeError) as refused:
        load(shape, body)
    assert refused.value.message == said


def test_a_body_that_fits_is_read() -> None:
    chat = load(ApiChatRequest, {"message": "hi", "chips": [{"kind": "wiki", "ref": "Ines"}]})
    assert chat.chips == [NewChip("wiki", "Ines")] and not chat.auto_continue
    assert load(ChatRequest, {"message": "hi", "persona": None}).persona is None
