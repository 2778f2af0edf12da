"""Storage: migrations, the vss extension loaded offline, the HNSW index (used, recall, compaction)
and the single-writer lock between processes. Real DuckDB files, the real embedding model."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sadie_tui.engine.errors import LockedError, StorageError
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.store.db import Database
from sadie_tui.engine.store.migrations import MIGRATIONS, applied, migrate
from sadie_tui.engine.store.vectors import vector_literal
from sadie_tui.paths import db_path

ROOT = Path(__file__).resolve().parent.parent

DESIGN_TABLES = {
    "episodes",
    "chunks",
    "entities",
    "entity_mentions",
    "entity_edges",
    "beliefs",
    "observations",
    "wiki_entries",
    "briefs",
    "today_cards",
    "soul",
    "conversations",
    "messages",
    "chips",
    "policy_events",
    "turns",
    "retrievals",
}
VECTOR_SQL = (
    "SELECT id FROM chunks ORDER BY array_cosine_distance(embedding, ?::FLOAT[384]) LIMIT 10"
)


def _tables(db: Database) -> set[str]:
    return {r[0] for r in db.fetchall("SELECT table_name FROM duckdb_tables()")}


def _columns(db: Database, table: str) -> dict[str, str]:
    return dict(
        db.fetchall(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ?", [table]
        )
    )


def _probe(seed: int = 0) -> str:
    vec = np.random.default_rng(seed).normal(size=384).astype(np.float32)
    return vector_literal(vec / np.linalg.norm(vec))


# --------------------------------------------------------------------------- migrations


def test_migrations_from_empty(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "sadie.duckdb"
    with Database.open(path) as db:
        assert path.is_file()
        assert DESIGN_TABLES | {"schema_migrations"} <= _tables(db)
        rows = db.fetchall(
            "SELECT name, applied_at FROM schema_migrations ORDER BY applied_at, name"
        )
        names = [name for name, _ in MIGRATIONS]
        assert [r[0] for r in rows] == names
        assert names == sorted(names), "migration names must sort in the order they run"
        assert len(set(names)) == len(names)
        assert applied(db) == names

        episodes = _columns(db, "episodes")
        for col in (
            "id",
            "kind",
            "title",
            "source",
            "occurred_at",
            "ingested_at",
            "salience",
            "content_hash",
            "text",
        ):
            assert col in episodes, col
        assert episodes["id"] == "UUID"
        chunks = _columns(db, "chunks")
        assert chunks["embedding"] == "FLOAT[384]"
        assert {"id", "episode_id", "ordinal", "text"} <= set(chunks)
        assert {"statement", "status", "confidence", "evidence"} <= set(_columns(db, "beliefs"))
        assert {"source", "observed_at", "text"} <= set(_columns(db, "observations"))
        assert {
            "title",
            "summary",
            "emotion",
            "pinned",
            "archived_at",
            "created_at",
            "updated_at",
        } <= set(_columns(db, "conversations"))
        assert {
            "role",
            "content",
            "status",
            "emotion",
            "citations",
            "model",
            "latency_ms",
            "metadata",
        } <= set(_columns(db, "messages"))
        assert {"conversation_id", "kind", "ref_id", "label", "snippet"} <= set(
            _columns(db, "chips")
        )
        index = db.fetchall(
            "SELECT table_name FROM duckdb_indexes() WHERE index_name = 'chunks_embedding'"
        )
        assert index == [("chunks",)]


def test_migrations_rerun_change_nothing(tmp_path: Path) -> None:
    path = tmp_path / "sadie.duckdb"
    with Database.open(path) as db:
        before = db.fetchall("SELECT name, applied_at FROM schema_migrations ORDER BY name")
        db.execute("INSERT INTO soul (id, text) VALUES (1, 'kept')")
        assert migrate(db) == []
    with Database.open(path) as db:  # a second open migrates again: nothing to do
        assert db.fetchall("SELECT name, applied_at FROM schema_migrations ORDER BY name") == before
        assert migrate(db) == []
        assert db.fetchone("SELECT text FROM soul") == ("kept",)


def test_an_older_file_is_upgraded_in_order(tmp_path: Path) -> None:
    import duckdb

    from sadie_tui.engine.store.db import vss_extension_path

    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(f"LOAD '{vss_extension_path()}'")
    con.execute("SET hnsw_enable_experimental_persistence = true")
    old = Database(con, path, read_only=False)
    applied(old)
    for name, fn in MIGRATIONS[:2]:
        fn(old)
        old.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])
    old.close()
    with Database.open(path) as db:
        assert applied(db) == [name for name, _ in MIGRATIONS]
        assert DESIGN_TABLES <= _tables(db)


def test_vss_is_loaded_from_the_package_with_autoload_off(tmp_path: Path) -> None:
    with Database.open(tmp_path / "sadie.duckdb") as db:
        settings = dict(
            db.fetchall(
                "SELECT name, value FROM duckdb_settings() WHERE name IN"
                " ('autoinstall_known_extensions', 'autoload_known_extensions',"
                "  'hnsw_enable_experimental_persistence', 'hnsw_ef_search')"
            )
        )
        assert settings["autoinstall_known_extensions"] == "false"
        assert settings["autoload_known_extensions"] == "false"
        assert settings["hnsw_enable_experimental_persistence"] == "true"
        assert int(settings["hnsw_ef_search"]) >= 64
        loaded = db.fetchone(
            "SELECT loaded, install_path FROM duckdb_extensions() WHERE extension_name = 'vss'"
        )
        assert loaded is not None and loaded[0] is True


def test_read_only_open_of_a_missing_memory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="there is no memory") as info:
        Database.open(tmp_path / "none.duckdb", read_only=True)
    assert info.value.fix and "sadie ingest" in info.value.fix


def test_storage_errors_are_one_line(tmp_path: Path) -> None:
    with Database.open(tmp_path / "sadie.duckdb") as db:
        with pytest.raises(StorageError) as info:
            db.execute("SELECT * FROM no_such_table")
        assert "\n" not in info.value.one_line()
        with pytest.raises(StorageError), db.transaction():
            db.execute("INSERT INTO soul (id, text) VALUES (1, 'rolled back')")
            db.execute("SELECT * FROM no_such_table")
        assert db.fetchone("SELECT count(*) FROM soul") == (0,)


def test_a_corrupt_file_is_not_reported_as_in_use(tmp_path: Path) -> None:
    path = tmp_path / "sadie.duckdb"
    with Database.open(path) as db:
        db.execute("INSERT INTO soul (id, text) VALUES (1, 'x')")
        db.execute("CHECKPOINT")
    with path.open("r+b") as fh:  # garble the first block after the headers
        fh.seek(12288)
        fh.write(b"\xff" * 4000)
    with pytest.raises(StorageError) as info:
        Database.open(path, wait=5.0)
    assert not isinstance(info.value, LockedError)  # the "lock" in "block" is not a lock
    assert "in use" not in info.value.message
    assert info.value.message.startswith(f"cannot open the memory at {path}")


# --------------------------------------------------------------------------- HNSW


def test_the_vector_query_uses_the_hnsw_index(memory_home: Path) -> None:
    with Memory.open(memory_home) as memory:
        assert memory.db.vector_index_used(VECTOR_SQL, [_probe()])
        # The detector is not always true: a plain scan is reported as one.
        assert not memory.db.vector_index_used("SELECT id FROM chunks ORDER BY id LIMIT 10")


def _demo_paragraphs() -> list[str]:
    paras: set[str] = set()
    for path in sorted((ROOT / "data" / "demo").rglob("*")):
        if path.suffix not in {".md", ".txt"} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if text.startswith("---\n"):
            text = text[text.find("\n---", 3) + 4 :]
        for para in re.split(r"\n\s*\n", text):
            para = " ".join(para.split())
            if 60 <= len(para) <= 240 and not para.startswith("#"):
                paras.add(para)
    return sorted(paras)


def _generated_paragraphs(n: int) -> list[str]:
    rng = random.Random(7)
    who = ["Ines", "Pedro", "Marta", "Kofi", "my sister", "the landlord", "Dr Ramos", "Tomás"]
    where = [
        "in Lisbon",
        "at the clinic",
        "by the river",
        "at the office",
        "on the train",
        "in the garden",
        "at the market",
        "in Porto",
    ]
    what = [
        "argued about money",
        "ran twelve kilometres",
        "planned the Warden migration",
        "talked about moving house",
        "cooked a terrible risotto",
        "fixed the bike",
        "reviewed the budget",
        "watched the storm come in",
        "missed the deadline",
        "laughed about the wedding",
        "painted the kitchen",
        "read about sleep",
    ]
    feel = [
        "and felt calm",
        "and I was anxious all evening",
        "which made me proud",
        "and nobody was happy",
        "and it rained the whole time",
        "and I slept badly after",
    ]
    out = set()
    while len(out) < n:
        out.add(
            f"{rng.choice(who).capitalize()} and I {rng.choice(what)} {rng.choice(where)} "
            f"{rng.choice(feel)}. {rng.choice(who).capitalize()} {rng.choice(what)} too."
        )
    return sorted(out)


@pytest.fixture(scope="module")
def recall_memory(tmp_path_factory: pytest.TempPathFactory, embedder):  # type: ignore[no-untyped-def]
    """260 chunks of real, varied text (the demo's paragraphs) plus ≥ 50 held-out queries."""
    paras = _demo_paragraphs()
    if len(paras) < 320:
        paras = _generated_paragraphs(320)
    rng = random.Random(11)
    rng.shuffle(paras)
    queries, corpus = paras[:60], paras[60:320]
    notes = tmp_path_factory.mktemp("recall-notes")
    for i, para in enumerate(corpus):
        (notes / f"p{i:03d}.md").write_text(para, encoding="utf-8")
    home = tmp_path_factory.mktemp("recall") / "home"
    memory = Memory.open(home, embedder=embedder)
    report = memory.ingest([notes])
    assert report.added == len(corpus) and report.chunks == len(corpus)
    yield memory, queries
    memory.close()


def _recall_at_10(memory: Memory, queries: list[str]) -> float:
    ids, vectors = [], []
    for chunk_id, embedding in memory.db.fetchall("SELECT id, embedding FROM chunks"):
        ids.append(chunk_id)
        vectors.append(embedding)
    ids_arr = np.array(ids)
    matrix = np.array(vectors, dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    qv = memory.embedder.encode(queries)
    hits = 0
    for vec in qv:
        exact = set(ids_arr[np.argsort(-(matrix @ vec), kind="stable")[:10]].tolist())
        literal = vector_literal(vec)
        assert memory.db.vector_index_used(VECTOR_SQL, [literal])
        approx = {r[0] for r in memory.db.fetchall(VECTOR_SQL, [literal])}
        assert len(approx) == 10
        hits += len(exact & approx)
    return hits / (10 * len(queries))


def test_hnsw_recall_at_10_against_exact_search(recall_memory) -> None:  # type: ignore[no-untyped-def]
    memory, queries = recall_memory
    assert len(queries) >= 50
    assert memory.db.fetchone("SELECT count(*) FROM chunks")[0] >= 250
    recall = _recall_at_10(memory, queries)
    # More chunks than one embedding slice (256): every vector still belongs to its own text.
    sample = memory.db.fetchall("SELECT text, embedding FROM chunks USING SAMPLE 24 ROWS")
    fresh = memory.embedder.encode([r[0] for r in sample])
    stored = np.array([r[1] for r in sample], dtype=np.float32)
    np.testing.assert_allclose(np.sum(stored * fresh, axis=1), 1.0, atol=1e-4)
    print(f"recall@10 = {recall:.3f}")
    assert recall >= 0.95, f"recall@10 = {recall:.3f}"


def test_compaction_keeps_rows_and_the_index(recall_memory) -> None:  # type: ignore[no-untyped-def]
    memory, queries = recall_memory
    counts = {
        t: memory.db.fetchone(f"SELECT count(*) FROM {t}")[0]
        for t in ("episodes", "chunks", "entities", "entity_mentions", "entity_edges")
    }
    chunk_rows = memory.db.fetchall("SELECT id, episode_id, text FROM chunks ORDER BY id")
    top = memory.db.fetchall(VECTOR_SQL, [_probe(3)])
    before, after = memory.compact()
    assert before > 0 and after > 0
    assert not db_path(memory.home).with_suffix(".compact.duckdb").exists()
    assert {t: memory.db.fetchone(f"SELECT count(*) FROM {t}")[0] for t in counts} == counts
    assert memory.db.fetchall("SELECT id, episode_id, text FROM chunks ORDER BY id") == chunk_rows
    assert [r[0] for r in applied(memory.db)] and applied(memory.db) == [n for n, _ in MIGRATIONS]
    # The rebuilt index is a cosine index again, used, and as good as before.
    assert memory.db.vector_index_used(VECTOR_SQL, [_probe(3)])
    assert memory.db.fetchall(VECTOR_SQL, [_probe(3)]) == top
    assert _recall_at_10(memory, queries[:20]) >= 0.95
    # Writing after a compaction: chunk ids keep counting up (the sequence survived).
    extra = memory.home.parent / "extra"
    extra.mkdir()
    (extra / "late.md").write_text("A late note about the garden and the tomatoes.", "utf-8")
    report = memory.ingest([extra])
    assert report.added == 1
    new_id = memory.db.fetchone("SELECT max(id) FROM chunks")[0]
    assert new_id > max(r[0] for r in chunk_rows)
    memory.close()
    with Database.open(db_path(memory.home), read_only=True) as db:  # survives a reopen
        assert db.vector_index_used(VECTOR_SQL, [_probe(3)])
        assert db.fetchone("SELECT count(*) FROM chunks")[0] == counts["chunks"] + 1
    memory.db = Database.open(db_path(memory.home))


# --------------------------------------------------------------------------- the lock

HOLDER = r"""
import sys
from pathlib import Path
from sadie_tui.engine.memory import Memory

memory = Memory.open(Path(sys.argv[1]))
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() == "write":
        memory.db.execute(
            "INSERT INTO conversations (id, title) VALUES (uuid(), 'written while locked')"
        )
        row = memory.db.fetchone(
            "SELECT (SELECT count(*) FROM episodes), (SELECT count(*) FROM conversations)"
        )
        print(f"wrote {row[0]} {row[1]}", flush=True)
    elif line.strip() == "quit":
        break
memory.close()
print("closed", flush=True)
"""


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["SADIE_HOME"] = str(home)
    env["OLLAMA_HOST"] = "http://127.0.0.1:9"
    env.pop("COLUMNS", None)
    return env


def test_a_second_process_gets_a_clear_lock_message(memory_home: Path, notes_dir: Path) -> None:
    with Memory.open(memory_home) as memory:
        episodes = memory.db.fetchone("SELECT count(*) FROM episodes")[0]
        chunks = memory.db.fetchall("SELECT id, text FROM chunks ORDER BY id")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(memory_home)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(memory_home),
        cwd=ROOT,
    )
    try:
        assert holder.stdout.readline().strip() == "ready", holder.stderr.read()
        for args in (["ingest", str(notes_dir)], ["stats", "--json"]):
            second = subprocess.run(
                [sys.executable, "-m", "sadie_tui.cli", *args],
                capture_output=True,
                text=True,
                env=_env(memory_home),
                cwd=ROOT,
                timeout=60,
            )
            assert second.returncode != 0
            assert second.returncode == int(LockedError.exit_code)
            assert "Traceback" not in second.stderr
            lines = second.stderr.strip().splitlines()
            assert len(lines) == 1, second.stderr
            assert lines[0].startswith("sadie: ")
            assert f"in use by another sadie (pid {holder.pid})" in lines[0]
            assert second.stdout == ""
        # The in-process API says the same, as a LockedError.
        with pytest.raises(LockedError, match=rf"in use by another sadie \(pid {holder.pid}\)"):
            Database.open(db_path(memory_home), wait=0.2)
        # The first process is unharmed: it can still write and read.
        holder.stdin.write("write\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == f"wrote {episodes} 1"
        holder.stdin.write("quit\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "closed"
        assert holder.wait(timeout=30) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    # Nothing was lost or corrupted.
    with Memory.open(memory_home) as memory:
        assert memory.db.fetchone("SELECT count(*) FROM episodes")[0] == episodes
        assert memory.db.fetchall("SELECT id, text FROM chunks ORDER BY id") == chunks
        assert memory.db.fetchone("SELECT title FROM conversations") == ("written while locked",)
        assert memory.db.vector_index_used(VECTOR_SQL, [_probe()])
    # And now the other process can get in.
    done = subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", "stats", "--json"],
        capture_output=True,
        text=True,
        env=_env(memory_home),
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"]["conversations"] == 1


def test_a_read_only_open_while_locked_is_also_a_lock_error(memory_home: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(memory_home)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(memory_home),
        cwd=ROOT,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(LockedError):
            Database.open(db_path(memory_home), read_only=True, wait=0.2)
    finally:
        holder.communicate("quit\n", timeout=30)
    assert holder.returncode == 0
