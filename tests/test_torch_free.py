"""Nothing on the chat path imports torch (#16), nor bm25s and scipy (only building the keyword
index needs them; a query reads its arrays with numpy): `--ask`, a `chat` turn, `search` and a
TUI start with a chat turn, each in a fresh subprocess with the exported ONNX model in its
cache. The tests' own process is polluted (the fallback tests load sentence-transformers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "sentence_transformers", "transformers", "bm25s", "scipy")

# Runs the real CLI, then writes which heavy modules were loaded (at exit, after everything).
PROBE = textwrap.dedent(
    """
    import atexit, json, os, sys
    def report():
        with open(os.environ["PROBE_OUT"], "w") as f:
            json.dump({"heavy": [m for m in HEAVY_NAMES if m in sys.modules],
                       "onnx": "onnxruntime" in sys.modules}, f)
    atexit.register(report)
    from sadie_tui.cli import main
    sys.argv = ["sadie", *sys.argv[1:]]
    main()
    """
).replace("HEAVY_NAMES", repr(HEAVY))


def _run(code: str, args: list[str], home: Path, tmp_path: Path, **env: str) -> dict:
    out = tmp_path / "probe.json"
    environ = {**os.environ, "SADIE_HOME": str(home), "PROBE_OUT": str(out), **env}
    environ.pop("SADIE_EMBEDDER", None)
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environ,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sadie:" not in done.stderr  # no fallback notice: the ONNX path ran
    return json.loads(out.read_text())


@pytest.fixture
def exported(embedder, onnx_cache: Path) -> Path:
    assert embedder.running == "onnx"
    return onnx_cache


@pytest.mark.parametrize(
    "args",
    [
        ["--ask", "How did the marathon go?", "--json"],
        ["chat", "How did the marathon go?", "--ndjson"],
        ["search", "marathon knee", "--json"],
    ],
    ids=["ask", "chat", "search"],
)
def test_headless_commands_never_import_torch(
    args: list[str], memory_home: Path, server, exported: Path, tmp_path: Path
) -> None:
    found = _run(PROBE, args, memory_home, tmp_path)
    assert found == {"heavy": [], "onnx": True}


TUI = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from pathlib import Path
    from tests.support.ollama_server import FakeOllama
    from tests.support.tui import make_app, make_context, wait_until
    from sadie_tui.tui.widgets.prompt import PromptInput

    async def main(url):
        app = make_app(make_context(Path(os.environ["SADIE_HOME"]), url), stable=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: app.session is not None and app.session.embedder_ready,
                             what="the embedder")
            chat = app.chat_screen
            prompt = chat.query_one(PromptInput)
            prompt.focus()
            prompt.insert("How did the marathon go?")
            await pilot.press("enter")
            reply = await wait_until(pilot, lambda: chat.reply, what="the reply")
            await wait_until(pilot, lambda: reply.status != "streaming" and not chat.streaming,
                             what="the reply to finish")
            status = reply.status
        with open(os.environ["PROBE_OUT"], "w") as f:
            json.dump({"heavy": [m for m in HEAVY_NAMES if m in sys.modules],
                       "onnx": "onnxruntime" in sys.modules, "status": status}, f)

    with FakeOllama() as server:
        asyncio.run(main(server.url))
    # This harness (Pilot + holder + FakeOllama in one process) aborts in C++ teardown at
    # interpreter exit, with sentence-transformers as with ONNX: the report is written, so
    # leave without the teardown.
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)
    """
).replace("HEAVY_NAMES", repr(HEAVY))


def test_a_tui_start_and_chat_turn_never_import_torch(
    memory_home: Path, exported: Path, tmp_path: Path
) -> None:
    found = _run(TUI, [], memory_home, tmp_path)
    assert found == {"heavy": [], "onnx": True, "status": "complete"}
