"""Entities: people, places, projects and organisations found in text; mentions and the
co-occurrence graph written to the memory."""

from __future__ import annotations

from collections import Counter
from itertools import permutations
from pathlib import Path

from sadie_tui.engine.ingest.entities import (
    EntityIndex,
    entity_key,
    find_names,
    guess_kind,
    query_entities,
)
from sadie_tui.engine.memory import Memory

SAMPLE = [
    "Had coffee with Ines and Pedro in Lisbon. We talked about Project Warden and the launch.",
    "Marta from Acme Labs flew to Berlin for the Warden Migration. Later she met Kofi at "
    "Oxford University.",
    "Ines thinks the Harbor App is late. Drove to Porto with Pedro on Saturday.",
    "Marta called. Pedro said the Harbor App demo went fine at the Lisbon office.",
]


def _index(known=None) -> tuple[EntityIndex, list[Counter[str]]]:  # type: ignore[no-untyped-def]
    index = EntityIndex(known)
    index.learn(SAMPLE)
    return index, [index.mentions(text) for text in SAMPLE]


def test_people_places_projects_and_organisations_are_found() -> None:
    index, found = _index()
    assert found[0] == Counter({"ines": 1, "pedro": 1, "lisbon": 1, "project warden": 1})
    kinds = {key: index.kind_of(key) for key in index.votes}
    assert kinds["ines"] == "person"
    assert kinds["pedro"] == "person"
    assert kinds["kofi"] == "person"
    assert kinds["lisbon"] == "place"
    assert kinds["berlin"] == "place"
    assert kinds["porto"] == "place"
    assert kinds["project warden"] == "project"
    assert kinds["warden migration"] == "project"
    assert kinds["harbor app"] == "project"
    assert kinds["acme labs"] == "organisation"
    assert kinds["oxford university"] == "organisation"
    assert index.names["acme labs"] == "Acme Labs"


def test_sentence_starts_count_only_for_known_names() -> None:
    # "Marta" opens both of her sentences: unknown there, so not an entity on its own...
    assert "marta" not in [entity_key(n) for n, _ in find_names(SAMPLE[1], {})]
    # ...but "Ines" at a sentence start is found once she is known from mid-sentence use.
    index, found = _index()
    assert found[2]["ines"] == 1
    # Wiki titles make a name known with a fixed kind.
    index, found = _index({"marta": ("Marta", "person"), "warden": ("Warden", "project")})
    assert found[1]["marta"] == 1 and found[3]["marta"] == 1
    assert index.kind_of("marta") == "person"


def test_stop_words_dates_and_noise_are_not_entities() -> None:
    text = (
        "On Monday I went to the gym. The weather was Good. Yesterday TV was boring, "
        "and I said OK to everything in December. Then Ines laughed."
    )
    names = [entity_key(n) for n, _ in find_names(text, {"ines": "person"})]
    assert names == ["ines"]


def test_guess_kind_cues() -> None:
    assert guess_kind("Lisbon", "we flew to ") == "place"
    assert guess_kind("Bay Clinic", "met at the ") == "organisation"
    assert guess_kind("Warden", "the project ") == "project"
    assert guess_kind("Loom Refactor", "") == "project"
    assert guess_kind("Tomás", "talked with ") == "person"


def test_query_entities_matches_whole_words() -> None:
    known = ["ines", "project warden", "porto"]
    assert query_entities("What did Ines say about Project Warden?", known) == {
        "ines",
        "project warden",
    }
    assert query_entities("inessential opporto", known) == set()


def test_mentions_and_cooccurrence_edges_are_written(memory_home: Path) -> None:
    with Memory.open(memory_home) as memory:
        db = memory.db
        entities = {
            key: (eid, kind) for eid, key, kind in db.fetchall("SELECT id, key, kind FROM entities")
        }
        assert {"ines", "pedro", "lisbon", "marta"} <= set(entities)
        assert entities["ines"][1] == "person"  # the wiki says so
        assert entities["pedro"][1] == "person"
        mentions = db.fetchall("SELECT entity_id, chunk_id, episode_id, count FROM entity_mentions")
        chunk_episode = dict(db.fetchall("SELECT id, episode_id FROM chunks"))
        for _, chunk_id, episode_id, count in mentions:
            assert chunk_episode[chunk_id] == episode_id and count >= 1
        ines_episodes = {m[2] for m in mentions if m[0] == entities["ines"][0]}
        assert len(ines_episodes) == 3
        # Edges: both directions, weight = number of chunks naming both.
        by_chunk: dict[int, set[int]] = {}
        for entity_id, chunk_id, _, _ in mentions:
            by_chunk.setdefault(chunk_id, set()).add(entity_id)
        expected: Counter[tuple[int, int]] = Counter()
        for ids in by_chunk.values():
            expected.update(permutations(sorted(ids), 2))
        edges = {(s, d): w for s, d, w in db.fetchall("SELECT src, dst, weight FROM entity_edges")}
        assert edges == {pair: float(n) for pair, n in expected.items()}
        ines, pedro, lisbon = (entities[k][0] for k in ("ines", "pedro", "lisbon"))
        assert edges[(ines, pedro)] == edges[(pedro, ines)] >= 1
        assert edges[(ines, lisbon)] >= 1
        assert (ines, ines) not in edges


# --------------------------------------------------------------------------- worth a graph


def _found(texts: list[str], known=None, aliases=None) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Entity key → kind after learning and reading ``texts``, as an ingest does."""
    index = EntityIndex(known, aliases)
    index.learn(texts)
    keys: Counter[str] = Counter()
    for text in texts:
        keys.update(index.mentions(text))
    return {key: index.kind_of(key) for key in keys}


def test_headings_and_section_labels_are_not_people() -> None:
    note = (
        "# Wednesday\n\n## Mood\nTired but good.\n\n## Gratitude\nCoffee with Ines.\n"
        "**Highlights** the river.\n- Energy: low\n"
    )
    assert _found([note]) == {"ines": "person"}


def test_weekdays_months_and_sentence_initial_verbs_are_not_people() -> None:
    texts = [
        "Ran ten kilometres with Ines. We run on Tuesdays and Thursdays, and in March-ish.",
        "09:00 Ran again. Then we ran home. Tuesday's session was short.",
        "Reading 88%, Writing 79%, Listening 66%.",
        "Slow at writing, fast at reading, listening is the hard part. Mood: calm.",
    ]
    assert _found(texts) == {"ines": "person"}


def test_a_common_word_counts_with_a_person_cue() -> None:
    # "Mark" is a word these notes also write in lower case; "Mark said" is still a person.
    texts = ["I mark the calendar, later. Later Mark said the plan works.", "Then a Mark appeared."]
    assert _found(texts) == {"mark": "person"}


def test_places_need_cues_and_are_never_guessed_people() -> None:
    found = _found(
        [
            "We flew to Berlin in May. The light over the Tagus was gold.",
            "Walked along the Tagus with Ines.",
            "The Berlin office sent a card.",  # no cue here, but elsewhere there is one
            "Bought a Tideline umbrella.",  # no cue anywhere: a name, kind unknown
        ]
    )
    assert found == {"berlin": "place", "tagus": "place", "ines": "person", "tideline": "other"}


def test_honorifics_make_the_next_name_a_person() -> None:
    found = _found(["Follow-up with Dr. Sousa today.", "Keys from Sra. Lurdes at noon."])
    assert found == {"sousa": "person", "lurdes": "person"}


def test_holidays_and_languages_are_named_things_not_people() -> None:
    found = _found(["At Christmas we spoke Portuguese with Ines.", "Back from Christmas in Leeds."])
    assert found == {
        "christmas": "other",
        "portuguese": "other",
        "ines": "person",
        "leeds": "place",
    }


def test_wiki_links_and_aliases_name_the_page() -> None:
    index = EntityIndex()
    assert index.add_page("Ana Ribeiro", "person", ["Ana", "A.R."]) == "ana ribeiro"
    text = "Coffee with Ana, then [[Ana Ribeiro|A]] and [[Lisbon trip#Day two]]. [[2026-03-05]]"
    index.learn([text])
    assert index.mentions(text) == Counter({"ana ribeiro": 2, "lisbon trip": 1})
    assert index.kind_of("ana ribeiro") == "person"
    assert index.names["ana ribeiro"] == "Ana Ribeiro"
    # An alias already stored maps the same way, at a sentence start too.
    stored = EntityIndex({"ana ribeiro": ("Ana Ribeiro", "person")}, {"ana": "ana ribeiro"})
    assert stored.mentions("Ana called.") == Counter({"ana ribeiro": 1})


def test_tags_are_not_names() -> None:
    assert _found(["Long run #Lisbon #[[Long Run]] with Ines"]) == {
        "long run": "other",
        "ines": "person",
    }
