"""Layering: the engine imports no UI or CLI library; the CLI imports the TUI lazily.
Checked in fresh subprocesses (``sys.modules`` of this test process is polluted)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _loaded_after(imports: list[str], watch: list[str]) -> dict[str, list[str]]:
    code = (
        "import json, sys\n"
        + "".join(f"import {m}\n" for m in imports)
        + f"watch = {watch!r}\n"
        + "print(json.dumps({w: sorted(m for m in sys.modules if m == w or m.startswith(w + '.'))"
        " for w in watch}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return {k: v for k, v in json.loads(done.stdout).items() if v}


def test_the_engine_memory_path_imports_no_ui_cli_or_model() -> None:
    loaded = _loaded_after(
        [
            "sadie_tui.engine.memory",
            "sadie_tui.engine.ingest.pipeline",
            "sadie_tui.engine.store.db",
            "sadie_tui.engine.ingest.entities",
        ],
        [
            "textual",
            "rich",
            "click",
            "sadie_tui.tui",
            "sadie_tui.cli",
            "sadie_tui.commands",
            "torch",
            "sentence_transformers",
        ],
    )
    # torch and sentence-transformers load on the first encode, not at import (~5 s).
    assert loaded == {}


def test_no_engine_module_imports_textual() -> None:
    # Modules that use httpx (doctor, the Ollama reasoner) see rich and click in sys.modules:
    # httpx's own __init__ imports its CLI (httpx._main), which imports them. Textual never.
    engine = sorted(
        "sadie_tui.engine."
        + p.relative_to(ROOT / "sadie_tui" / "engine")
        .with_suffix("")
        .as_posix()
        .replace("/", ".")
        .removesuffix(".__init__")
        for p in (ROOT / "sadie_tui" / "engine").rglob("*.py")
    )
    code = (
        "import importlib, json, sys\n"
        f"ok = []\nfor m in {engine!r}:\n"
        "    try:\n        importlib.import_module(m)\n        ok.append(m)\n"
        "    except Exception:\n        pass\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] == 'textual'"
        " or m.startswith(('sadie_tui.tui', 'sadie_tui.cli', 'sadie_tui.commands')))\n"
        "print(json.dumps({'ok': ok, 'bad': bad}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert "sadie_tui.engine.memory" in result["ok"]
    assert result["bad"] == []


def test_the_cli_does_not_import_the_tui() -> None:
    loaded = _loaded_after(["sadie_tui.cli"], ["textual", "sadie_tui.tui", "torch"])
    assert loaded == {}


def test_the_engine_source_names_no_ui_library() -> None:
    # A static belt to the subprocess braces: no engine file imports textual, rich or click.
    offenders = []
    for path in (ROOT / "sadie_tui" / "engine").rglob("*.py"):
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            words = line.strip().split()
            if len(words) >= 2 and words[0] in {"import", "from"}:
                top = words[1].split(".")[0]
                if top in {"textual", "rich", "click"} or words[1].startswith(
                    (
                        "sadie_tui.tui",
                        "sadie_tui.cli",
                        "sadie_tui.commands",
                        "..tui",
                        "..cli",
                        "..commands",
                    )
                ):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


@pytest.mark.skipif(
    not (ROOT / "sadie_tui" / "tui" / "__init__.py").is_file(),
    reason="the sadie_tui.tui package does not exist yet (import-linter needs every layer)",
)
def test_import_linter_contracts() -> None:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert exe, "import-linter is not installed"
    done = subprocess.run([exe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_headless_and_the_turns_import_without_textual() -> None:
    modules = [
        "sadie_tui.commands.headless",
        "sadie_tui.engine.turns.chat",
        "sadie_tui.engine.turns.ask",
    ]
    assert _loaded_after(modules, ["textual", "sadie_tui.tui"]) == {}
