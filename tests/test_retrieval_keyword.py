"""The keyword channel: tokens, BM25 rankings checked against rank-bm25's Okapi, passages,
and the index persisted beside the database (loaded lazily, rebuilt when stale)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from sadie_tui.engine.memory import Memory
from sadie_tui.engine.retrieval import keyword
from sadie_tui.engine.retrieval.keyword import (
    best_passage,
    build_index,
    keyword_index,
    query_tokens,
    tokenize,
)
from sadie_tui.engine.retrieval.keyword.tokens import keyword_text
from sadie_tui.engine.store.search import chunk_signature
from sadie_tui.engine.store.vectors import vector_literal

CORPUS = [
    "Ran 18 km along the river with Ines; my knee held up and the marathon plan works.",
    "The radiator clanks every night, so I slept badly and counted the knocks.",
    "Marta said the promotion might come in spring, which she also said last spring.",
    "Intervals at the track: six times 800 metres with the running club.",
    "Booked the train to Porto for the wedding; Ines wants to stay an extra night.",
    "The Warden rollout went fine in Lisbon and Pedro wants a retro on Friday.",
    "Cooked a mushroom risotto for Pedro and Ines, the wine was too sweet.",
    "Knee physio again: strengthen the quads, ease off the long runs for a week.",
    "Council officers asked for flood forecast confidence bands on the dashboard.",
    "Slept nine hours after the wedding, the first real rest in weeks.",
    "Sam rewrote the dashboard legend so the flood bands make sense to officers.",
    "Long run in the rain, 24 km, knee fine, legs heavy at the end.",
]
QUERIES = [
    "knee after the long run",
    "flood dashboard for the council",
    "wedding in Porto",
    "promotion with Marta",
    "slept badly at night",
    "Pedro retro Warden",
    "track intervals with the club",
]


def test_tokenize_stems_and_drops_stop_words() -> None:
    assert tokenize("The runners were running; she's RUNNING!") == ["runner", "run", "run"]
    assert tokenize("don't stop") == ["stop"]
    assert tokenize("it is what it is") == []
    assert tokenize("Ines’s knees") == ["ine", "knee"]  # curly apostrophe folded


@pytest.mark.parametrize(
    "text",
    [
        "1:1 with Henrik",
        "my one-to-one with Henrik",
        "a one on one with Henrik",
        "1-on-1 with Henrik",
        "henrik-1on1",
        "One-on-One, Henrik",
        "my 1:1s with Henrik",
        "1 on 1 with Henrik",
    ],
)
def test_the_spellings_of_a_one_to_one_are_one_token(text: str) -> None:
    assert sorted(tokenize(text)) == ["1on1", "henrik"]
    assert sorted(query_tokens(text)) == ["1on1", "henrik"]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("finished in 1:15:40", ["finish", "15", "40"]),  # a time, not a meeting
        ("3:51:12 at the line", ["51", "12", "line"]),
        ("from 11:00 to 11:15", ["11", "00", "11", "15"]),
        ("counted from one to one hundred", ["count", "one", "one", "hundr"]),
        ("someone to one side", ["someon", "one", "side"]),
        ("drew 1-1 at home", ["drew", "home"]),
    ],
)
def test_times_and_counts_are_not_a_one_to_one(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens
    assert best_passage(text, {"1on1": 1.0}, 10.0) == 0.0


def test_a_passage_finds_a_one_to_one_spelt_either_way() -> None:
    assert best_passage("Notes from our 1:1 today.", {"1on1": 1.0}, 5.0) > 0


def test_query_tokens_drop_question_framing() -> None:
    assert query_tokens("What kind of music does Ines like?") == ["music", "ine", "like"]
    assert query_tokens("How long has Tim played piano?") == ["tim", "play", "piano"]
    # ...but the same words stay in documents
    assert "kind" in tokenize("a kind word")


def _okapi_top(query: str, n: int) -> list[int]:
    okapi = BM25Okapi([tokenize(t) for t in CORPUS], k1=keyword.K1, b=keyword.B)
    scores = okapi.get_scores(tokenize(query))
    return [int(i) for i in np.argsort(-scores, kind="stable")[:n] if scores[i] > 0]


@pytest.mark.parametrize("query", QUERIES)
def test_rankings_match_rank_bm25_okapi(query: str) -> None:
    index = build_index(range(100, 100 + len(CORPUS)), CORPUS)
    hits = index.search(query, 3)
    ours = [cid - 100 for cid, _ in hits]
    reference = _okapi_top(query, 3)
    assert ours[0] == reference[0]
    assert set(ours[:3]) == set(reference[:3])


def test_scores_zero_for_unknown_words_and_empty_index() -> None:
    index = build_index(range(len(CORPUS)), CORPUS)
    assert index.search("zeppelin", 5) == []
    assert not index.scores(["zeppelin"]).any()
    empty = build_index([], [])
    assert empty.size == 0 and empty.search("knee", 3) == []


def test_catalogue_rows_neighbours_and_episode_max() -> None:
    # Two episodes of two and three chunks, given in episode/ordinal order.
    index = build_index(
        [11, 12, 20, 21, 22],
        ["a knee", "b", "c", "d knee knee", "e"],
        ["x", "x", "y", "y", "y"],
        [1.0, 1.0, 2.0, 2.0, 2.0],
    )
    catalogue = index.catalogue
    assert catalogue.rows_of([22, 11, 99]).tolist() == [4, 0, -1]
    nxt, prv = catalogue.neighbour_rows(np.array([0, 1, 2, 4]))
    assert nxt.tolist() == [1, -1, 3, -1]
    assert prv.tolist() == [-1, 0, -1, 3]
    scores = index.scores(["knee"])
    best = catalogue.episode_max(scores)
    assert best[0] == best[1] == scores[0]
    assert best[2] == best[3] == best[4] == scores[3]
    # Of some rows only: the same answers, in their order.
    rows = np.array([4, 1, 2])
    assert catalogue.episode_max(scores, rows).tolist() == best[rows].tolist()


def test_best_passage_finds_the_sentence_pair() -> None:
    text = (
        "Work was dull. The standup ran long. Lunch was soup. "
        "The knee hurt on the long run. Physio says rest the knee. Dinner with Ines."
    )
    weights = {"knee": 2.0, "run": 1.0}
    score = best_passage(text, weights, avg_length=6.0)
    lone = best_passage("The knee hurt on the long run. Physio says rest the knee.", weights, 6.0)
    assert score == pytest.approx(lone)
    assert best_passage("Nothing relevant here at all.", weights, 6.0) == 0.0


@pytest.fixture
def keyword_memory(memory_home: Path, embedder) -> Memory:  # type: ignore[no-untyped-def]
    memory = Memory.open(memory_home, embedder=embedder)
    yield memory
    memory.close()
    keyword.forget_cached(memory_home)


def test_a_records_title_joins_its_keyword_text_and_nothing_elses() -> None:
    flights = keyword_text("TAP LIS–MAN, 2 passengers, €624.", "Flights to Leeds", "record")
    assert {"flight", "leed"} <= set(tokenize(flights))
    assert keyword_text("Ran 18 km.", "Long run by the river", "journal") == "Ran 18 km."
    assert keyword_text("Hi.", "Session 3 — Ana and Rui", "conversation") == "Hi."
    assert keyword_text("Easy 8 km.", "", "record") == "Easy 8 km."


def test_a_record_is_found_by_the_words_of_its_title(keyword_memory: Memory) -> None:
    # records/runs.jsonl: "Easy run" over "Easy 8 km, avg pace 5:40/km…"; "run" is in no text.
    keyword.forget_cached(keyword_memory.home)
    index = keyword.rebuild_keyword_index(keyword_memory)
    hits = index.search("run", 5)
    assert len(hits) == 1
    (text,) = keyword_memory.db.fetchone("SELECT text FROM chunks WHERE id = ?", [hits[0][0]])
    assert text.startswith("Easy 8 km")
    assert not index.search("river", 5)  # a journal's title ("Long run by the river") is not


def test_index_is_persisted_loaded_and_rebuilt_when_stale(keyword_memory: Memory) -> None:
    home = keyword_memory.home
    folder = keyword.index_dir(home)
    shutil.rmtree(folder, ignore_errors=True)
    keyword.forget_cached(home)
    index = keyword_index(keyword_memory)  # missing: rebuilt and saved
    assert (folder / "meta.json").is_file()
    count = keyword_memory.db.fetchone("SELECT count(*) FROM chunks")[0]
    assert index.size == count

    keyword.forget_cached(home)
    loaded = keyword_index(keyword_memory)  # loaded from disk, same answers
    assert loaded.signature == index.signature
    assert loaded.search("marathon", 3) == index.search("marathon", 3)

    # A chunk written behind the index's back makes it stale: the next search sees it.
    keyword_memory.db.execute(
        "INSERT INTO chunks (episode_id, ordinal, text, embedding)"
        " SELECT episode_id, 99, 'zeppelin over the Tagus', embedding FROM chunks LIMIT 1"
    )
    fresh = keyword_index(keyword_memory)
    assert fresh.size == count + 1
    assert fresh.search("zeppelin", 1)


def test_a_memory_kept_current_saves_its_index_after_each_write(
    keyword_memory: Memory, tmp_path: Path
) -> None:
    # The memory does not import retrieval: the index follows it through an after-write hook.
    home = keyword_memory.home
    folder = keyword.index_dir(home)
    note = tmp_path / "zeppelin.md"
    note.write_text("# Airship\n\nA zeppelin drifted over the Tagus at dusk.\n", "utf-8")

    shutil.rmtree(folder, ignore_errors=True)
    keyword_memory.ingest([note])
    assert not folder.exists()  # no hook yet: nothing rebuilt the index

    note.write_text("# Airship\n\nA blimp drifted over the Tagus at dawn.\n", "utf-8")
    keyword.keep_current(keyword_memory)
    keyword.keep_current(keyword_memory)  # registered once, however often asked
    calls: list[Memory] = []
    keyword_memory.after_write(calls.append)
    keyword_memory.ingest([note])
    saved = keyword.persist.load(folder)
    assert saved is not None and saved.signature == chunk_signature(keyword_memory.db)
    assert saved.search("blimp", 1) and not saved.search("zeppelin", 1)
    assert calls == [keyword_memory]

    keyword_memory.ingest([note])  # unchanged: no hook runs
    assert calls == [keyword_memory]
    assert keyword_memory.remove_notes([note]) == 1
    assert calls == [keyword_memory, keyword_memory]
    assert not keyword.persist.load(folder).search("blimp", 1)


def test_the_index_keeps_each_rows_embedding_and_the_cosines_match_duckdbs(
    keyword_memory: Memory,
) -> None:
    from sadie_tui.engine.retrieval import pipeline

    home = keyword_memory.home
    keyword.forget_cached(home)
    keyword.rebuild_keyword_index(keyword_memory)
    keyword.forget_cached(home)
    index = keyword_index(keyword_memory)  # loaded: the vectors are memory-mapped
    assert isinstance(index.vectors, np.memmap)
    stored = dict(keyword_memory.db.execute("SELECT id, embedding FROM chunks").fetchall())
    for row, chunk_id in enumerate(index.chunk_ids.tolist()):
        assert np.allclose(index.vectors[row], stored[chunk_id])

    query = keyword_memory.embedder.encode_one("crying at the marathon")
    in_duckdb = dict(
        keyword_memory.db.fetchall(
            "SELECT id, array_cosine_similarity(embedding, ?::FLOAT[384]) FROM chunks",
            [vector_literal(query)],
        )
    )
    rows = np.arange(index.size)
    chunks, kept = pipeline._fetch(keyword_memory, index, rows, query)
    assert kept is not None and kept.keys() == in_duckdb.keys() == chunks.keys()
    assert all(abs(kept[c] - in_duckdb[c]) < 1e-5 for c in kept)
    # An index built without the copy reads the embeddings from the database instead.
    chunks_read, read = pipeline._fetch(
        keyword_memory, dataclasses.replace(index, vectors=None), rows, query
    )
    assert chunks_read == chunks and read is not None
    assert all(abs(read[c] - in_duckdb[c]) < 1e-5 for c in read)


def test_an_index_whose_vectors_do_not_fit_is_rebuilt(keyword_memory: Memory) -> None:
    home = keyword_memory.home
    folder = keyword.index_dir(home)
    for spoil in (
        lambda: np.save(folder / "vectors.npy", np.zeros((1, 384), dtype=np.float32)),
        lambda: (folder / "vectors.npy").unlink(),
    ):
        keyword.forget_cached(home)
        keyword.rebuild_keyword_index(keyword_memory)
        spoil()
        keyword.forget_cached(home)
        index = keyword_index(keyword_memory)  # the saved copy is refused, the index rebuilt
        assert index.vectors is not None and len(index.vectors) == index.size > 1


def test_postings_score_as_bm25s_does_and_read_what_bm25s_saved(tmp_path: Path):
    """A query reads the score matrix with numpy alone (importing bm25s costs scipy, ~25 MB);
    its scores are bm25s's own, and an index saved by bm25s itself (every memory indexed
    before) still loads."""
    import bm25s

    from sadie_tui.engine.retrieval.keyword.bm25 import K1, B, Postings

    corpus = [tokenize(t) for t in CORPUS]
    built = bm25s.BM25(k1=K1, b=B, method="lucene")
    built.index(corpus, show_progress=False)
    ours = Postings.from_bm25s(built)
    queries = [["ines", "knee"], ["ines", "ines", "night"], ["marathon"], ["nothing-like-it"]]
    for q in queries:
        tokens = [stem for t in q for stem in tokenize(t)] or q
        expected = built.get_scores_from_ids(built.get_tokens_ids(tokens))
        got = ours.get_scores_from_ids(ours.get_tokens_ids(tokens))
        assert got.dtype == np.float32 and np.array_equal(got, expected), q

    built.save(str(tmp_path / "by-bm25s"), show_progress=False)
    loaded = Postings.load(tmp_path / "by-bm25s")
    (tmp_path / "ours").mkdir()
    ours.save(tmp_path / "ours")
    again = Postings.load(tmp_path / "ours")
    reloaded = bm25s.BM25.load(str(tmp_path / "ours"), show_progress=False)  # and the reverse
    for other in (loaded, again):
        assert other.vocab_dict == ours.vocab_dict and other.num_docs == len(CORPUS)
        assert np.array_equal(other.data, ours.data)
        assert np.array_equal(other.indptr, ours.indptr)
    ids = ours.get_tokens_ids(tokenize("river knee marathon"))
    assert np.array_equal(reloaded.get_scores_from_ids(ids), ours.get_scores_from_ids(ids))
    with pytest.raises(ValueError):
        ours.get_scores_from_ids([len(ours.indptr)])
