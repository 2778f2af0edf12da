"""Conversations and messages on a real DuckDB file: ordering, search, archive, forget,
export/import, history for the briefing, id prefixes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sadie_tui.engine import conversations as conv
from sadie_tui.engine.conversations import AmbiguousIdError
from sadie_tui.engine.errors import NotFoundError, SadieError
from sadie_tui.engine.store.db import Database
from tests.test_chips import add_episode


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database.open(tmp_path / "sadie.duckdb")
    yield database
    database.close()


def _with_id(db: Database, cid: str, title: str) -> None:
    """A conversation with a chosen id (to make prefixes collide)."""
    db.execute("INSERT INTO conversations (id, title) VALUES (?, ?)", [cid, title])


def test_create_and_get(db: Database) -> None:
    c = conv.create_conversation(db, "  Running\nplans  ", persona="friend")
    assert c.title == "Running plans"
    assert c.persona == "friend"
    assert c.summary == "" and c.emotion is None and not c.pinned and c.archived_at is None
    assert c.message_count == 0
    assert isinstance(c.created_at, datetime) and c.created_at == c.updated_at
    assert conv.get_conversation(db, c.id) == c
    long = conv.create_conversation(db, "word " * 40)
    assert len(long.title) <= 60


def test_messages_round_trip_json_columns(db: Database) -> None:
    c = conv.create_conversation(db, "t")
    citations = [{"episode_id": "e1", "quote": "q", "support": "verbatim"}]
    mid = conv.add_message(
        db,
        c.id,
        "assistant",
        "hello",
        "complete",
        emotion="curious",
        model="m",
        metadata={"chunks": 3},
        citations=citations,
        latency_ms=12.5,
    )
    [m] = conv.messages(db, c.id)
    assert m.id == mid and m.conversation_id == c.id
    assert (m.role, m.content, m.status, m.emotion, m.model) == (
        "assistant",
        "hello",
        "complete",
        "curious",
        "m",
    )
    assert m.citations == citations and m.metadata == {"chunks": 3} and m.latency_ms == 12.5
    plain = conv.add_message(db, c.id, "user", "hi")
    assert (
        conv.get_message(db, plain).citations == [] and conv.get_message(db, plain).metadata == {}
    )
    assert conv.count_messages(db, c.id) == 2
    assert conv.get_conversation(db, c.id).message_count == 2


def test_add_message_bumps_updated_at_and_validates(db: Database) -> None:
    c = conv.create_conversation(db, "t")
    conv.add_message(db, c.id, "user", "hi")
    assert conv.get_conversation(db, c.id).updated_at > c.updated_at
    with pytest.raises(ValueError):
        conv.add_message(db, c.id, "robot", "hi")
    with pytest.raises(ValueError):
        conv.add_message(db, c.id, "user", "hi", "weird")
    with pytest.raises(NotFoundError):
        conv.add_message(db, "00000000-0000-0000-0000-000000000000", "user", "hi")


def test_update_message(db: Database) -> None:
    c = conv.create_conversation(db, "t")
    mid = conv.add_message(db, c.id, "assistant", "", "streaming")
    conv.update_message(
        db,
        mid,
        content="done now",
        status="complete",
        emotion="focused",
        citations=[{"episode_id": "x", "quote": "y", "support": "inference"}],
        latency_ms=99.0,
        metadata={"a": 1},
        model="qwen",
    )
    m = conv.get_message(db, mid)
    assert (m.content, m.status, m.emotion, m.latency_ms, m.model) == (
        "done now",
        "complete",
        "focused",
        99.0,
        "qwen",
    )
    assert m.citations[0]["support"] == "inference" and m.metadata == {"a": 1}
    conv.update_message(db, mid, status="interrupted")
    assert conv.get_message(db, mid).content == "done now"  # untouched fields stay
    with pytest.raises(NotFoundError):
        conv.update_message(db, "00000000-0000-0000-0000-000000000000", status="complete")
    with pytest.raises(ValueError):
        conv.update_message(db, mid, status="nope")


def test_recent_messages_limit_and_status_filter(db: Database) -> None:
    c = conv.create_conversation(db, "t")
    for i in range(15):
        conv.add_message(db, c.id, "user" if i % 2 == 0 else "assistant", f"m{i}")
    conv.add_message(db, c.id, "assistant", "half", "streaming")
    conv.add_message(db, c.id, "assistant", "broken", "error")
    conv.add_message(db, c.id, "system", "sys")
    conv.add_message(db, c.id, "assistant", "cut off", "interrupted")
    conv.add_message(db, c.id, "assistant", "withheld", "blocked")
    recent = conv.recent_messages(db, c.id)
    assert len(recent) == 12
    assert [m.content for m in recent] == [f"m{i}" for i in range(5, 15)] + ["cut off", "withheld"]
    assert [m.content for m in conv.recent_messages(db, c.id, limit=3)] == [
        "m14",
        "cut off",
        "withheld",
    ]
    assert conv.recent_messages(db, c.id, limit=0) == []
    assert len(conv.recent_messages(db, c.id[:8])) == 12  # a prefix works too
    with pytest.raises(NotFoundError):
        conv.recent_messages(db, "ffffffff")
    assert len(conv.messages(db, c.id)) == 20
    assert conv.count_messages(db, c.id) == 20
    assert conv.count_messages(db, c.id[:8]) == 20


def test_messages_keep_order_when_written_fast(db: Database) -> None:
    c = conv.create_conversation(db, "t")
    for i in range(30):
        conv.add_message(db, c.id, "user", str(i))
    assert [m.content for m in conv.messages(db, c.id)] == [str(i) for i in range(30)]


def test_set_state(db: Database) -> None:
    c = conv.create_conversation(db, "t")
    conv.set_state(db, c.id, emotion="playful", summary="s", title="New title", persona="coach")
    got = conv.get_conversation(db, c.id)
    assert (got.emotion, got.summary, got.title, got.persona) == (
        "playful",
        "s",
        "New title",
        "coach",
    )
    conv.set_state(db, c.id, emotion="serious")
    got = conv.get_conversation(db, c.id)
    assert got.emotion == "serious" and got.summary == "s"
    with pytest.raises(NotFoundError):
        conv.set_state(db, "ffffffff", emotion="serious")


def test_list_order_pinned_first_then_last_activity(db: Database) -> None:
    a = conv.create_conversation(db, "alpha")
    b = conv.create_conversation(db, "beta")
    c = conv.create_conversation(db, "gamma")
    assert [x.title for x in conv.list_conversations(db)] == ["gamma", "beta", "alpha"]
    conv.add_message(db, a.id, "user", "bump")
    assert [x.title for x in conv.list_conversations(db)] == ["alpha", "gamma", "beta"]
    conv.pin(db, b.id)
    listed = conv.list_conversations(db)
    assert [x.title for x in listed] == ["beta", "alpha", "gamma"]
    assert listed[0].pinned and listed[1].message_count == 1
    conv.pin(db, b.id, False)
    assert [x.title for x in conv.list_conversations(db)] == ["alpha", "gamma", "beta"]
    assert [x.title for x in conv.list_conversations(db, limit=2)] == ["alpha", "gamma"]
    # renaming or pinning is not activity
    conv.rename(db, c.id, "gamma two")
    assert [x.title for x in conv.list_conversations(db)] == ["alpha", "gamma two", "beta"]


def test_archive_hides_and_archived_lists_only_archived(db: Database) -> None:
    a = conv.create_conversation(db, "kept")
    b = conv.create_conversation(db, "put away")
    conv.archive(db, b.id)
    assert [x.title for x in conv.list_conversations(db)] == ["kept"]
    archived = conv.list_conversations(db, archived=True)
    assert [x.title for x in archived] == ["put away"]
    assert archived[0].archived_at is not None
    conv.archive(db, b.id, False)
    assert {x.id for x in conv.list_conversations(db)} == {a.id, b.id}
    assert conv.list_conversations(db, archived=True) == []


def test_search_titles_and_message_text(db: Database) -> None:
    a = conv.create_conversation(db, "Marathon training")
    b = conv.create_conversation(db, "Work worries")
    conv.add_message(db, b.id, "user", "Marta said MAYBE in the spring")
    conv.create_conversation(db, "Something else")
    assert [x.id for x in conv.list_conversations(db, search="marathon")] == [a.id]
    assert [x.id for x in conv.list_conversations(db, search="maybe in")] == [b.id]
    assert conv.list_conversations(db, search="100%") == []  # LIKE wildcards are literal
    assert len(conv.list_conversations(db, search="  ")) == 3
    conv.archive(db, b.id)
    assert conv.list_conversations(db, search="marta") == []
    assert [x.id for x in conv.list_conversations(db, search="marta", archived=True)] == [b.id]


def test_forget_removes_everything_of_it(db: Database) -> None:
    keep = conv.create_conversation(db, "keep")
    gone = conv.create_conversation(db, "gone")
    for c in (keep, gone):
        mid = conv.add_message(db, c.id, "user", "hello")
        db.execute(
            "INSERT INTO chips (id, conversation_id, kind, ref_id, label) VALUES (?, ?, ?, ?, ?)",
            [conv.new_id(), c.id, "wiki", "x", "X"],
        )
        db.execute(
            "INSERT INTO policy_events (id, conversation_id, message_id, policy, action)"
            " VALUES (?, ?, ?, 'p', 'warn')",
            [conv.new_id(), c.id, mid],
        )
        turn = conv.new_id()
        db.execute(
            "INSERT INTO turns (id, kind, query, conversation_id) VALUES (?, 'chat', 'q', ?)",
            [turn, c.id],
        )
        db.execute(
            "INSERT INTO retrievals (turn_id, chunk_id, episode_id, rank) VALUES (?, 1, ?, 1)",
            [turn, conv.new_id()],
        )
    conv.forget(db, gone.id[:8])
    with pytest.raises(NotFoundError):
        conv.get_conversation(db, gone.id)
    for table in ("messages", "chips", "policy_events", "turns"):
        rows = db.fetchall(f"SELECT CAST(conversation_id AS VARCHAR) FROM {table}")
        assert rows == [(keep.id,)], table
    assert db.fetchone("SELECT count(*) FROM retrievals") == (1,)


def test_id_prefixes(db: Database) -> None:
    _with_id(db, "abcd1111-0000-4000-8000-000000000000", "a")
    _with_id(db, "abcd2222-0000-4000-8000-000000000000", "b")
    assert conv.resolve_id(db, "abcd1") == "abcd1111-0000-4000-8000-000000000000"
    assert conv.get_conversation(db, "ABCD2222").title == "b"
    assert conv.resolve_id(db, "abcd1111-0000-4000-8000-000000000000").startswith("abcd1111")
    with pytest.raises(AmbiguousIdError) as ambiguous:
        conv.get_conversation(db, "abcd")
    assert "abcd1111" in ambiguous.value.message and "abcd2222" in ambiguous.value.message
    with pytest.raises(NotFoundError, match="no conversation 'ffff'"):
        conv.get_conversation(db, "ffff")
    with pytest.raises(NotFoundError):
        conv.get_conversation(db, "abc")  # shorter than four characters
    with pytest.raises(NotFoundError):
        conv.get_conversation(db, "")
    with pytest.raises(NotFoundError):
        conv.pin(db, "nope")


def test_summary_from_first_exchange() -> None:
    s = conv.summary_from_first_exchange("How was my\nmarathon?", "You finished in 3:58.")
    assert s == "How was my marathon? → You finished in 3:58."
    long = conv.summary_from_first_exchange("why " * 50, "because " * 50)
    assert len(long) <= 140 and "\n" not in long and " → " in long
    assert conv.summary_from_first_exchange("just me", "") == "just me"
    assert conv.summary_from_first_exchange("", "only sadie") == "only sadie"


def _sample(db: Database) -> conv.Conversation:
    c = conv.create_conversation(db, "Race [bold]day[/bold]", persona="friend")
    conv.add_message(db, c.id, "user", "How did the marathon go?")
    conv.add_message(
        db,
        c.id,
        "assistant",
        "You finished in 3:58 and cried at the finish line.",
        emotion="celebrating",
        model="qwen3:1.7b",
        latency_ms=840.0,
        metadata={"chunks": 4},
        citations=[
            {
                "episode_id": "3f7f7a68-0b1c-4d2e-9f00-1234567890ab",
                "quote": "3:58",
                "support": "verbatim",
                "title": "Race day",
                "date": "2026-10-11",
            },
            {
                "episode_id": "3f7f7a68-0b1c-4d2e-9f00-1234567890ab",
                "quote": "proud",
                "support": "inference",
                "title": "Race day",
                "date": "2026-10-11",
            },
        ],
    )
    conv.set_state(db, c.id, emotion="celebrating", summary="How did it go? → 3:58")
    return c


def test_export_markdown(db: Database) -> None:
    c = _sample(db)
    md = conv.export(db, c.id[:6], "md")
    assert md.startswith("# Race [bold]day[/bold]\n")
    assert "## You ·" in md and "## sadie ·" in md and "· celebrating" in md
    assert "You finished in 3:58" in md
    assert "1. Race day (2026-10-11) — verbatim: “3:58”" in md
    assert "2. Race day (2026-10-11) — reading between the lines: “proud”" in md
    with pytest.raises(SadieError):
        conv.export(db, c.id, "pdf")


def test_export_names_the_personas_the_replies_used(db: Database) -> None:
    c = conv.create_conversation(db, "Two lenses", persona="friend")
    conv.add_message(db, c.id, "user", "How am I doing?")
    conv.add_message(db, c.id, "assistant", "Well.", metadata={"persona": "analyst"})
    md = conv.export(db, c.id, "md")
    assert "persona analyst" in md and "persona friend" not in md  # the one used, not started
    conv.add_message(db, c.id, "user", "And now?")
    conv.add_message(db, c.id, "assistant", "Better.", metadata={"persona": "coach"})
    md = conv.export(db, c.id, "md")
    assert "personas analyst, coach" in md
    assert "· as coach" in md and "· as analyst" in md


def test_export_json_round_trip(db: Database) -> None:
    c = _sample(db)
    # The cited note is in this memory: an import polices its citations against it.
    add_episode(
        db, "Race day", "2026-10-11", "Finished in 3:58.", "3f7f7a68-0b1c-4d2e-9f00-1234567890ab"
    )
    db.execute(
        "INSERT INTO chips (id, conversation_id, kind, ref_id, label) VALUES (?, ?, ?, ?, ?)",
        [conv.new_id(), c.id, "wiki", "ref-1", "Ines"],
    )
    text = conv.export(db, c.id, "json")
    data = json.loads(text)
    assert data["conversation"]["id"] == c.id and len(data["messages"]) == 2
    copy = conv.import_json(db, text)
    assert copy.id != c.id
    assert (copy.title, copy.summary, copy.emotion, copy.persona, copy.message_count) == (
        c.title,
        "How did it go? → 3:58",
        "celebrating",
        "friend",
        2,
    )
    old, new = conv.messages(db, c.id), conv.messages(db, copy.id)
    strip = ("id", "conversation_id")
    assert [{k: v for k, v in m.to_json().items() if k not in strip} for m in old] == [
        {k: v for k, v in m.to_json().items() if k not in strip} for m in new
    ]
    again = json.loads(conv.export(db, copy.id, "json"))
    assert again["chips"][0]["label"] == "Ines"
    assert len(conv.list_conversations(db)) == 2
    with pytest.raises(SadieError):
        conv.import_json(db, "not json")
    with pytest.raises(SadieError):
        conv.import_json(db, "[]")


def test_created_at_can_be_given(db: Database) -> None:
    c = conv.create_conversation(db, "t")
    past = datetime.now() - timedelta(days=3)
    conv.add_message(db, c.id, "user", "old", created_at=past)
    assert conv.messages(db, c.id)[0].created_at == past
    assert conv.get_conversation(db, c.id).updated_at == c.updated_at  # never moves back
