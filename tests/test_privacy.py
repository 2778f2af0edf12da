"""Privacy at rest (issue 37): an encrypted memory leaves no word of a note on disk, a missing
or wrong key is one line and exit 7 with nothing written, the passphrase re-keys, a switch a
kill interrupted is finished or rolled back, and a backup restores whole into a new home.

Real components: the CLI in subprocesses on real DuckDB files, `sadie serve` as the holder on
its real Unix socket; the OS keyring is never touched (conftest sets keyring's null backend,
and the keyring test installs an in-memory one in this process only).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sadie_tui.engine.errors import ExitCode, KeyNeededError
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.privacy.convert import change_passphrase, encrypt
from sadie_tui.engine.privacy.unlock import unlock
from sadie_tui.engine.store import keycard, switch
from sadie_tui.engine.store.copies import table_counts
from tests.conftest import MORE_NOTES, NOTES, PASSPHRASE, write_notes

ROOT = Path(__file__).resolve().parents[1]
EDITED = "a quarterdeck saxophonist"
# Words of every note that no file of sadie's own would hold unless the note's text is there.
STOP = {"the", "and", "with", "that", "this", "what", "have", "been", "week", "said", "was"}


def distinctive_words(notes: dict[str, str]) -> dict[str, set[str]]:
    """For each note, its words of seven letters or more (front matter included: titles)."""
    words = {}
    for name, text in notes.items():
        found = {w.lower() for w in re.findall(r"[A-Za-z]{7,}", text)} - STOP
        if found:
            words[name] = found
    return words


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots for p in ([root] if root.is_file() else root.rglob("*"))]


def leaks(words: dict[str, set[str]], *roots: Path) -> dict[str, list[str]]:
    """Which note's words each file holds, case-insensitively (in UTF-8 or UTF-16)."""
    found: dict[str, list[str]] = {}
    every = sorted({w for ws in words.values() for w in ws})
    for path in files_under(*roots):
        if not path.is_file():
            continue
        data = path.read_bytes().lower()
        hits = [w for w in every if w.encode() in data or w.encode("utf-16-le") in data]
        if hits:
            found[str(path)] = hits
    return found


def sadie(
    home: Path, *args: str, passphrase: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    run_env = {k: v for k, v in os.environ.items() if k not in ("SADIE_PASSPHRASE", "COLUMNS")}
    run_env.update(
        SADIE_HOME=str(home),
        SADIE_CONFIG=str(home.parent / "config"),
        OLLAMA_HOST="http://127.0.0.1:9",
        PYTHONPATH=str(ROOT),
        **env,
    )
    if passphrase is not None:
        run_env["SADIE_PASSPHRASE"] = passphrase
    command = [sys.executable, "-m", "sadie_tui.cli", *args]
    return subprocess.run(
        command, env=run_env, capture_output=True, text=True, timeout=300, cwd=home.parent
    )


def snapshot(home: Path) -> dict[str, tuple[int, str]]:
    """Every file under ``home``: its mode and sha256 (what "nothing changed" compares)."""
    return {
        str(p.relative_to(home)): (p.stat().st_mode, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(home.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def every_note(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    notes = {**NOTES, **MORE_NOTES}
    return write_notes(tmp_path_factory.mktemp("all-notes"), notes), notes


@pytest.fixture(scope="module")
def used_memory(
    tmp_path_factory: pytest.TempPathFactory, every_note: tuple[Path, dict[str, str]], embedder
) -> Path:
    """Every note ingested, searched (the keyword index saved) and chatted about (offline:
    conversations, messages, turns, retrievals written), in a plain home: built once."""
    folder, _ = every_note
    home = tmp_path_factory.mktemp("used") / "home"
    for args in (["ingest", str(folder)], ["search", "marathon"], ["chat", "How was the race?"]):
        done = sadie(home, *args, SADIE_REASONER="offline")
        assert done.returncode == 0, done.stderr
    return home


def test_a_plain_memory_shows_the_notes_words_so_the_grep_can_see_them(
    used_memory: Path, every_note: tuple[Path, dict[str, str]]
) -> None:
    """The control: the same grep finds every note's words in a plain memory."""
    words = distinctive_words(every_note[1])
    found = leaks(words, used_memory)
    seen = {w for hits in found.values() for w in hits}
    assert all(ws & seen for ws in words.values())
    assert any(p.endswith("sadie.duckdb") for p in found)
    assert any("bm25" in p for p in found)


def test_an_encrypted_memory_and_its_backup_hold_no_word_of_any_note(
    used_memory: Path, every_note: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(used_memory, home)
    # A soul summary the person wrote beside the memory before encrypting it.
    (home / "soul.md").write_text("A vermilion lighthouse keeper at heart.\n", encoding="utf-8")
    done = sadie(home, "encrypt", passphrase=PASSPHRASE)
    assert done.returncode == 0, done.stderr
    assert "vermilion lighthouse" in sadie(home, "soul", passphrase=PASSPHRASE).stdout
    # And one edited afterwards (the editor writes it; sadie seals it).
    editor = f"{sys.executable} -c \"import sys; open(sys.argv[1], 'w').write('{EDITED}')\""
    done = sadie(home, "soul", "edit", passphrase=PASSPHRASE, EDITOR=editor)
    assert done.returncode == 0, done.stderr
    assert EDITED in sadie(home, "soul", passphrase=PASSPHRASE).stdout
    assert not (home / "soul.md").exists()
    # Use it as before: search (the sealed keyword index), chat, ingest again, back up.
    for args in (
        ["search", "marathon"],
        ["chat", "What about Ines?"],
        ["ingest", str(every_note[0])],
    ):
        done = sadie(home, *args, passphrase=PASSPHRASE, SADIE_REASONER="offline")
        assert done.returncode == 0, done.stderr
    found = sadie(home, "search", "Lisbon marathon", "--json", passphrase=PASSPHRASE)
    assert "Race day" in found.stdout
    backup = tmp_path / "memory.sadie-backup"
    done = sadie(home, "backup", str(backup), passphrase=PASSPHRASE)
    assert done.returncode == 0, done.stderr
    assert (home / "bm25.sealed").is_file() and not (home / "bm25").exists()
    # The manifest names the tables ("conversations", "belief_evidence"): sadie's words, not
    # the notes'.
    with tarfile.open(backup) as tar:
        member = tar.extractfile("manifest.json")
        assert member is not None
        tables = " ".join(json.loads(member.read())["counts"])
    souls = {"soul.md": "vermilion lighthouse", "edited": EDITED}
    words = {
        note: {w for w in found if w not in tables}
        for note, found in distinctive_words({**every_note[1], **souls}).items()
    }
    assert all(words.values())
    assert leaks(words, home, backup) == {}


def test_without_the_key_one_line_exit_7_and_nothing_changes(
    used_memory: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(used_memory, home)
    assert sadie(home, "encrypt", passphrase=PASSPHRASE).returncode == 0
    before = snapshot(home)
    for passphrase in (None, "not the passphrase"):
        for args in (["stats"], ["search", "marathon"], ["chat", "hello"], ["backup", "b.tar"]):
            done = sadie(home, *args, passphrase=passphrase)
            assert done.returncode == ExitCode.KEY == 7, (args, done.stderr)
            assert done.stderr.count("\n") == 1 and done.stderr.startswith("sadie: ")
            assert "Traceback" not in done.stderr and done.stdout == ""
    assert snapshot(home) == before
    assert not (tmp_path / "b.tar").exists()
    assert sadie(home, "stats", passphrase=PASSPHRASE).returncode == 0


def test_a_new_passphrase_re_keys_and_the_old_one_opens_nothing(
    memory_home: Path, embedder
) -> None:
    encrypt(memory_home, "first passphrase", keyring=False)
    old_file = (memory_home / "sadie.duckdb").read_bytes()
    with Memory.open(memory_home, embedder=embedder) as memory:
        counts = table_counts(memory.db)
    change_passphrase(memory_home, "second passphrase", keyring=False)
    assert (memory_home / "sadie.duckdb").read_bytes() != old_file
    keycard.forget(memory_home)
    os.environ["SADIE_PASSPHRASE"] = "first passphrase"
    try:
        with pytest.raises(KeyNeededError, match="does not open"):
            unlock(memory_home)
        os.environ["SADIE_PASSPHRASE"] = "second passphrase"
        unlock(memory_home)
    finally:
        del os.environ["SADIE_PASSPHRASE"]
    with Memory.open(memory_home, embedder=embedder) as memory:
        assert table_counts(memory.db) == counts


def _keyring_backend() -> object:
    """An in-memory keyring backend (this process only): the OS keyring is never asked."""
    from keyring.backend import KeyringBackend

    class Backend(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.saved: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.saved.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.saved[service, username] = password

        def delete_password(self, service: str, username: str) -> None:
            self.saved.pop((service, username), None)

    return Backend()


def test_the_keyring_keeps_the_key_so_no_passphrase_is_asked(memory_home: Path, embedder) -> None:
    import keyring

    previous = keyring.get_keyring()
    backend = _keyring_backend()
    keyring.set_keyring(backend)  # type: ignore[arg-type]
    try:
        encrypt(memory_home, PASSPHRASE)
        assert len(backend.saved) == 1  # type: ignore[attr-defined]
        assert PASSPHRASE not in json.dumps(list(backend.saved.values()))  # type: ignore[attr-defined]
        keycard.forget(memory_home)
        assert unlock(memory_home, ask=None) is not None  # no env, no question: the keyring
        with Memory.open(memory_home, embedder=embedder) as memory:
            assert table_counts(memory.db)["episodes"] > 0
    finally:
        keyring.set_keyring(previous)


def test_backup_then_restore_gives_the_same_counts_and_finds_every_title(
    used_memory: Path, every_note: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(used_memory, home)
    assert sadie(home, "encrypt", passphrase=PASSPHRASE).returncode == 0
    backup = tmp_path / "backup.tar"
    assert sadie(home, "backup", str(backup), passphrase=PASSPHRASE).returncode == 0
    with tarfile.open(backup) as tar:
        member = tar.extractfile("manifest.json")
        assert member is not None
        manifest = json.loads(member.read())
    assert manifest["encrypted"] and manifest["counts"]["episodes"] > 0 and manifest["schema"]
    doctor = sadie(home, "doctor", "--quick", passphrase=PASSPHRASE)
    assert "last backup made" in doctor.stdout and "encrypted at rest" in doctor.stdout

    fresh = tmp_path / "fresh"
    wrong = sadie(fresh, "restore", str(backup), passphrase="wrong")
    assert wrong.returncode == 7 and not fresh.exists()
    done = sadie(fresh, "restore", str(backup), passphrase=PASSPHRASE)
    assert done.returncode == 0, done.stderr
    stats = json.loads(sadie(fresh, "stats", "--json", passphrase=PASSPHRASE).stdout)
    assert {k: v for k, v in stats["counts"].items()} == {
        k: v
        for k, v in json.loads(sadie(home, "stats", "--json", passphrase=PASSPHRASE).stdout)[
            "counts"
        ].items()
    }
    # Every note's title (wiki pages, briefs and today cards are records, not notes).
    notes = [t for name, t in every_note[1].items() if name.startswith(("journal/", "records/"))]
    titles = re.findall(r'^title: (.+)$|"title": "([^"]+)"', "\n".join(notes), re.M)
    titles = [a or b for a, b in titles]
    assert len(titles) >= 10
    for title in titles:
        found = sadie(fresh, "search", title, "--json", passphrase=PASSPHRASE)
        assert found.returncode == 0, found.stderr
        assert title in {hit["title"] for hit in json.loads(found.stdout)["chunks"]}, title


def test_restore_refuses_a_home_with_a_memory_and_a_damaged_backup(
    memory_home: Path, tmp_path: Path
) -> None:
    backup = tmp_path / "b.tar"
    assert sadie(memory_home, "backup", str(backup)).returncode == 0
    done = sadie(memory_home, "restore", str(backup))
    assert done.returncode == 2 and "--replace" in done.stderr
    damaged = tmp_path / "damaged.tar"
    data = bytearray(backup.read_bytes())
    data[4096] ^= 0xFF  # inside the database member
    damaged.write_bytes(bytes(data))
    fresh = tmp_path / "fresh"
    done = sadie(fresh, "restore", str(damaged))
    assert done.returncode == 3 and "checksum" in done.stderr
    assert not (fresh / "sadie.duckdb").exists() and not (fresh / switch.MARKER).exists()
    before = snapshot(memory_home)
    replaced = sadie(memory_home, "restore", "--replace", "--yes", str(backup))
    assert replaced.returncode == 0, replaced.stderr
    assert snapshot(memory_home).keys() >= {"sadie.duckdb"} and before


@pytest.mark.parametrize("phase", ["preparing", "ready"])
def test_an_interrupted_switch_is_rolled_back_or_finished_on_the_next_open(
    memory_home: Path, embedder, phase: str
) -> None:
    """The states a kill can leave `sadie encrypt` in, made by hand: before ``ready`` the old
    memory stays; once ready the encrypted one is switched in."""
    with Memory.open(memory_home, embedder=embedder) as memory:
        counts = table_counts(memory.db)
        card, key = keycard.new_card(PASSPHRASE)
        memory.db.copy_to(switch.staged_db(memory_home), key=key)
    staged = switch.Switch(memory_home, "encryption", card)
    if phase == "ready":
        staged.ready()
    else:
        (memory_home / switch.MARKER).write_text('{"phase": "preparing", "what": "encryption"}')
    keycard.remember(memory_home, key)
    with Memory.open(memory_home, embedder=embedder) as memory:
        assert memory.db.encrypted == (phase == "ready")
        assert table_counts(memory.db) == counts
    assert not (memory_home / switch.MARKER).exists()
    assert not switch.staged_db(memory_home).exists()
    assert (memory_home / keycard.CARD_NAME).exists() == (phase == "ready")


@contextmanager
def serving(home: Path, *, passphrase: str) -> Iterator[subprocess.Popen[str]]:
    """``sadie serve`` holding ``home`` (it alone has the passphrase), until its socket
    listens: read from its "serving on" line, never a sleep."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(
        SADIE_HOME=str(home),
        SADIE_CONFIG=str(home.parent / "config"),
        SADIE_PASSPHRASE=passphrase,
        OLLAMA_HOST="http://127.0.0.1:9",
        PYTHONPATH=str(ROOT),
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "sadie_tui.cli", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        assert process.stderr is not None
        said = []
        for line in process.stderr:  # ends when the process does
            said.append(line)
            if "serving on" in line:
                break
        else:
            raise AssertionError(f"sadie serve did not start: {said}")
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_a_second_sadie_works_through_the_holder_without_the_key(
    memory_home: Path, tmp_path: Path
) -> None:
    assert sadie(memory_home, "encrypt", passphrase=PASSPHRASE).returncode == 0
    keycard.forget(memory_home)
    with serving(memory_home, passphrase=PASSPHRASE):
        sock = memory_home / "sadie.sock"
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600
        found = sadie(memory_home, "search", "Lisbon marathon", "--json")
        assert found.returncode == 0, found.stderr
        assert "Race day" in found.stdout
        backup = tmp_path / "held.tar"
        done = sadie(memory_home, "backup", str(backup), "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["encrypted"] is True
    fresh = tmp_path / "fresh"
    assert sadie(fresh, "restore", str(backup), passphrase=PASSPHRASE).returncode == 0
    assert "Race day" in sadie(fresh, "search", "marathon", passphrase=PASSPHRASE).stdout


@pytest.mark.parametrize("query", ["marathon race day", "knee after the long run", "promotion"])
def test_an_encrypted_memory_finds_the_same_nearest_chunks_without_hnsw(
    memory_home: Path, embedder, query: str
) -> None:
    """No HNSW index in an encrypted file: the vector channel's hits come from the keyword
    index's embeddings, and rank as DuckDB's exact scan does."""
    from sadie_tui.engine.retrieval.pipeline import state_and_vector_hits
    from sadie_tui.engine.retrieval.vector import exact_search

    encrypt(memory_home, PASSPHRASE, keyring=False)
    with Memory.open(memory_home, embedder=embedder) as memory:
        assert memory.db.encrypted
        assert "HNSW" not in str(memory.db.fetchall("SELECT index_name, sql FROM duckdb_indexes()"))
        vector = embedder.encode_one(query)
        _, hits = state_and_vector_hits(memory, vector, 8)
        exact = exact_search(memory.db, vector, 8)
    assert [h.chunk_id for h in hits] == [h.chunk_id for h in exact]
    assert [round(h.similarity, 4) for h in hits] == [round(h.similarity, 4) for h in exact]


def test_a_note_another_assistant_adds_leaves_no_plain_copy_in_an_encrypted_home(
    used_memory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MCP's add_note writes the note into the home's notes folder to read it in; in an
    encrypted memory that file is gone once read, and the note is searchable."""
    from sadie_tui.config import Settings
    from sadie_tui.engine.operations import AddNote, SearchMemory
    from sadie_tui.engine.session import Session

    home = tmp_path / "home"
    shutil.copytree(used_memory, home)
    assert sadie(home, "encrypt", passphrase=PASSPHRASE).returncode == 0
    from sadie_tui.engine.privacy.unlock import unlock

    monkeypatch.setenv("SADIE_PASSPHRASE", PASSPHRASE)
    assert unlock(home) is not None  # as a face does before it opens the memory
    session = Session.open(home, Settings(reasoner="offline"))
    try:
        added = session.call(AddNote("Fed the periwinkle axolotl at the aquarium.", "Axolotl"))
        found = session.call(SearchMemory("periwinkle axolotl"))
    finally:
        session.close()
    assert not Path(added.path).exists()
    assert found.chunks and found.chunks[0].episode_id == added.id
    assert leaks({"axolotl": {"periwinkle", "axolotl"}}, home) == {}
