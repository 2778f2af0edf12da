"""Context chips on a real DuckDB file: every kind attached, resolved, listed, removed, found."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from sadie_tui.engine import chips
from sadie_tui.engine import conversations as conv
from sadie_tui.engine.conversations import AmbiguousIdError
from sadie_tui.engine.errors import ConfigError, NotFoundError
from sadie_tui.engine.store.db import Database

VECTOR = "[" + ", ".join(["0.05"] * 384) + "]"


@dataclass
class Rows:
    wiki: str
    wiki2: str
    brief: str
    card: str
    race: str
    run: str
    ines: int
    pedro: int
    lisbon: int


def _uuid() -> str:
    return str(uuid.uuid4())


def add_episode(db: Database, title: str, day: str, text: str, eid: str | None = None) -> str:
    eid = eid or _uuid()
    db.execute(
        "INSERT INTO episodes (id, kind, title, source, source_key, occurred_at, content_hash,"
        " text) VALUES (?, 'journal', ?, ?, ?, ?, 'h', ?)",
        [eid, title, f"{title}.md", eid, datetime.fromisoformat(day), text],
    )
    return eid


def add_chunk(db: Database, episode: str, ordinal: int, text: str, entities: list[int]) -> None:
    chunk = db.fetchone(
        f"INSERT INTO chunks (episode_id, ordinal, text, embedding)"
        f" VALUES (?, ?, ?, '{VECTOR}'::FLOAT[384]) RETURNING id",
        [episode, ordinal, text],
    )
    for entity in entities:
        db.execute(
            "INSERT INTO entity_mentions (entity_id, chunk_id, episode_id) VALUES (?, ?, ?)",
            [entity, chunk[0], episode],
        )


def seed(db: Database) -> Rows:
    """A little memory of every kind, written with plain SQL."""
    wiki, wiki2, brief, card = _uuid(), _uuid(), _uuid(), _uuid()
    db.execute(
        "INSERT INTO wiki_entries (id, title, kind, text, source_key) VALUES"
        " (?, 'Ines', 'person', 'My partner. Runs with me on weekends in Lisbon.', 'wiki/Ines'),"
        " (?, 'Warden', 'project', 'The auth service I keep rewriting.', 'wiki/Warden')",
        [wiki, wiki2],
    )
    db.execute(
        "INSERT INTO briefs (id, title, occurred_at, text, source_key) VALUES"
        " (?, 'Week of 17 November', '2026-11-23', 'A week of long runs and promotion worries.',"
        " 'b1')",
        [brief],
    )
    db.execute(
        "INSERT INTO today_cards (id, title, occurred_at, text, source_key) VALUES"
        " (?, 'The garden', '2026-11-29', 'Three weeks since you mentioned the garden.', 't1')",
        [card],
    )
    race = add_episode(
        db, "Race day", "2026-10-11", "Finished the Lisbon marathon in 3:58. Ines had a sign."
    )
    run = add_episode(db, "Long run", "2026-11-20", "Ran 18 km along the Tagus with Ines.")
    db.execute(
        "INSERT INTO entities VALUES (1, 'Ines', 'ines', 'person'),"
        " (2, 'Pedro', 'pedro', 'person'), (3, 'Lisbon', 'lisbon', 'place')"
    )
    add_chunk(db, race, 0, "Finished the Lisbon marathon in 3:58. Ines had a sign.", [1, 3])
    add_chunk(db, run, 0, "Ran 18 km along the Tagus with Ines.", [1])
    db.execute("INSERT INTO entity_edges VALUES (1, 3, 2.0), (3, 1, 2.0), (1, 2, 1.0), (2, 1, 1.0)")
    return Rows(wiki, wiki2, brief, card, race, run, 1, 2, 3)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database.open(tmp_path / "sadie.duckdb")
    yield database
    database.close()


# The seed holds no record (an observation): tests/test_records_offer.py attaches those.
SEEDED_KINDS = [k for k in chips.KINDS if k != "record"]


@pytest.fixture
def rows(db: Database) -> Rows:
    return seed(db)


@pytest.fixture
def cid(db: Database) -> str:
    return conv.create_conversation(db, "chat").id


def test_add_every_kind_and_list_in_order(db: Database, rows: Rows, cid: str) -> None:
    added = [
        chips.add_chip(db, cid, "wiki", rows.wiki),
        chips.add_chip(db, cid, "source", rows.race[:8]),
        chips.add_chip(db, cid, "brief", rows.brief),
        chips.add_chip(db, cid, "graph_entity", "Ines"),
        chips.add_chip(db, cid, "discourse", rows.card, label="Garden nudge"),
    ]
    assert [c.kind for c in added] == SEEDED_KINDS
    assert [c.label for c in added] == [
        "Ines",
        "Race day",
        "Week of 17 November",
        "Ines",
        "Garden nudge",
    ]
    assert added[1].ref_id == rows.race and added[3].ref_id == "1"
    assert added[0].snippet == "My partner. Runs with me on weekends in Lisbon."
    assert added[3].snippet == "Ines, person, mentioned in 2 episodes"
    assert all(c.conversation_id == cid for c in added)
    assert chips.list_chips(db, cid) == added
    assert chips.list_chips(db, cid[:6]) == added


def test_graph_entity_by_id_key_or_name(db: Database, rows: Rows, cid: str) -> None:
    assert chips.add_chip(db, cid, "graph_entity", "2").label == "Pedro"
    assert chips.add_chip(db, cid, "graph_entity", "  LISBON ").ref_id == "3"
    assert chips.add_chip(db, cid, "entity", "ines").ref_id == "1"  # alias for the kind


def test_refs_by_exact_title_and_aliases(db: Database, rows: Rows, cid: str) -> None:
    assert chips.add_chip(db, cid, "wiki", "warden").ref_id == rows.wiki2
    assert chips.add_chip(db, cid, "today", "The garden").ref_id == rows.card
    assert chips.add_chip(db, cid, "episode", "Long run").ref_id == rows.run


def test_duplicates_return_the_existing_chip(db: Database, rows: Rows, cid: str) -> None:
    first = chips.add_chip(db, cid, "wiki", rows.wiki)
    again = chips.add_chip(db, cid, "wiki", rows.wiki[:8], label="another label")
    assert again == first
    assert len(chips.list_chips(db, cid)) == 1
    other = conv.create_conversation(db, "other").id
    assert chips.add_chip(db, other, "wiki", rows.wiki).id != first.id


def test_errors(db: Database, rows: Rows, cid: str) -> None:
    with pytest.raises(ConfigError, match="graph_entity"):
        chips.add_chip(db, cid, "photo", "x")
    with pytest.raises(NotFoundError, match="no wiki entry 'nothing here'"):
        chips.add_chip(db, cid, "wiki", "nothing here")
    with pytest.raises(NotFoundError, match="no wiki entry 'ffffffff'"):
        chips.add_chip(db, cid, "wiki", "ffffffff")
    with pytest.raises(NotFoundError, match="no entity 'Zed'"):
        chips.add_chip(db, cid, "graph_entity", "Zed")
    with pytest.raises(NotFoundError, match="Today card"):
        chips.add_chip(db, cid, "discourse", "0000")
    with pytest.raises(NotFoundError, match="no conversation"):
        chips.add_chip(db, "ffffffff", "wiki", rows.wiki)
    assert chips.list_chips(db, cid) == []


def test_ambiguous_prefix(db: Database, cid: str) -> None:
    add_episode(db, "one", "2026-01-01", "a", eid="abcd1111-0000-4000-8000-000000000000")
    add_episode(db, "two", "2026-01-02", "b", eid="abcd2222-0000-4000-8000-000000000000")
    with pytest.raises(AmbiguousIdError):
        chips.add_chip(db, cid, "source", "abcd")
    assert chips.add_chip(db, cid, "source", "abcd2").label == "two"


def test_remove_and_remove_last(db: Database, rows: Rows, cid: str) -> None:
    a = chips.add_chip(db, cid, "wiki", rows.wiki)
    b = chips.add_chip(db, cid, "brief", rows.brief)
    c = chips.add_chip(db, cid, "source", rows.run)
    assert chips.remove_chip(db, cid, b.id[:8]) == b
    assert chips.list_chips(db, cid) == [a, c]
    with pytest.raises(NotFoundError):
        chips.remove_chip(db, cid, b.id)
    other = conv.create_conversation(db, "other").id
    with pytest.raises(NotFoundError):
        chips.remove_chip(db, other, a.id)  # not a chip of that conversation
    assert chips.remove_last_chip(db, cid) == c
    assert chips.remove_last_chip(db, cid) == a
    assert chips.remove_last_chip(db, cid) is None
    # removing and attaching again gives a new chip
    assert chips.add_chip(db, cid, "wiki", rows.wiki).id != a.id


def test_resolve_every_kind(db: Database, rows: Rows, cid: str) -> None:
    wiki = chips.resolve(db, chips.add_chip(db, cid, "wiki", rows.wiki))
    assert (wiki.title, wiki.episode_id, wiki.date) == ("Ines", None, None)
    assert wiki.text.startswith("My partner.")
    source = chips.resolve(db, chips.add_chip(db, cid, "source", rows.race))
    assert source.episode_id == rows.race and source.date == "2026-10-11"
    assert source.text == "Finished the Lisbon marathon in 3:58. Ines had a sign."
    brief = chips.resolve(db, chips.add_chip(db, cid, "brief", rows.brief))
    assert brief.date == "2026-11-23" and "promotion" in brief.text
    card = chips.resolve(db, chips.add_chip(db, cid, "discourse", rows.card))
    assert card.title == "The garden" and "garden" in card.text
    ent = chips.resolve(db, chips.add_chip(db, cid, "graph_entity", "Ines"))
    assert ent.title == "Ines" and ent.episode_id is None and ent.date == "2026-11-20"
    assert "Ines (person)" in ent.text
    assert "Lisbon (place, 2), Pedro (person, 1)" in ent.text
    lines = ent.text.splitlines()
    assert lines[-2].startswith("- 2026-11-20 Long run: Ran 18 km")  # most recent first
    assert lines[-1].startswith("- 2026-10-11 Race day:")


def test_resolve_caps_long_sources(db: Database, cid: str) -> None:
    eid = add_episode(db, "Long", "2026-01-01", "word " * 3000)
    content = chips.resolve(db, chips.add_chip(db, cid, "source", eid))
    assert len(content.text) <= chips.TEXT_CAP + 2
    assert content.text.endswith("…")


def test_resolve_gone_and_resolve_all(db: Database, rows: Rows, cid: str) -> None:
    wiki = chips.add_chip(db, cid, "wiki", rows.wiki)
    brief = chips.add_chip(db, cid, "brief", rows.brief)
    # A re-ingest gives derived records new ids: the chip's label still finds the entry.
    db.execute("DELETE FROM wiki_entries WHERE id = ?", [rows.wiki])
    db.execute(
        "INSERT INTO wiki_entries (id, title, text, source_key) VALUES (?, 'Ines', 'new', 'k')",
        [_uuid()],
    )
    assert chips.resolve(db, wiki).text == "new"
    db.execute("DELETE FROM briefs")
    with pytest.raises(NotFoundError, match="no longer in the memory"):
        chips.resolve(db, brief)
    contents, missing = chips.resolve_all(db, cid)
    assert [c.chip for c in contents] == [wiki] and missing == [brief]


def test_find_across_kinds(db: Database, rows: Rows) -> None:
    found = chips.find_attachable(db, "ines")
    kinds = {(c.kind, c.ref_id) for c in found}
    assert ("wiki", rows.wiki) in kinds and ("graph_entity", "1") in kinds
    assert ("source", rows.race) in kinds and ("source", rows.run) in kinds
    # title matches (wiki "Ines", entity "Ines") come before text matches (episodes)
    assert {found[0].kind, found[1].kind} == {"wiki", "graph_entity"}
    assert {c.kind for c in found[2:]} == {"source"}
    text_hit = next(c for c in found if c.ref_id == rows.run)
    assert "Ines" in text_hit.snippet and text_hit.date == "2026-11-20"


def test_find_ranks_and_filters(db: Database, rows: Rows) -> None:
    assert [c.ref_id for c in chips.find_attachable(db, "GARDEN")] == [rows.card]
    assert [c.kind for c in chips.find_attachable(db, "ines", kind="wiki")] == ["wiki"]
    assert [c.label for c in chips.find_attachable(db, "week november")] == ["Week of 17 November"]
    assert [c.ref_id for c in chips.find_attachable(db, rows.race[:8])] == [rows.race]
    assert chips.find_attachable(db, "lisbon", kind="entity")[0].label == "Lisbon"
    assert chips.find_attachable(db, "nothing like this") == []
    assert len(chips.find_attachable(db, "ines", limit=2)) == 2
    with pytest.raises(ConfigError):
        chips.find_attachable(db, "x", kind="photo")


def test_find_empty_text_takes_turns_between_kinds(db: Database, rows: Rows) -> None:
    found = chips.find_attachable(db, "")
    assert [c.kind for c in found[:5]] == SEEDED_KINDS
    assert found[1].ref_id == rows.run  # the most recent episode
    assert found[3].label == "Ines"  # the most mentioned entity
    assert len(found) == 2 + 2 + 1 + 3 + 1
    assert len(chips.find_attachable(db, "", limit=3)) == 3
    assert [c.kind for c in chips.find_attachable(db, "", kind="source")] == ["source"] * 2


def test_find_on_an_empty_memory(db: Database) -> None:
    assert chips.find_attachable(db, "") == []
    assert chips.find_attachable(db, "anything") == []
