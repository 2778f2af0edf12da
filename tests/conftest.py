"""Shared fixtures: a temporary SADIE_HOME per test, one real embedder per session, and a
small real memory ingested once per session (copied per test when a test writes to it)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.register_assert_rewrite("tests.support.tui")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Never the person's OS keyring (subprocesses inherit it); a test that needs one sets its own.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
os.environ.pop("SADIE_PASSPHRASE", None)

#: The passphrase of the encrypted memories tests build.
PASSPHRASE = "correct horse battery staple"

NOTES = {
    "journal/2026-03-14.md": (
        "---\ntitle: Warden retro\ndate: 2026-03-14\nkind: journal\nsalience: 0.7\n---\n"
        "Shipped the auth refactor this week. Felt slower than it should have been.\n\n"
        "Ines said the Warden rollout went fine in Lisbon, and Pedro wants a retro on Friday."
    ),
    "journal/2026-11-20.md": (
        "---\ntitle: Long run by the river\ndate: 2026-11-20\nkind: journal\n---\n"
        "Ran 18 km along the Tagus with Ines. My knee held up. Marathon training is working."
    ),
    "journal/2026-10-11.md": (
        "---\ntitle: Race day\ndate: 2026-10-11\nkind: journal\nsalience: 0.9\n---\n"
        "Finished the Lisbon marathon in 3:58. Cried at the finish line. Ines was there with a sign."
    ),
    "voice/2026-11-26-commute.txt": (
        "um so I keep thinking about the promotion conversation with Marta, I don't know, "
        "she said maybe in the spring, which is what she said last spring too."
    ),
    "records/runs.jsonl": (
        '{"title": "Easy run", "date": "2026-11-02", "text": "Easy 8 km, avg pace 5:40/km, heart rate 142."}\n'
        '{"title": "Intervals", "date": "2026-11-09", "text": "6x800m intervals at the track with the club."}\n'
    ),
    "wiki/Ines.md": "---\ntitle: Ines\nkind: person\n---\nMy partner. Runs with me on weekends.",
    "briefs/2026-11-23.md": "---\ntitle: Week of 17 November\ndate: 2026-11-23\n---\nA week of long runs and promotion worries.",
    "today/2026-11-29.md": "---\ntitle: The garden\ndate: 2026-11-29\n---\nIt has been three weeks since you mentioned the garden.",
    "beliefs.jsonl": (
        '{"statement": "I sleep seven hours most nights", "status": "contested", "confidence": 0.4, "evidence": ["journal/2026-03-14.md"]}\n'
        '{"statement": "Running keeps me sane", "status": "active", "confidence": 0.8, "evidence": ["journal/2026-11-20.md"]}\n'
    ),
    "observations.jsonl": (
        '{"source": "sleep-tracker", "observed_at": "2026-11-21T07:10:00", "text": "Slept 5h42m; 3 awakenings."}\n'
    ),
    "soul.md": "Maya, 34, backend engineer in Lisbon; runs, worries about work, loves Ines.",
}


# Nine longer notes beside NOTES: several batches of `sadie reflect` at the smallest context.
MORE_NOTES = {
    f"journal/2026-0{m}-0{d}.md": (
        f"---\ntitle: Week note {m}.{d}\ndate: 2026-0{m}-0{d}\n---\n"
        + f"Week {m}.{d}: the garden needed water again and I fixed the gate. " * 9
    )
    for m in (4, 5, 6)
    for d in (1, 5, 9)
}


def write_notes(root: Path, notes: dict[str, str] = NOTES) -> Path:
    for rel, text in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def tmp_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("SADIE_HOME", str(home))
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    monkeypatch.delenv("SADIE_MODEL", raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # closed port unless a test sets one
    return home


@pytest.fixture(scope="session", autouse=True)
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The exported ONNX model's cache folder: one export per test session (never the real
    user cache), unless SADIE_CACHE already names one; subprocesses inherit it."""
    if not os.environ.get("SADIE_CACHE"):
        os.environ["SADIE_CACHE"] = str(tmp_path_factory.getbasetemp() / "sadie-cache")
    return Path(os.environ["SADIE_CACHE"])


@pytest.fixture(scope="session")
def embedder(onnx_cache: Path):
    from sadie_tui.engine.ingest.embedder import shared_embedder

    emb = shared_embedder()
    emb.warm()
    return emb


@pytest.fixture(scope="session")
def notes_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_notes(tmp_path_factory.mktemp("notes"))


@pytest.fixture(scope="session")
def built_home(tmp_path_factory: pytest.TempPathFactory, notes_dir: Path, embedder) -> Path:
    """A home with NOTES ingested, built once; copy it (``memory_home``) before writing."""
    from sadie_tui.engine.memory import Memory
    from sadie_tui.engine.retrieval.keyword import keep_current

    home = tmp_path_factory.mktemp("built") / "home"
    with Memory.open(home, embedder=embedder) as memory:
        keep_current(memory)  # as a Session does: the index saved with the memory
        memory.ingest([notes_dir])
    return home


@pytest.fixture(scope="session")
def many_home(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """A home with NOTES and MORE_NOTES ingested (15 episodes), built once; copy it first."""
    from sadie_tui.engine.memory import Memory
    from sadie_tui.engine.retrieval.keyword import keep_current

    notes = write_notes(tmp_path_factory.mktemp("many"), {**NOTES, **MORE_NOTES})
    home = tmp_path_factory.mktemp("many-home") / "home"
    with Memory.open(home, embedder=embedder) as memory:
        keep_current(memory)  # as a Session does: the index saved with the memory
        memory.ingest([notes])
    return home


@pytest.fixture(scope="session")
def reflected_home(tmp_path_factory: pytest.TempPathFactory, built_home: Path, embedder) -> Path:
    """``built_home`` after one ``sadie reflect`` against the scripted model: three derived
    beliefs beside the two stated ones, built once; copy it (``learned_home``) first."""
    from sadie_tui.config import Settings
    from sadie_tui.engine.memory import Memory
    from sadie_tui.engine.session import Session
    from tests.support.ollama_server import FakeOllama
    from tests.support.reflect_model import ReflectModel
    from tests.test_reflect import RUN, SLOW, WORRY

    home = tmp_path_factory.mktemp("reflected") / "home"
    shutil.copytree(built_home, home)
    with FakeOllama(responder=ReflectModel(beliefs=[RUN, WORRY, SLOW])) as server:
        settings = Settings(ollama_host=server.url, reasoner="ollama")
        session = Session(Memory.open(home, embedder=embedder), settings)
        try:
            assert session.reflect().new == 3
        finally:
            session.close()
    return home


@pytest.fixture
def learned_home(reflected_home: Path, tmp_home: Path) -> Path:
    """A private copy of ``reflected_home`` as SADIE_HOME."""
    shutil.copytree(reflected_home, tmp_home)
    return tmp_home


@pytest.fixture(scope="session")
def encrypted_built_home(tmp_path_factory: pytest.TempPathFactory, built_home: Path) -> Path:
    """``built_home`` encrypted under ``PASSPHRASE`` (``sadie encrypt``), built once."""
    from sadie_tui.engine.privacy.convert import encrypt

    home = tmp_path_factory.mktemp("encrypted") / "home"
    shutil.copytree(built_home, home)
    encrypt(home, PASSPHRASE, keyring=False)
    return home


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked ``at_rest`` runs on the plain memory and on the encrypted one."""
    if metafunc.definition.get_closest_marker("at_rest") and "at_rest" in metafunc.fixturenames:
        metafunc.parametrize("at_rest", ["plain", "encrypted"], indirect=True)


@pytest.fixture
def at_rest(request: pytest.FixtureRequest) -> str:
    """How ``memory_home`` lies on disk: "plain", or "encrypted" (with SADIE_PASSPHRASE set,
    as a script would, and the key unlocked in this process)."""
    return str(getattr(request, "param", "plain"))


@pytest.fixture
def memory_home(
    built_home: Path,
    tmp_home: Path,
    at_rest: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    if at_rest == "encrypted":
        from sadie_tui.engine.privacy.unlock import unlock

        shutil.copytree(request.getfixturevalue("encrypted_built_home"), tmp_home)
        monkeypatch.setenv("SADIE_PASSPHRASE", PASSPHRASE)
        unlock(tmp_home)
        return tmp_home
    shutil.copytree(built_home, tmp_home)
    return tmp_home


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_home: Path):
    """The project's Ollama-protocol server, with OLLAMA_HOST pointing at it."""
    from tests.support.ollama_server import FakeOllama

    with FakeOllama() as srv:
        monkeypatch.setenv("OLLAMA_HOST", srv.url)
        yield srv


@pytest.fixture
def memory(memory_home: Path, embedder):
    """The small ingested memory, opened on a private copy of its home."""
    from sadie_tui.engine.memory import Memory

    with Memory.open(memory_home, embedder=embedder) as mem:
        yield mem
