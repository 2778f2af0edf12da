"""Retrieval end to end on real DuckDB memories with the real embedder: every channel, time
windows, follow-ups, persona rules, beliefs and observations, telemetry and `sadie search`."""

from __future__ import annotations

import json
import math
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from sadie_tui import cli
from sadie_tui.commands import output
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.personas import get_persona
from sadie_tui.engine.retrieval import graph, keyword, pipeline, retrieve
from sadie_tui.engine.retrieval.followup import is_follow_up, shifted_window
from sadie_tui.engine.retrieval.timewords import parse_time_window
from sadie_tui.engine.retrieval.vector import exact_search, vector_search, vector_sql
from sadie_tui.engine.store.vectors import vector_literal
from sadie_tui.engine.telemetry import mark_cited, record_turn
from sadie_tui.paths import project_root

NOW = datetime(2026, 11, 30, 9, 0)


@pytest.fixture
def memory(memory_home: Path, embedder) -> Memory:  # type: ignore[no-untyped-def]
    mem = Memory.open(memory_home, embedder=embedder)
    yield mem
    mem.close()
    keyword.forget_cached(memory_home)
    graph.forget_cached(str(memory_home))


def titles(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.title for c in result.chunks]


# --------------------------------------------------------------------------- channels


@pytest.mark.at_rest
def test_keyword_and_vector_channels_find_the_race(memory: Memory) -> None:
    race = memory.db.fetchone(
        "SELECT c.id FROM chunks c JOIN episodes e ON e.id = c.episode_id"
        " WHERE e.title = 'Race day'"
    )[0]
    assert keyword.keyword_index(memory).search("marathon finish line", 3)[0][0] == race
    hits = vector_search(memory.db, memory.embedder.encode_one("crying at the marathon"), 3)
    assert hits[0][0] == race and -1.0 <= hits[0][1] <= 1.0


def test_graph_channel_scores_by_rarity_and_one_hop(memory: Memory) -> None:
    index = keyword.keyword_index(memory)
    g = graph.graph_index(memory.db, str(memory.home), index)
    seeds = g.named_in("What did Marta say about the promotion?")
    assert set(seeds) == {"marta"}
    weights = g.expand(seeds.values())
    assert weights[seeds["marta"]] == 1.0
    assert all(0 < w <= graph.HOP_WEIGHT for e, w in weights.items() if e != seeds["marta"])
    scores = g.scores({seeds["marta"]: 1.0})
    rows, counts = g.mentions[seeds["marta"]]
    # One chunk names Marta once: ln(1 + chunks / 1) · (1 + ln 1).
    assert len(rows) == 1 and counts[0] == 1
    assert scores[rows[0]] == pytest.approx(math.log1p(index.size))
    assert np.count_nonzero(scores) == 1
    # Ines is everywhere, so she weighs less than Marta per mention.
    ines = g.ids["ines"]
    assert math.log1p(index.size / len(g.mentions[ines][0])) < math.log1p(index.size)


def test_hnsw_index_is_used() -> None:
    # Checked on the query the channel sends (the plan, not timings).
    from sadie_tui.engine.store.db import Database

    db = Database.open(Path(":memory:"))
    try:
        db.execute(
            "INSERT INTO chunks (episode_id, ordinal, text, embedding) SELECT"
            " uuid(), 0, 'x', list_transform(range(384), i -> random())::FLOAT[384]"
            " FROM range(50)"
        )
        literal = "[" + ",".join(["0.05"] * 384) + "]"
        assert db.vector_index_used(vector_sql(10), [literal])
    finally:
        db.close()


@pytest.fixture(scope="module")
def journal_memory(tmp_path_factory: pytest.TempPathFactory, embedder):  # type: ignore[no-untyped-def]
    """Real text: 60 journal entries of the demo memory."""
    source = project_root() / "data" / "demo" / "journal"
    files = sorted(source.glob("*.md"))[:60]
    assert len(files) >= 30, "the demo journal ships with the project"
    folder = tmp_path_factory.mktemp("journal") / "journal"
    folder.mkdir()
    for f in files:
        shutil.copy(f, folder / f.name)
    home = tmp_path_factory.mktemp("journal-home")
    mem = Memory.open(home, embedder=embedder)
    mem.ingest([folder])
    yield mem
    mem.close()


def test_hnsw_recall_against_exact_search(journal_memory: Memory) -> None:
    memory = journal_memory
    assert memory.db.vector_index_used(vector_sql(10), ["[" + ",".join(["0.05"] * 384) + "]"])
    texts = [r[0] for r in memory.db.fetchall("SELECT text FROM chunks ORDER BY id")]
    queries = [t.split(".")[0] for t in texts[::4]][:20]
    vectors = memory.embedder.encode(queries)
    found = total = 0
    for vec in vectors:
        approx = {cid for cid, _ in vector_search(memory.db, vec, 10)}
        exact = {cid for cid, _ in exact_search(memory.db, vec, 10)}
        found += len(approx & exact)
        total += len(exact)
    assert found / total >= 0.95


def test_retrieve_on_real_text_carries_every_score(journal_memory: Memory) -> None:
    result = retrieve(
        journal_memory, "the radiator knocking at night", get_persona("analyst"), now=NOW
    )
    assert "radiator" in result.chunks[0].text.lower()
    assert [c.rank for c in result.chunks] == list(range(1, 11))
    first = result.chunks[0]
    assert set(first.scores) == {"vector", "keyword", "graph"}
    assert first.scores["keyword"] and first.scores["keyword"] > 0
    assert first.fused > 0 and first.final > 0


# --------------------------------------------------------------------------- the pipeline


@pytest.mark.at_rest
def test_retrieve_result_shape(memory: Memory) -> None:
    result = retrieve(memory, "How did the Lisbon marathon go?", get_persona("analyst"), now=NOW)
    assert result.vector_used and result.window is None and result.elapsed_ms > 0
    assert result.chunks[0].title == "Race day"
    chunk_count = memory.db.fetchone("SELECT count(*) FROM chunks")[0]
    assert len(result.chunks) == min(10, chunk_count)
    for c in result.chunks:
        assert c.scores["vector"] is not None  # a small memory: every chunk is a vector hit
        if c.scores["keyword"] is None:
            assert c.fused < result.chunks[0].fused
    assert result.chunks[0].occurred_at == datetime(2026, 10, 11)


def test_time_window_narrows_and_falls_back(memory: Memory) -> None:
    analyst = get_persona("analyst")
    last_week = retrieve(memory, "what did I do last week?", analyst, now=NOW)
    assert last_week.window is not None and last_week.window.phrase == "last week"
    assert last_week.chunks[0].title == "Commute"  # the only note of 23–29 November
    march = retrieve(memory, "what happened in March?", analyst, now=NOW)
    assert march.chunks[0].title == "Warden retro"
    # July holds nothing: the window is dropped rather than returning nothing.
    july = retrieve(memory, "the marathon in July", analyst, now=NOW)
    assert july.window is None and july.chunks[0].title == "Race day"


def test_a_window_reaches_the_notes_written_days_after_it(memory: Memory) -> None:
    analyst = get_persona("analyst")
    # Race day was written on 11 October: the day before is still written about then...
    before = retrieve(memory, "what did I do on October 10?", analyst, now=NOW)
    assert before.window is not None and before.window.end == datetime(2026, 10, 11)
    assert before.chunks[0].title == "Race day"
    # ...but not four days before, beyond ``RECORDED_WITHIN``: that window holds nothing.
    assert pipeline.RECORDED_WITHIN == timedelta(days=3)
    assert retrieve(memory, "what did I do on October 7?", analyst, now=NOW).window is None


def test_follow_up_rule() -> None:
    for message in (
        "why?",
        "and her?",
        "what about the week before?",
        "tell me more",
        "And what did Ines think of it?",
        "she said what?",
        "so then what",
        "what did she say about it",
    ):
        assert is_follow_up(message), message
    for message in (
        "What did I write about the Lisbon marathon in October?",
        "How is my knee holding up after the long runs?",
        "",
    ):
        assert not is_follow_up(message), message


def test_follow_up_is_retrieved_with_the_previous_turn(memory: Memory) -> None:
    analyst = get_persona("analyst")
    result = retrieve(
        memory, "and Ines?", analyst, now=NOW, previous="How did the Lisbon marathon go?"
    )
    assert result.effective_query == "How did the Lisbon marathon go? and Ines?"
    assert result.chunks[0].title == "Race day"
    alone = retrieve(
        memory,
        "How is my knee after the long run?",
        analyst,
        now=NOW,
        previous="How did the Lisbon marathon go?",
    )
    assert alone.effective_query == "How is my knee after the long run?"


def test_the_week_before_shifts_the_previous_window(memory: Memory) -> None:
    previous = parse_time_window("what did I do last week?", NOW)
    shifted = shifted_window(previous, "what about the week before?")
    assert previous is not None and shifted is not None
    assert (shifted.start, shifted.end) == (datetime(2026, 11, 16), datetime(2026, 11, 23))
    result = retrieve(
        memory,
        "what about the week before?",
        get_persona("analyst"),
        now=NOW,
        previous="what did I do last week?",
    )
    assert result.window is not None and result.window.start == datetime(2026, 11, 16)
    assert result.chunks[0].title == "Long run by the river"  # 20 November
    month = shifted_window(parse_time_window("in March", NOW), "and the month after?")
    assert month is not None and month.start == datetime(2026, 4, 1)


def test_without_vectors(memory: Memory) -> None:
    result = retrieve(memory, "marathon finish", get_persona("analyst"), now=NOW, use_vector=False)
    assert not result.vector_used
    assert result.chunks[0].title == "Race day"
    assert all(c.scores["vector"] is None for c in result.chunks)


def test_empty_memory(tmp_home: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    with Memory.open(tmp_home, embedder=embedder) as mem:
        result = retrieve(mem, "anything", get_persona("friend"), now=NOW)
    assert result.chunks == () and result.beliefs == () and result.observations == ()


# --------------------------------------------------------------------------- persona rules


def test_coach_has_no_graph(memory: Memory) -> None:
    coach = retrieve(memory, "What did Marta say?", get_persona("coach"), now=NOW)
    assert all(c.scores["graph"] is None for c in coach.chunks)
    analyst = retrieve(memory, "What did Marta say?", get_persona("analyst"), now=NOW)
    assert any(c.scores["graph"] for c in analyst.chunks)


def test_beliefs_observations_by_persona(memory: Memory) -> None:
    question = "how much do I sleep?"
    analyst = retrieve(memory, question, get_persona("analyst"), now=NOW)
    skeptic = retrieve(memory, question, get_persona("skeptic"), now=NOW)
    friend = retrieve(memory, question, get_persona("friend"), now=NOW)
    # Only the skeptic sees the contested belief.
    assert all(b.status == "active" for b in analyst.beliefs)
    assert [b.status for b in skeptic.beliefs] == ["contested"]
    # The friend never sees observations; the skeptic weighs them 1.5×.
    assert friend.observations == ()
    assert analyst.observations[0].source == "sleep-tracker"
    assert skeptic.observations[0].score == pytest.approx(
        analyst.observations[0].score * 1.5, rel=1e-4
    )
    # Without the query vector they are still found by their words.
    no_vec = retrieve(memory, "sleep hours", get_persona("skeptic"), now=NOW, use_vector=False)
    assert [b.statement for b in no_vec.beliefs] == ["I sleep seven hours most nights"]


def test_persona_chunk_counts(memory: Memory) -> None:
    memory.ingest([_many_notes(memory.home.parent / "many", 30)])
    for name, count in (("analyst", 10), ("coach", 10), ("friend", 12), ("skeptic", 20)):
        result = retrieve(memory, "a walk in the park", get_persona(name), now=NOW)
        assert len(result.chunks) == count, name
    assert len(retrieve(memory, "walk", get_persona("friend"), k=3, now=NOW).chunks) == 3


def _many_notes(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"2026-09-{i % 28 + 1:02d}-walk-{i}.md").write_text(
            f"Walk number {i} in the park, {i * 3} minutes, saw {i} dogs.", encoding="utf-8"
        )
    return folder


# --------------------------------------------------------------------------- telemetry, CLI


@pytest.mark.at_rest
def test_record_turn_and_mark_cited(memory: Memory) -> None:
    result = retrieve(memory, "marathon", get_persona("analyst"), now=NOW)
    turn = record_turn(
        memory.db,
        kind="ask",
        query="marathon",
        model="m",
        persona="analyst",
        prompt_version="v1",
        grounding=0.8,
        abstained=False,
        latency_ms=12.5,
        chunks=result.chunks,
        cited_chunk_ids=[result.chunks[0].chunk_id],
    )
    row = memory.db.fetchone(
        "SELECT kind, query, model, persona, grounding, abstained FROM turns WHERE id = ?", [turn]
    )
    assert row == ("ask", "marathon", "m", "analyst", 0.8, False)
    rows = memory.db.fetchall(
        "SELECT rank, chunk_id, episode_id::VARCHAR, vector_score, keyword_score, graph_score,"
        " fused_score, final_score, cited FROM retrievals WHERE turn_id = ? ORDER BY rank",
        [turn],
    )
    assert len(rows) == len(result.chunks)
    for got, chunk in zip(rows, result.chunks, strict=True):
        assert got[:3] == (chunk.rank, chunk.chunk_id, chunk.episode_id)
        for value, name in zip(got[3:6], ("vector", "keyword", "graph"), strict=True):
            expected = chunk.scores[name]
            assert (value is None) == (expected is None)
            if expected is not None:
                assert value == pytest.approx(expected)
        assert got[6:8] == pytest.approx((chunk.fused, chunk.final))
    assert [r[8] for r in rows] == [True] + [False] * (len(rows) - 1)
    assert mark_cited(memory.db, turn, [result.chunks[1].chunk_id, 10**9]) == 1
    assert mark_cited(memory.db, turn, []) == 0


@pytest.fixture
def invoke(memory_home: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COLUMNS", "220")
    monkeypatch.setattr(output, "_out", None)
    monkeypatch.setattr(output, "_err", None)
    runner = CliRunner()
    yield lambda *args: runner.invoke(cli.main_group, list(args))
    keyword.forget_cached(memory_home)
    graph.forget_cached(str(memory_home))


@pytest.mark.at_rest
def test_search_json_and_telemetry(invoke, memory_home: Path) -> None:  # type: ignore[no-untyped-def]
    result = invoke("search", "Lisbon marathon", "--json", "-k", "3", "--persona", "skeptic")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["persona"] == "skeptic" and data["query"] == "Lisbon marathon"
    assert len(data["chunks"]) == 3
    first = data["chunks"][0]
    assert first["rank"] == 1 and first["title"] == "Race day" and first["date"] == "2026-10-11"
    assert set(first["scores"]) == {"vector", "keyword", "graph"}
    assert {"episode_id", "chunk_id", "kind", "text", "fused", "final"} <= set(first)
    assert isinstance(data["beliefs"], list) and isinstance(data["observations"], list)
    with Memory.open(memory_home) as mem:
        turns = mem.db.fetchall("SELECT id::VARCHAR, kind, persona FROM turns")
        assert turns == [(data["turn_id"], "search", "skeptic")]
        assert mem.db.fetchone("SELECT count(*) FROM retrievals")[0] == 3


def test_search_table_escapes_markup(
    invoke,
    memory_home: Path,
    embedder,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    note = tmp_path / "n" / "2026-11-28-alarm.md"
    note.parent.mkdir()
    note.write_text(
        "# [red]Alarm[/red] drill\nThe [bold]fire alarm[/bold] drill at work.", encoding="utf-8"
    )
    with Memory.open(memory_home, embedder=embedder) as mem:
        mem.ingest([note.parent])
    keyword.forget_cached(memory_home)
    result = invoke("search", "fire alarm drill", "-k", "2")
    assert result.exit_code == 0, result.output
    assert "[red]Alarm[/red] drill" in result.output
    assert "[bold]fire alarm[/bold]" in result.output
    assert "keyword" in result.output and "final" in result.output


def test_search_unknown_persona(invoke) -> None:  # type: ignore[no-untyped-def]
    result = invoke("search", "x", "--persona", "pirate")
    assert result.exit_code != 0
    assert "pirate" in str(result.exception) and "analyst" in str(result.exception)


@pytest.mark.at_rest
def test_mmr_reads_its_pool_from_the_index_copy_of_the_embeddings(memory: Memory) -> None:
    friend = get_persona("friend")
    prepared = pipeline.prepare_query(
        memory, "long runs with Ines", now=NOW, previous=None, use_vector=True
    )
    cands, _ = pipeline.gather(memory, prepared, friend, k=friend.chunks, now=NOW)
    assert cands is not None and cands.vectors is not None
    ids = cands.ids[:5]
    assert np.allclose(cands.embeddings(ids), pipeline.fetch_vectors(memory, ids))
    result = retrieve(memory, "long runs with Ines", friend, now=NOW)
    assert 0 < len(result.chunks) <= friend.chunks


def test_the_state_read_has_the_exact_signature_beside_the_vector_hits(memory: Memory) -> None:
    big = 2**24 + 1  # a FLOAT would read it as 2^24
    vector = memory.embedder.encode_one("zeppelin")
    memory.db.execute(
        "INSERT INTO chunks (id, episode_id, ordinal, text, embedding)"
        f" SELECT {big}, episode_id, 99, 'zeppelin', ?::FLOAT[384] FROM chunks LIMIT 1",
        [vector_literal(vector)],
    )
    count = memory.db.fetchone("SELECT count(*) FROM chunks")[0]
    state, hits = pipeline.state_and_vector_hits(memory, vector, 5)
    assert state.signature == (count, big)
    assert len(hits) == 5 and hits[0][0] == big
    assert pipeline.state_and_vector_hits(memory, None, 5)[0] == state
