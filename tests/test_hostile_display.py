"""Escape sequences never reach the terminal (issue 15, item 3). Hostile text comes in through
front matter, JSONL kinds and tags, observation sources, file names, typed and imported
messages and model replies; every command that shows it, and the app, show visible
stand-ins instead, while the memory keeps what came in. Real ingest, real subprocesses, the
real binary in tmux for the pane title."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sadie_tui.display import TABLE, is_safe, safe, safe_json

ROOT = Path(__file__).resolve().parents[1]
ESC, BEL = "\x1b", "\x07"
RED = f"{ESC}[31mRED{ESC}[0m"
TITLE = f"{ESC}]0;PWNED-TITLE{BEL}"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_safe_makes_every_control_visible_and_keeps_the_rest():
    text = f"a{RED} {TITLE} \x9b2J \x90q\x9c \u202eevil\u202c\ttab\r\nline\x7f"
    shown = safe(text)
    assert not RAW.search(shown) and is_safe(shown)
    assert "␛[31mRED␛[0m" in shown and "␛]0;PWNED-TITLE␇" in shown
    assert "⟨U+009B⟩2J" in shown and "⟨U+202E⟩evil" in shown
    assert "\ttab\nline␡" in shown
    assert safe("naïve 日本語 👋 — “quotes”") == "naïve 日本語 👋 — “quotes”"
    assert all(ord(ch) not in TABLE for ch in safe("".join(map(chr, range(0x250)))))


def test_safe_json_is_the_same_json_and_printable():
    data = {"t": f"{RED}\x9b\u202e", "n": 1}
    dumped = safe_json(data)
    assert json.loads(dumped) == data and not RAW.search(dumped)


def test_safe_is_linear():
    def cost(n: int) -> float:
        text = (ESC + "[31m" + "x" * 20) * n
        best = float("inf")
        for _ in range(3):
            start = time.process_time()  # CPU time: a busy machine does not add to it
            safe(text)
            best = min(best, time.process_time() - start)
        return best / n

    assert cost(200_000) < 3 * cost(25_000) + 1e-7


# -- the command line ------------------------------------------------------------------------
def _hostile_notes(root: Path) -> Path:
    notes = root / "notes"
    (notes / "journal").mkdir(parents=True)
    (notes / "journal" / "2026-03-01-bad.md").write_text(
        f'---\ntitle: "{RED} {TITLE}"\ntags: ["{RED}"]\n---\n'
        f"The pottery class went well {TITLE} and the kiln was hot {RED}.\n",
        encoding="utf-8",
    )
    (notes / "records.jsonl").write_text(
        json.dumps(
            {
                "title": "Kiln log",
                "date": "2026-03-02",
                "text": f"Kiln fired to 1200 degrees {RED}.",
                "kind": f"log{ESC}[2J",
                "tags": [f"{ESC}]8;;http://evil{BEL}x"],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    (notes / "observations.jsonl").write_text(
        json.dumps(
            {"source": f"watch{TITLE}", "observed_at": "2026-03-03", "text": "Slept 5 hours."}
        )
        + "\n",
        encoding="utf-8",
    )
    (notes / f"name{ESC}[31mred.md").write_text("A file with a hostile name.\n", "utf-8")
    (notes / f"broken{TITLE}.md").write_bytes(b"\xff\xfe not utf-8 \x00\x01")
    return notes


def _run(home: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SADIE_HOME": str(home),
        "SADIE_CONFIG": str(tmp / "config"),
        "SADIE_REASONER": "offline",
        "COLUMNS": "120",
    }
    return subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_no_command_prints_a_raw_escape(tmp_path, embedder):
    notes = _hostile_notes(tmp_path)
    home = tmp_path / "home"
    outputs = {"ingest": _run(home, tmp_path, "ingest", str(notes))}
    assert outputs["ingest"].returncode in (0, 6), outputs["ingest"].stderr
    assert "broken" in outputs["ingest"].stdout + outputs["ingest"].stderr  # the skip line
    question = f"How was the pottery class? {RED}"
    outputs["search"] = _run(home, tmp_path, "search", "pottery kiln")
    outputs["search-json"] = _run(home, tmp_path, "search", "pottery kiln", "--json")
    outputs["stats"] = _run(home, tmp_path, "stats")
    outputs["ask"] = _run(home, tmp_path, "--ask", question)
    outputs["ask-json"] = _run(home, tmp_path, "--ask", question, "--json")
    outputs["chat"] = _run(home, tmp_path, "chat", question)
    outputs["ndjson"] = _run(home, tmp_path, "chat", question, "--ndjson")
    cid = json.loads(outputs["ndjson"].stdout.splitlines()[0])["conversation_id"]
    outputs["show"] = _run(home, tmp_path, "conversations", "show", cid)
    outputs["list"] = _run(home, tmp_path, "conversations", "list")
    export = tmp_path / "export.json"
    outputs["export"] = _run(home, tmp_path, "conversations", "export", cid, "--format", "json")
    export.write_text(outputs["export"].stdout, encoding="utf-8")
    outputs["import"] = _run(home, tmp_path, "conversations", "import", str(export))
    for name, result in outputs.items():
        assert result.returncode in (0, 6), (name, result.stderr)
        if name == "export":  # redirected: the file as stored (escaped by JSON itself)
            continue
        for stream in (result.stdout, result.stderr):
            found = RAW.search(stream)
            assert found is None, (
                name,
                repr(stream[max(0, found.start() - 40) : found.end() + 40]),
            )
    assert "␛[31mRED" in outputs["search"].stdout or "␛[31mRED" in outputs["show"].stdout
    # The memory keeps what came in.
    shown = json.loads(outputs["export"].stdout)
    assert any(RED in m["content"] for m in shown["messages"])


# -- the app -----------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_reply_cannot_rename_the_terminal_or_recolour_it(tmp_path):
    from tests.support.ollama_server import FakeOllama, Reply
    from tests.support.tmux import Tmux, sadie_command
    from tests.support.tui import copy_home

    home = copy_home(tmp_path)
    tmux = Tmux(f"sadie-esc-{os.getpid()}-{tmp_path.name}")
    with FakeOllama() as server:
        server.queue(Reply([f"Here is {TITLE} a title and {RED} a colour.", " Done."]))
        try:
            env = {
                "SADIE_HOME": str(home),
                "SADIE_CONFIG": str(tmp_path / "config"),
                "SADIE_CACHE": os.environ["SADIE_CACHE"],  # the session's exported model
                "OLLAMA_HOST": server.url,
                "PYTHONPATH": str(ROOT),
                "TERM": "xterm-256color",
            }
            tmux.start(sadie_command(), env)
            tmux.run("set-option", "-t", tmux.session, "allow-rename", "on", check=False)
            tmux.wait_for(r"Talk to sadie", timeout=60)
            tmux.keys("How was the pottery class?", literal=True)
            tmux.keys("Enter")
            screen = tmux.wait_for(r"Done\.", timeout=120)
            assert "␛]0;PWNED-TITLE␇" in screen and "␛[31mRED␛[0m" in screen, screen
            title = tmux.run("display-message", "-p", "-t", tmux.session, "#{pane_title}")
            assert "PWNED" not in title.stdout, title.stdout
        finally:
            tmux.kill()
