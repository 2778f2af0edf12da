"""Recency intent read from a question, like the time words: which phrasings ask for the
newest or the oldest notes, which do not, and what the keyword text keeps."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pytest

from sadie_tui.engine.retrieval.keyword.tokens import query_tokens
from sadie_tui.engine.retrieval.recency import Recency, by_date, parse_recency, strip_recency
from sadie_tui.engine.retrieval.timewords import parse_time_window

NOW = datetime(2026, 11, 30, 9, 0)


@pytest.mark.parametrize(
    ("query", "order", "phrase"),
    [
        ("When did I last run with Ines?", "newest", "When did I last"),
        ("the last time I saw Mum", "newest", "the last time"),
        ("What was my latest review like?", "newest", "my latest"),
        ("Who did I see most recently?", "newest", "most recently"),
        ("the most recent physio session", "newest", "the most recent"),
        ("How long since I called Dad?", "newest", "How long since"),
        ("how long has it been since my last run", "newest", "how long has it been since"),
        ("When did I stop drinking coffee?", "newest", "When did I stop"),
        ("my last run", "newest", "my last"),
        ("Where did we last eat out?", "newest", "we last"),
        ("the first time I ran 10k", "oldest", "the first time"),
        ("When did I first meet Rui?", "oldest", "When did I first"),
        ("When did Tomás first show me Bolacha?", "oldest", "When did Tomás first"),
        ("When did Ines last run with me?", "newest", "When did Ines last"),
        ("when did I start running", "oldest", "when did I start"),
        ("When did we begin the Warden project?", "oldest", "When did we begin"),
        ("my first marathon", "oldest", "my first"),
        ("the earliest note about the knee", "oldest", "the earliest"),
    ],
)
def test_recency_is_read(query: str, order: str, phrase: str) -> None:
    assert parse_recency(query) == Recency(order, phrase)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "query",
    [
        "what happened last week?",  # a window, not recency
        "What did I do last March?",
        "What did I eat last Tuesday?",
        "in the last two weeks",
        "the last few days",
        "last night at the party",
        "last summer in Leeds",
        "at last, the flat",
        "the first of March",
        "first aid course",
        "the first floor flat",
        "What did I worry about in March?",
        "Who is Tomás to me?",
        "",
    ],
)
def test_not_recency(query: str) -> None:
    assert parse_recency(query) is None


def test_last_week_stays_a_window() -> None:
    window = parse_time_window("what happened last week?", NOW)
    assert window is not None and window.phrase == "last week"
    assert parse_recency("what happened last week?") is None


def test_the_leftmost_phrase_wins() -> None:
    assert parse_recency("my first run since the last time") == Recency("oldest", "my first")


def test_the_keyword_text_loses_the_intent_words_only() -> None:
    q = "When did I last run with Ines?"
    assert strip_recency(q, parse_recency(q)) == "When did I run with Ines?"
    q = "the most recent physio session"
    assert strip_recency(q, parse_recency(q)) == "the physio session"
    assert strip_recency("no intent here", None) == "no intent here"


def test_irregular_verbs_find_their_other_forms() -> None:
    assert query_tokens("run with Ines", forms=True) == ["run", "ine", "ran"]
    assert set(query_tokens("when I met Rui", forms=True)) == {"met", "rui", "meet"}
    assert query_tokens("run with Ines") == ["run", "ine"]  # the plain channel is unchanged


@dataclass(frozen=True)
class _C:
    title: str
    final: float
    occurred_at: datetime
    in_window: bool | None = None
    on_topic: bool | None = None


def test_by_date_orders_the_relevant_and_leaves_the_rest() -> None:
    chunks = [
        _C("a", 1.0, datetime(2026, 1, 1)),
        _C("b", 0.9, datetime(2026, 6, 1)),
        _C("weak", 0.2, datetime(2026, 11, 1)),
        _C("c", 0.7, datetime(2026, 3, 1)),
        _C("out", 0.95, datetime(2026, 12, 1), in_window=False),
    ]
    newest = by_date(chunks, Recency("newest", "last"))
    assert [c.title for c in newest] == ["b", "c", "a", "weak", "out"]
    oldest = by_date(chunks, Recency("oldest", "first"))
    assert [c.title for c in oldest] == ["a", "c", "b", "weak", "out"]
    assert by_date(chunks, None) == chunks
