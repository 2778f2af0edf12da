"""Hostile input against the storage side (issue 15): full disks, processes killed mid-reply,
hostile files in an ingest, a damaged keyword index, file modes, odd home paths.

Each test first builds the exact input the issue reports, then checks what sadie promises:
one line and a documented exit code instead of a traceback, nothing left ``streaming``,
one bad file skipped with a reason while the rest go in, a damaged index rebuilt.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sadie_tui.engine.errors import StorageError
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.requests import ChatTurn
from sadie_tui.engine.store import conversations as conversation_store
from sadie_tui.engine.store import episodes as episode_store
from sadie_tui.engine.store.db import Database
from tests.conftest import write_notes
from tests.support.ollama_server import Reply

ROOT = Path(__file__).resolve().parent.parent


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, SADIE_HOME=str(home), OLLAMA_HOST="http://127.0.0.1:9")
    env.pop("COLUMNS", None)
    env.update(extra)
    return env


# --------------------------------------------------------------------------- a full disk

SMALL_NOTES = {
    "journal/2026-03-14.md": "---\ntitle: Warden retro\ndate: 2026-03-14\n---\n"
    "Ines said the Warden rollout went fine in Lisbon, and Pedro wants a retro.",
    "journal/2026-10-11.md": "---\ntitle: Race day\ndate: 2026-10-11\n---\n"
    "Finished the Lisbon marathon with Ines at the finish line.",
    "beliefs.jsonl": '{"statement": "Running keeps me sane", "confidence": 0.5,'
    ' "evidence": ["journal/2026-10-11.md"]}\n',
}

# Runs sadie commands in one process whose files may not grow (RLIMIT_FSIZE 0, SIGXFSZ
# ignored): every write fails with EFBIG, as on a full disk, at the first commit. The model
# loads first, since it writes temporary files.
FULL_DISK = r"""
import contextlib, io, json, resource, signal, sys
from sadie_tui.cli import main
from sadie_tui.engine.ingest.embedder import shared_embedder
shared_embedder().warm()
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))
results = []
for args in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as exc:
            code = exc.code
    results.append({"args": args, "code": code, "stderr": err.getvalue()})
print(json.dumps(results))
"""


def _on_a_full_disk(home: Path, commands: list[list[str]]) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, json.dumps(commands)],
        capture_output=True,
        text=True,
        env=_env(home, SADIE_CONFIG=str(home.parent / "config")),
        cwd=ROOT,
        timeout=240,
    )
    # A DuckDB abort (SIGABRT, -6) or a traceback ends the driver before it prints.
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_a_full_disk_gives_one_line_search_a_notice_and_exit_3_for_ask_ingest_compact(
    tmp_home: Path, tmp_path: Path, embedder
) -> None:
    notes = write_notes(tmp_path / "notes", SMALL_NOTES)
    with Memory.open(tmp_home, embedder=embedder) as memory:
        memory.ingest([notes])
        before = episode_store.content_hashes(memory.db)
    # A changed note, a changed belief and a new note: an ingest that replaces stored rows
    # (DuckDB used to abort the whole process when such a commit failed) and adds edges.
    (notes / "journal/2026-03-14.md").write_text("Pedro moved the retro to Monday.", "utf-8")
    (notes / "beliefs.jsonl").write_text(
        SMALL_NOTES["beliefs.jsonl"].replace("0.5", "0.9"), "utf-8"
    )
    (notes / "journal/2026-11-20.md").write_text("Ran 18 km with Ines and Marta.", "utf-8")

    results = _on_a_full_disk(
        tmp_home,
        [
            ["search", "Lisbon marathon"],
            ["--ask", "Who was at the finish line?"],
            ["ingest", "--quiet", str(notes)],
            ["compact"],
        ],
    )
    # A search reads: its results are shown, and one line says its telemetry could not be
    # written (issue 34, item 12). What must write fails in one storage line, exit 3.
    found, *writers = results
    assert found["code"] == 0, found
    lines = found["stderr"].splitlines()
    assert len(lines) == 1 and "could not be written to telemetry" in lines[0], found
    for result in writers:
        assert result["code"] == 3, result
        lines = result["stderr"].splitlines()
        assert len(lines) == 1 and lines[0].startswith("sadie: database error:"), result
        assert "Traceback" not in result["stderr"]
    assert not (tmp_home / "sadie.compact.duckdb").exists()  # no half-written copy left
    with Memory.open(tmp_home, embedder=embedder) as memory:
        assert episode_store.content_hashes(memory.db) == before  # nothing half-applied


def test_a_commit_failing_after_the_old_rows_went_is_healed_by_the_next_ingest(
    tmp_home: Path, tmp_path: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replaced episodes are deleted in a commit of their own; if the commit with the new
    rows then fails, the next ingest writes them again."""
    notes = write_notes(tmp_path / "notes", SMALL_NOTES)
    changed = notes / "journal/2026-03-14.md"
    with Memory.open(tmp_home, embedder=embedder) as memory:
        memory.ingest([notes])
        changed.write_text("Pedro moved the retro to Monday.", "utf-8")

        def full_disk(db: Database, chunks: object) -> None:
            raise StorageError("database error: IO Error: No space left on device")

        with monkeypatch.context() as patch:
            patch.setattr(episode_store, "insert_chunks", full_disk)
            with pytest.raises(StorageError, match="No space left"):
                memory.ingest([notes])
        assert episode_store.count_episodes(memory.db) == 1  # the changed one is gone
        report = memory.ingest([notes])
        assert (report.added, report.unchanged) == (1, 1)
        texts = [text for _, text in episode_store.chunk_texts(memory.db)]
        assert any("Monday" in text for text in texts)
        assert episode_store.count_episodes(memory.db) == 2


def test_compact_with_a_quote_in_the_home_path(tmp_path: Path, embedder) -> None:
    home = tmp_path / "Maya's memory" / "home"
    notes = write_notes(tmp_path / "notes", SMALL_NOTES)
    with Memory.open(home, embedder=embedder) as memory:
        memory.ingest([notes])
    done = subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", "compact"],
        capture_output=True,
        text=True,
        env=_env(home, SADIE_CONFIG=str(tmp_path / "config")),
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("compacted ")
    with Memory.open(home, embedder=embedder) as memory:
        assert episode_store.count_episodes(memory.db) == 2
        assert episode_store.vector_index_in_use(memory.db)


# --------------------------------------------------------------------------- leftover replies


def test_a_reply_left_streaming_by_a_killed_process_is_interrupted_on_the_next_open(
    server, memory_home: Path, tmp_path: Path
) -> None:
    pieces = [f"Ines was there with a sign, part {n}. " for n in range(12)]
    server.queue(Reply(pieces, delay=0.3, stall_after=10, stall_seconds=60))
    process = subprocess.Popen(
        [sys.executable, "-m", "sadie_tui.cli", "chat", "Who was at the race?", "--ndjson"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(memory_home, OLLAMA_HOST=server.url, SADIE_CONFIG=str(tmp_path / "config")),
        cwd=ROOT,
    )
    try:
        tokens = 0
        deadline = time.monotonic() + 120
        assert process.stdout is not None
        while tokens < 6 and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            tokens += json.loads(line)["type"] == "token"
        assert tokens == 6, process.stderr.read() if process.stderr else ""
        time.sleep(1.5)  # past a save of the streamed text (every second)
    finally:
        process.send_signal(signal.SIGKILL)  # a crash: no handler runs
        process.wait(timeout=30)

    with Database.open(memory_home / "sadie.duckdb", read_only=True) as db:
        (left,) = db.fetchall("SELECT id, content FROM messages WHERE status = 'streaming'")
    assert left[1].startswith("Ines was there with a sign, part 0.")
    with Memory.open(memory_home) as memory:
        message = conversation_store.get_message(memory.db, str(left[0]))
    assert message is not None
    assert (message.status, message.content) == ("interrupted", left[1])


def test_a_reply_this_process_is_streaming_is_not_a_leftover(memory) -> None:  # type: ignore[no-untyped-def]
    from sadie_tui.engine import conversations as conv

    cid = conv.create_conversation(memory.db, "two replies").id
    left = conv.add_message(memory.db, cid, "assistant", "Half a", "streaming")
    live = conv.add_message(memory.db, cid, "assistant", "Still typing", "streaming")
    conversation_store._streaming_here.discard(left)  # as if another process had written it
    memory.close()
    with Memory.open(memory.home, read_only=True, embedder=memory.embedder) as read_only:
        assert conv.get_message(read_only.db, left).status == "streaming"  # read-only: as is
    with Memory.open(memory.home, embedder=memory.embedder) as reopened:
        statuses = {m.id: (m.status, m.content) for m in conv.messages(reopened.db, cid)}
        assert statuses == {
            left: ("interrupted", "Half a"),
            live: ("streaming", "Still typing"),
        }
        conv.update_message(reopened.db, live, status="complete")
        assert live not in conversation_store._streaming_here


# --------------------------------------------------------------------------- hostile files

FINE = {"fine.md": "---\ntitle: Fine\n---\nA fine note: Ines ran in Lisbon."}


def _nested_folders(root: Path, depth: int) -> Path:
    """``depth`` folders inside each other (os.makedirs itself recurses too deep for 1,100)."""
    path = root
    path.mkdir(parents=True, exist_ok=True)
    for _ in range(depth):
        path = path / "d"
        path.mkdir()
    return path


def _remove_nested(root: Path) -> None:
    """Take the deep tree down from the bottom: pytest's own clean-up of old temporary
    folders (shutil.rmtree) recurses once per level and would print a RecursionError."""
    levels = [root]
    while (levels[-1] / "d").is_dir():
        levels.append(levels[-1] / "d")
    for level in reversed(levels):
        for child in level.iterdir():
            if not child.is_dir():
                child.unlink()
        level.rmdir()


@pytest.fixture
def deep_tree(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "notes" / "folders"
    if (tmp_path / "notes" / "folders").exists():
        _remove_nested(tmp_path / "notes" / "folders")


def test_one_bad_input_never_aborts_the_rest_of_an_ingest(
    tmp_home: Path, tmp_path: Path, embedder, deep_tree: Path
) -> None:
    notes = write_notes(tmp_path / "notes", FINE)
    # A JSONL line nested 100,000 deep (RecursionError in json), beside a good line.
    deep = "[" * 100_000 + "]" * 100_000
    (notes / "records.jsonl").write_text(
        '{"text": "A good record about Pedro."}\n{"text": ' + deep + "}\n", "utf-8"
    )
    # 1,100 nested folders (RecursionError in discovery), a note at the bottom.
    (_nested_folders(deep_tree, 1100) / "leaf.md").write_text("Too deep.", "utf-8")
    # A NUL byte in a belief's evidence path (ValueError in Path.resolve), and a good belief.
    (notes / "beliefs.jsonl").write_text(
        '{"statement": "I like tea", "evidence": ["journal/a\\u0000b.md"]}\n'
        '{"statement": "I like coffee", "evidence": ["fine.md"]}\n',
        "utf-8",
    )
    # Half a surrogate pair escaped in JSON: a str Python cannot encode as UTF-8.
    (notes / "observations.jsonl").write_text(
        '{"source": "tracker", "observed_at": "2026-11-21T07:10:00", "text": "Slept \\ud83d"}\n',
        "utf-8",
    )

    with Memory.open(tmp_home, embedder=embedder) as memory:
        report = memory.ingest([notes])
        titles = {row[0] for row in memory.db.fetchall("SELECT title FROM episodes")}
        observations = memory.db.fetchall("SELECT text FROM observations")
    reasons = {Path(s.name).name: s.reason for s in report.skipped}
    assert reasons == {
        "records.jsonl#2": "invalid JSON (nested more than 32 levels deep)",
        "d": "folders nested more than 64 deep",
        "beliefs.jsonl#1": "bad evidence path 'journal/a\\x00b.md': embedded null byte",
    }
    assert titles == {"Fine", "A good record about Pedro."}
    assert report.derived == {"beliefs": 1, "observations": 1}
    assert observations == [("Slept \ufffd",)]


# The alias bomb: nine levels of anchors, each nine aliases of the one before.
ALIAS_BOMB = (
    "---\n"
    + 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"{name}: &{name} [{','.join(['*' + before] * 9)}]\n"
        for before, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "title: *i\ntags: *i\ndate: 2026-03-14\nkind: journal\n---\nA note that explodes.\n"
)

# Reads the bomb in a process of its own, capped at 2 GB and a minute: the unguarded loader
# took 41 s and 3.1 GB, and must not take the test run down with it.
READ_BOMB = r"""
import json, resource, sys
from pathlib import Path
from sadie_tui.engine.ingest.readers import read_all
resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, resource.RLIM_INFINITY))
result = read_all([Path(p) for p in sys.argv[1:]])
print(json.dumps({"titles": [e.title for e in result.episodes],
                  "skipped": [[Path(s.name).name, s.reason] for s in result.skipped]}))
"""


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", {**FINE, "bomb.md": ALIAS_BOMB})
    assert len(ALIAS_BOMB.encode()) < 520
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", READ_BOMB, str(notes)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-1000:]
    assert time.monotonic() - started < 20
    assert json.loads(done.stdout) == {
        "titles": ["Fine"],
        "skipped": [["bomb.md", "bad front matter: more than 20 YAML aliases (*name)"]],
    }


def test_front_matter_is_bounded_in_size(tmp_path: Path) -> None:
    from sadie_tui.engine.ingest.readers import read_all

    big = "---\n" + "".join(f"k{n}: v\n" for n in range(20_000)) + "---\nBody.\n"
    notes = write_notes(tmp_path / "notes", {**FINE, "big.md": big})
    result = read_all([notes])
    assert [(Path(s.name).name, s.reason) for s in result.skipped] == [
        ("big.md", "front matter too long (184 KB; the limit is 64 KB)")
    ]
    assert [e.title for e in result.episodes] == ["Fine"]


# --------------------------------------------------------------------------- ingest time


def _read_chunk_and_name(text: str) -> float:
    """CPU seconds for the pure steps of an ingest on one file's text: cleaning, chunking,
    finding names and building the keyword index (embedding costs the same per chunk).
    CPU time of this process, not wall time: other processes on a busy machine do not add
    to it, so the ratios below hold there too."""
    from sadie_tui.engine.ingest.chunker import chunk_text
    from sadie_tui.engine.ingest.entities import EntityIndex
    from sadie_tui.engine.ingest.readers import clean_text
    from sadie_tui.engine.retrieval.keyword import build_index

    started = time.process_time()
    chunks = chunk_text(clean_text(text))
    names = EntityIndex()
    names.learn(chunks)
    for chunk in chunks:
        names.mentions(chunk)
    build_index(range(len(chunks)), chunks)
    return time.process_time() - started


def _fastest(text: str, repeats: int = 3) -> float:
    return min(_read_chunk_and_name(text) for _ in range(repeats))


def test_a_million_tiny_lines_cost_what_the_same_bytes_in_paragraphs_cost() -> None:
    lines = "ab\n" * 1_000_000  # the million-line 3 MB file
    sentence = "Ines and I ran along the river before work, and it was cold. "
    paragraph = sentence * 8 + "\n\n"
    paragraphs = paragraph * (len(lines) // len(paragraph) + 1)
    assert _fastest(lines, 2) < 10 * _fastest(paragraphs, 2)


def test_finding_names_stays_linear_when_a_file_names_thousands_of_people() -> None:
    """Time per byte at 4× the size must not grow (the entity lookup was rebuilt per chunk,
    quadratic in the names known)."""
    import random
    import string

    rng = random.Random(15)

    def names(count: int) -> str:
        return "".join(
            f"met {rng.choice(string.ascii_uppercase)}"
            f"{''.join(rng.choices(string.ascii_lowercase, k=5))} today.\n"
            for _ in range(count)
        )

    small, large = names(10_000), names(40_000)
    per_byte_small = _fastest(small) / len(small)
    per_byte_large = _fastest(large) / len(large)
    assert per_byte_large < 1.8 * per_byte_small


# --------------------------------------------------------------------------- the keyword index


def _shorter_array(name: str):  # type: ignore[no-untyped-def]
    def damage(folder: Path) -> None:
        import numpy as np

        values = np.load(folder / name)
        np.save(folder / name, values[: len(values) // 2])

    return damage


def _cut_file(name: str):  # type: ignore[no-untyped-def]
    def damage(folder: Path) -> None:
        path = folder / name
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])

    return damage


def _one_episode_short(folder: Path) -> None:
    path = folder / "episodes.json"
    episodes = json.loads(path.read_text("utf-8"))
    path.write_text(json.dumps({k: v[:-1] for k, v in episodes.items()}), "utf-8")


def _other_vocabulary(folder: Path) -> None:
    path = folder / "vocab.index.json"
    vocabulary = json.loads(path.read_text("utf-8"))
    path.write_text(json.dumps({f"x{n}": i for n, i in enumerate(vocabulary.values())}), "utf-8")


DAMAGES = {
    "chunk_ids.npy shorter": _shorter_array("chunk_ids.npy"),
    "episode.npy shorter": _shorter_array("episode.npy"),
    "when.npy shorter": _shorter_array("when.npy"),
    "idf.npy shorter": _shorter_array("idf.npy"),
    "salience.npy shorter": _shorter_array("salience.npy"),
    "vectors.npy cut": _cut_file("vectors.npy"),
    "chunk_ids.npy emptied": lambda folder: (folder / "chunk_ids.npy").write_bytes(b""),
    "episodes.json one short": _one_episode_short,
    "episodes.json cut": _cut_file("episodes.json"),
    "vocabulary replaced": _other_vocabulary,
}


@pytest.mark.parametrize("damage", DAMAGES, ids=list(DAMAGES))
def test_a_damaged_keyword_index_is_reported_by_doctor_and_rebuilt_by_search(
    memory_home: Path, embedder, damage: str
) -> None:
    from click.testing import CliRunner

    from sadie_tui.cli import main_group

    def doctor() -> dict[str, dict]:
        done = CliRunner().invoke(main_group, ["doctor", "--quick", "--json"])
        return {c["name"]: c for c in json.loads(done.stdout)}

    def search() -> tuple[dict, str]:
        done = CliRunner().invoke(main_group, ["search", "Lisbon marathon", "--json"])
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout), done.stderr

    assert doctor()["keyword index"]["status"] == "ok"
    DAMAGES[damage](memory_home / "bm25")

    found = doctor()["keyword index"]
    assert found["status"] == "fail" and "is damaged: " in found["detail"]
    result, said = search()
    assert said.startswith("sadie: the keyword index was damaged (")
    assert said.endswith("): rebuilt it from the memory\n") and said.count("\n") == 1
    assert result["notices"] == [said.removeprefix("sadie: ").strip()]
    assert result["chunks"][0]["title"] == "Race day"
    assert any((c["scores"]["keyword"] or 0) > 0 for c in result["chunks"])  # keyword is on
    again, said_again = search()
    assert said_again == "" and again["notices"] == []
    assert doctor()["keyword index"]["status"] == "ok"


def test_a_damaged_index_is_said_in_chat_and_ask_too(memory) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    from sadie_tui.config import load_settings
    from sadie_tui.engine.events import Status
    from sadie_tui.engine.retrieval.keyword import forget_cached, index_dir
    from sadie_tui.engine.session import Session

    companion = Session(memory, load_settings())

    async def chat_statuses() -> list[str]:
        return [e.value async for e in companion.chat(ChatTurn("Who ran with me?")) if isinstance(e, Status)]

    for turn in ("chat", "ask"):
        forget_cached(memory.home)
        _other_vocabulary(index_dir(memory.home))
        if turn == "chat":
            said = asyncio.run(chat_statuses())
        else:
            said = asyncio.run(companion.ask("Who ran with me?")).notices
        (notice,) = [n for n in said if "keyword index" in n]
        assert notice.startswith("the keyword index was damaged (vocab.index.json "), turn
        assert notice.endswith("): rebuilt it from the memory"), turn


# --------------------------------------------------------------------------- private files


def _modes(home: Path) -> dict[str, str]:
    found = {".": oct(home.stat().st_mode & 0o777)}
    for path in sorted(home.rglob("*")):
        found[path.relative_to(home).as_posix()] = oct(path.stat().st_mode & 0o777)
    return found


def _with_umask(mask: int):  # type: ignore[no-untyped-def]
    return lambda: os.umask(mask)


def test_a_new_memory_is_private_under_the_usual_umask(tmp_path: Path) -> None:
    home = tmp_path / "new" / "home"
    notes = write_notes(tmp_path / "notes", SMALL_NOTES)
    env = _env(home, SADIE_CONFIG=str(tmp_path / "config"))
    for args in (["ingest", "--quiet", str(notes)], ["search", "Lisbon"], ["compact"]):
        done = subprocess.run(
            [sys.executable, "-m", "sadie_tui.cli", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=180,
            preexec_fn=_with_umask(0o022),
        )
        assert done.returncode == 0, done.stderr
    modes = _modes(home)
    assert modes.pop(".") == "0o700"
    assert modes.pop("bm25") == "0o700"
    assert "sadie.duckdb" in modes and "bm25/manifest.json" in modes
    assert set(modes.values()) == {"0o600"}, modes
    assert oct((tmp_path / "new").stat().st_mode & 0o777) == "0o755"  # a parent as usual


def test_the_write_ahead_log_is_private_while_a_memory_is_open(tmp_path: Path, embedder) -> None:
    old = os.umask(0o022)
    try:
        with Memory.open(tmp_path / "home", embedder=embedder) as memory:
            memory.ingest([write_notes(tmp_path / "notes", SMALL_NOTES)])
            memory.db.execute("CHECKPOINT")  # DuckDB drops the log here and makes it anew
            memory.db.execute("INSERT INTO soul (id, text) VALUES (2, 'a line')")
            wal = tmp_path / "home" / "sadie.duckdb.wal"
            assert wal.exists() and oct(wal.stat().st_mode & 0o777) == "0o600"
        exported = tmp_path / "export.md"
        exported.write_text("an export", "utf-8")  # the person's umask is untouched
        assert oct(exported.stat().st_mode & 0o777) == "0o644"
    finally:
        os.umask(old)


def test_a_folder_the_person_chose_keeps_its_mode_and_doctor_warns(
    tmp_path: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sadie_tui.engine.doctor import check_home

    chosen = tmp_path / "chosen"
    chosen.mkdir()
    chosen.chmod(0o755)
    with Memory.open(chosen, embedder=embedder):
        pass
    assert oct(chosen.stat().st_mode & 0o777) == "0o755"
    assert oct((chosen / "sadie.duckdb").stat().st_mode & 0o777) == "0o600"
    warned = check_home(chosen)
    assert (warned.status, warned.detail, warned.fix) == (
        "warn",
        f"{chosen} is readable by others (chosen 755)",
        f"chmod -R go-rwx {chosen}",
    )

    # One sadie made (its platform data folder), left 0755 by an older sadie: tightened.
    root = tmp_path / "platform"
    monkeypatch.setattr("sadie_tui.paths.user_data_root", lambda: root)
    own = root / "home"
    own.mkdir(parents=True)
    own.chmod(0o755)
    with Memory.open(own, embedder=embedder):
        pass
    assert oct(own.stat().st_mode & 0o777) == "0o700"
    assert check_home(own).status == "ok"
