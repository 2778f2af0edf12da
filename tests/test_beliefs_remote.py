"""`sadie beliefs list|show|accept` from a second process while `sadie serve` holds the memory:
the same output as when the command opens the memory itself, and the decision lands in the
holder's memory. Real subprocesses on two copies of a memory with derived beliefs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.test_remote import CLIENT_SECONDS, ROOT, _env, start_serve


def _run(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=CLIENT_SECONDS,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _commands(env: dict[str, str], first: str) -> dict[str, str]:
    return {
        "list": _run(env, "beliefs", "list"),
        "list --json": _run(env, "beliefs", "list", "--json"),
        "show": _run(env, "beliefs", "show", first[:8]),
        "show --json": _run(env, "beliefs", "show", first, "--json"),
        "accept": _run(env, "beliefs", "accept", first),
    }


def test_beliefs_through_a_holder_print_what_they_print_in_process(
    learned_home: Path, tmp_path: Path
) -> None:
    alone_home = tmp_path / "alone"
    shutil.copytree(learned_home, alone_home)
    alone = _env(alone_home, tmp_path / "config")
    listed = json.loads(_run(alone, "beliefs", "list", "--origin", "derived", "--json"))
    first = listed[0]["id"]
    expected = _commands(alone, first)

    served = start_serve(learned_home, tmp_path / "config")
    try:
        served.wait_for_line("serving on")
        got = _commands(served.env, first)
        assert got == expected
        assert expected["accept"].startswith("accepted “")
        # The decision is the holder's: its memory has it, with the history line.
        after = json.loads(_run(served.env, "beliefs", "show", first, "--json"))
        assert after["belief"]["status"] == "accepted"
        assert [c["action"] for c in after["changes"]][-1] == "accepted"
        missing = served.cli("beliefs", "show", "ffffffff")
        assert (missing.returncode, missing.stderr) == (5, "sadie: no belief 'ffffffff'\n")
        assert served.stop() == 0
    finally:
        if served.process.poll() is None:
            served.process.kill()
            served.process.wait(timeout=30)
