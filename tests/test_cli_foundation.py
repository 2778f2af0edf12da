"""The foundation's CLI: doctor (Ollama absent / present / model missing), stats --json,
--demo's separate home, and one-line errors with exit codes, through CliRunner and a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sadie_tui.cli import main, main_group
from sadie_tui.paths import resolve_home
from tests.support.ollama_server import FakeOllama

ROOT = Path(__file__).resolve().parent.parent


def _lines(output: str) -> dict[str, str]:
    """Doctor lines by check name: {"ollama": "! ollama: …"}."""
    out = {}
    for line in output.splitlines():
        if len(line) > 2 and line[0] in "✓!✗" and ":" in line:
            out[line[2:].split(":", 1)[0]] = line
    return out


def _doctor(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main_group, ["doctor", *args], terminal_width=300)


# --------------------------------------------------------------------------- doctor


def test_doctor_with_ollama_absent_warns_with_the_fix(memory_home: Path) -> None:
    result = _doctor("--quick")  # tmp_home points OLLAMA_HOST at the closed port 9
    assert result.exit_code == 0, result.output
    lines = _lines(result.stdout)
    assert lines["ollama"].startswith("! ollama: not reachable at http://127.0.0.1:9")
    assert "connection refused" in lines["ollama"]
    assert "→ start it with `ollama serve`, or set OLLAMA_HOST" in lines["ollama"]
    assert lines["model"].startswith("! model: qwen3:1.7b not checked")
    assert lines["home"].startswith("✓ home")
    assert lines["vss extension"].startswith("✓ vss extension: v1.5.5")
    assert (
        lines["database"].startswith("✓ database") and "6 episodes, 6 chunks" in lines["database"]
    )
    assert lines["vector index"] == "✓ vector index: HNSW index in use"
    assert lines["embedding model"].startswith("✓ embedding model: all-MiniLM-L6-v2 at ")


def test_doctor_with_ollama_and_the_model_is_all_ok(
    memory_home: Path, monkeypatch: pytest.MonkeyPatch, embedder
) -> None:
    with FakeOllama(models=["qwen3:1.7b", "llama3.2:1b"]) as srv:
        monkeypatch.setenv("OLLAMA_HOST", srv.url)
        result = _doctor()  # the full check loads the (shared, already warm) model
        assert ("GET", "/api/tags") in srv.hits
    assert result.exit_code == 0, result.output
    lines = _lines(result.stdout)
    assert set(lines) == {
        "home",
        "vss extension",
        "database",
        "vector index",
        "keyword index",
        "encryption",
        "backup",
        "personas",
        "embedding model",
        "model server",
        "ollama",
        "model",
    }
    assert all(line.startswith("✓") for line in lines.values()), result.stdout
    assert lines["encryption"] == "✓ encryption: plain on disk (`sadie encrypt` encrypts it)"
    assert lines["backup"] == "✓ backup: never backed up (`sadie backup FILE`)"
    assert (
        lines["model server"] == f"✓ model server: {srv.url} (from OLLAMA_HOST in the environment)"
    )
    assert lines["ollama"] == f"✓ ollama: {srv.url} (version 0.12.0)"
    assert lines["model"] == "✓ model: qwen3:1.7b is pulled"
    assert "(384 dimensions, onnx)" in lines["embedding model"]


def test_doctor_with_the_model_missing_fails_with_ollama_pull(
    tmp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SADIE_MODEL", "qwen3:4b")
    with FakeOllama(models=["qwen3:1.7b"]) as srv:
        monkeypatch.setenv("OLLAMA_HOST", srv.url)
        result = _doctor("--quick")
        as_json = CliRunner().invoke(main_group, ["doctor", "--quick", "--json"])
    assert result.exit_code == 1
    lines = _lines(result.stdout)
    assert lines["model"] == "✗ model: qwen3:4b is not pulled → run `ollama pull qwen3:4b`"
    assert lines["ollama"].startswith("✓ ollama")
    # A fresh home is not an error: it says what to do.
    assert lines["database"].startswith("! database: no memory yet")
    assert "run `sadie ingest PATH`" in lines["database"]
    assert not tmp_home.exists()  # doctor never creates the memory
    assert as_json.exit_code == 1
    checks = {c["name"]: c for c in json.loads(as_json.stdout)}
    assert checks["model"] == {
        "name": "model",
        "status": "fail",
        "detail": "qwen3:4b is not pulled",
        "fix": "run `ollama pull qwen3:4b`",
    }


def test_doctor_untagged_model_name_matches_latest(
    tmp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SADIE_MODEL", "mistral")
    with FakeOllama(models=["mistral:latest"]) as srv:
        monkeypatch.setenv("OLLAMA_HOST", srv.url)
        result = _doctor("--quick")
    assert result.exit_code == 0
    assert _lines(result.stdout)["model"] == "✓ model: mistral is pulled"


def _cli(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, SADIE_HOME=str(home), OLLAMA_HOST="http://127.0.0.1:9")
    full.pop("COLUMNS", None)
    full.update(env)
    return subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", *args],
        capture_output=True,
        text=True,
        env=full,
        cwd=ROOT,
        timeout=120,
    )


def test_doctor_subprocess_one_line_per_check(tmp_home: Path) -> None:
    result = _cli(tmp_home, "doctor", "--quick")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stdout.strip().splitlines()
    # Piped output is not wrapped: every check is exactly one line.
    # model server: the address and why; encryption and backup: what they are
    assert len(lines) == len(_lines(result.stdout)) == 10
    assert "→ start it with `ollama serve`, or set OLLAMA_HOST" in _lines(result.stdout)["ollama"]


def test_a_broken_persona_file_is_named_and_the_others_still_work(
    memory_home: Path, server
) -> None:
    """One typo in a persona of your own: doctor and `sadie personas` name the file, and
    chat with the default persona goes on."""
    broken = Path(os.environ["SADIE_CONFIG"]) / "personas" / "gardener.toml"
    broken.parent.mkdir(parents=True)
    broken.write_text("chunks = [1,\n", encoding="utf-8")
    lines = _lines(_doctor("--quick").stdout)
    assert lines["personas"].startswith(f"! personas: persona file {broken}: invalid TOML")
    assert lines["personas"].endswith(f"→ fix or remove {broken}")

    listed = CliRunner().invoke(main_group, ["personas"], terminal_width=300)
    assert listed.exit_code == 0
    assert "friend" in listed.stdout and "gardener" not in listed.stdout
    assert listed.stderr.startswith(f"sadie: skipped persona file {broken}: invalid TOML")

    chat = CliRunner().invoke(main_group, ["chat", "How was the marathon?"])
    assert chat.exit_code == 0, chat.output
    asked = CliRunner().invoke(main_group, ["chat", "--persona", "gardener", "Hello?"])
    assert asked.exit_code != 0 and "invalid TOML" in asked.stderr


def test_doctor_subprocess_missing_model_exit_1(tmp_home: Path) -> None:
    with FakeOllama(models=["other:1b"]) as srv:
        result = _cli(tmp_home, "doctor", "--quick", OLLAMA_HOST=srv.url, SADIE_MODEL="qwen3:1.7b")
    assert result.returncode == 1
    assert "run `ollama pull qwen3:1.7b`" in _lines(result.stdout)["model"]


# --------------------------------------------------------------------------- stats


def test_stats_json_shape(memory_home: Path) -> None:
    result = CliRunner().invoke(main_group, ["stats", "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert set(stats) >= {
        "home",
        "database",
        "size_bytes",
        "counts",
        "episode_kinds",
        "first",
        "last",
        "entity_kinds",
        "top_entities",
        "beliefs",
        "has_soul",
    }
    assert stats["home"] == str(memory_home)
    assert stats["database"] == str(memory_home / "sadie.duckdb")
    assert isinstance(stats["size_bytes"], int) and stats["size_bytes"] > 0
    counts = stats["counts"]
    assert {
        k: counts[k]
        for k in (
            "episodes",
            "chunks",
            "beliefs",
            "observations",
            "wiki_entries",
            "briefs",
            "today_cards",
        )
    } == {
        "episodes": 6,
        "chunks": 6,
        "beliefs": 2,
        "observations": 1,
        "wiki_entries": 1,
        "briefs": 1,
        "today_cards": 1,
    }
    assert all(isinstance(v, int) for v in counts.values())
    assert stats["episode_kinds"] == {"journal": 3, "record": 2, "voice_memo": 1}
    assert (stats["first"], stats["last"]) == ("2026-03-14", "2026-11-26")
    assert stats["beliefs"] == {"active": 1, "contested": 1}
    assert stats["has_soul"] is True
    top = stats["top_entities"]
    assert top and set(top[0]) == {"name", "kind", "episodes"}
    assert top[0]["name"] == "Ines" and top[0]["episodes"] == 3
    text = CliRunner().invoke(main_group, ["stats"], terminal_width=200)
    assert text.exit_code == 0
    assert "episodes by kind" in text.stdout and "Ines (person, 3)" in text.stdout


def test_stats_subprocess_on_an_empty_home(tmp_home: Path) -> None:
    result = _cli(tmp_home, "stats", "--json")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["counts"]["episodes"] == 0 and stats["first"] is None
    assert stats["has_soul"] is False


# --------------------------------------------------------------------------- --demo


def test_demo_home_is_always_separate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SADIE_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    own, demo = resolve_home(), resolve_home(demo=True)
    assert own != demo
    assert own.is_relative_to(tmp_path / "xdg") and demo.is_relative_to(tmp_path / "xdg")
    assert not demo.is_relative_to(own) and not own.is_relative_to(demo)
    monkeypatch.setenv("SADIE_HOME", str(tmp_path / "mine"))
    assert resolve_home() == tmp_path / "mine"
    assert resolve_home(demo=True) == demo  # the demo never pours into a person's memory


def test_demo_flag_builds_and_uses_the_demo_home(
    tmp_path: Path, notes_dir: Path, monkeypatch: pytest.MonkeyPatch, embedder
) -> None:
    monkeypatch.delenv("SADIE_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    monkeypatch.setattr("sadie_tui.engine.demo.demo_source", lambda: notes_dir)
    runner = CliRunner()
    result = runner.invoke(main_group, ["--demo", "stats", "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["home"] == str(resolve_home(demo=True))
    assert stats["counts"]["episodes"] == 6
    assert (resolve_home(demo=True) / ".demo-built").is_file()
    assert not resolve_home().exists()  # the person's own memory was never touched
    again = runner.invoke(main_group, ["--demo", "ingest", "--json", str(notes_dir)])
    assert again.exit_code == 0
    assert json.loads(again.stdout)["unchanged"] == 6  # built once, not rebuilt
    own = runner.invoke(main_group, ["stats", "--json"])
    assert json.loads(own.stdout)["counts"]["episodes"] == 0


# --------------------------------------------------------------------------- errors and exit codes


def test_main_turns_errors_into_one_stderr_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", "utf-8")
    monkeypatch.setenv("SADIE_HOME", str(blocker / "home"))
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    with pytest.raises(SystemExit) as info:
        main(["stats"])
    assert info.value.code == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("sadie: cannot create the home folder")


def test_subprocess_usage_error_and_version(tmp_home: Path) -> None:
    version = _cli(tmp_home, "--version")
    assert version.returncode == 0 and version.stdout.startswith("sadie, version ")
    usage = _cli(tmp_home, "stats", "--no-such-option")
    assert usage.returncode == 2
    assert "No such option" in usage.stderr and "Traceback" not in usage.stderr
    helped = _cli(tmp_home, "--help")
    assert helped.returncode == 0
    for name in ("ingest", "doctor", "stats", "compact"):
        assert name in helped.stdout


def test_config_error_is_one_line(tmp_home: Path, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text("model = [unclosed", "utf-8")
    result = _cli(tmp_home, "stats", SADIE_CONFIG=str(config))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("sadie: ")
    assert "Traceback" not in result.stderr
