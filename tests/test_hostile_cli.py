"""The command line on odd input (issue 15): usage errors are one `sadie:` line with exit 2,
numbers out of range are usage errors, a full stdout is one line, the app refuses to start
without a terminal, and --demo never writes into SADIE_HOME. Real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def sadie(tmp: Path, *args: str, stdin=None, stdout=subprocess.PIPE, **env: str):  # type: ignore[no-untyped-def]
    environ = {**os.environ, "SADIE_CONFIG": str(tmp / "config"), "SADIE_REASONER": "offline"}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", *args],
        cwd=ROOT,
        env=environ,
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
    )


def one_line(result) -> str:  # type: ignore[no-untyped-def]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("sadie: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["conversations", "list", "--bogus"], "No such option"),
        (["conversations", "list", "--limit", "99999999999999999999"], "--limit"),
        (["conversations", "list", "--limit", "0"], "--limit"),
        (["search"], "Missing argument"),
        (["chat"], "Missing argument"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(memory_home, tmp_path, args, words) -> None:
    result = sadie(tmp_path, *args, SADIE_HOME=str(memory_home))
    line = one_line(result)
    assert result.returncode == 2 and words in line, line
    assert "--help" in line


def test_a_full_stdout_is_one_line(memory_home, tmp_path) -> None:
    listed = sadie(tmp_path, "conversations", "list", SADIE_HOME=str(memory_home))
    assert listed.returncode == 0
    with open("/dev/full", "w") as full:
        result = sadie(tmp_path, "stats", stdout=full, SADIE_HOME=str(memory_home))
    line = one_line(result)
    assert result.returncode == 1 and "No space left on device" in line


def test_the_app_needs_a_terminal(memory_home, tmp_path) -> None:
    for args in ([], [""], ["How was the pottery class?"]):
        result = sadie(tmp_path, *args, SADIE_HOME=str(memory_home))
        line = one_line(result)
        assert result.returncode == 2 and "needs a terminal" in line, line


def test_demo_ignores_sadie_home_and_says_so(tmp_path, built_home) -> None:
    import shutil

    mine = tmp_path / "mine"
    data = tmp_path / "data"
    demo = data / "sadie" / "demo"  # platformdirs' data folder under XDG_DATA_HOME
    shutil.copytree(built_home, demo)  # already built: the test needs no demo build
    (demo / ".demo-built").write_text("test\n", encoding="utf-8")
    env = {"SADIE_HOME": str(mine), "XDG_DATA_HOME": str(data)}
    result = sadie(tmp_path, "--demo", "stats", "--json", **env)
    assert result.returncode == 0, result.stderr
    assert "SADIE_HOME is ignored" in result.stderr
    assert json.loads(result.stdout)["home"] == str(demo)
    assert not mine.exists()  # nothing was written into the person's memory
