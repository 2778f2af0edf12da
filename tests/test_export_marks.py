"""Issue #28, item 11: an export keeps the "details not found" marks the app shows for a
reply, in Markdown and JSON, from the CLI and over HTTP, and a JSON export with them imports.

Real parts: a chat turn against the project's Ollama-protocol server (a reply that names a
date and a person no note holds), the CLI through click's runner, the HTTP server on loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from sadie_tui import cli
from sadie_tui.commands import output
from tests.support.ollama_server import Reply

PLANTED = (
    "You walked by the river with Ines after lunch. She is moving to Leeds on 3 June, and "
    "Beatriz will drive the van."
)


def sadie(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli.main_group, list(args))


@pytest.fixture
def flagged(memory_home: Path, server, monkeypatch) -> str:  # type: ignore[no-untyped-def]
    """A conversation whose reply has details no note holds; its id."""
    monkeypatch.setenv("SADIE_REASONER", "ollama")
    monkeypatch.setenv("COLUMNS", "220")
    monkeypatch.setattr(output, "_out", None)
    monkeypatch.setattr(output, "_err", None)
    server.queue(Reply(PLANTED), Reply('{"citations": []}', stream=False))
    chat = sadie("chat", "What did Ines say about moving?", "--ndjson")
    assert chat.exit_code == 0, chat.output
    events = [json.loads(line) for line in chat.stdout.splitlines() if line.strip()]
    citations = next(e for e in events if e["type"] == "citations")
    assert {s["text"] for s in citations["unsupported"]} >= {"3 June", "Beatriz"}
    return str(events[0]["conversation_id"])


def _spans(data: dict) -> list[str]:
    return [s["text"] for s in data["messages"][1]["metadata"]["unsupported"]]


def test_exports_keep_the_details_not_found(flagged: str, memory_home: Path, tmp_path) -> None:
    md = sadie("conversations", "export", flagged[:8], "--format", "md")
    assert md.exit_code == 0, md.output
    assert "<u>3 June</u>" in md.stdout and "<u>Beatriz</u>" in md.stdout
    assert "Ines" in md.stdout and "<u>Ines</u>" not in md.stdout  # a name the notes hold
    warning = next(line for line in md.stdout.splitlines() if line.startswith("⚠ "))
    assert warning.startswith("⚠ ") and "details not found in your notes (underlined): " in warning
    assert "3 June" in warning and "Beatriz" in warning

    target = tmp_path / "out.json"
    written = sadie("conversations", "export", flagged[:8], "--format", "json", "-o", str(target))
    assert written.exit_code == 0, written.output
    data = json.loads(target.read_text(encoding="utf-8"))
    assert {"3 June", "Beatriz"} <= set(_spans(data))
    imported = sadie("conversations", "import", str(target))
    assert imported.exit_code == 0, imported.output
    listed = json.loads(sadie("conversations", "list", "--json").stdout)
    copy = next(c["id"] for c in listed if c["id"] != flagged)
    again = sadie("conversations", "export", copy[:8], "--format", "md")
    assert "<u>Beatriz</u>" in again.stdout and warning in again.stdout.splitlines()


def test_the_http_export_keeps_them_too(flagged: str, memory_home: Path, embedder) -> None:
    from sadie_tui.config import load_settings
    from sadie_tui.engine.memory import Memory
    from sadie_tui.engine.session import Session
    from tests.support.serve import running

    session = Session(Memory.open(memory_home, embedder=embedder), load_settings())
    try:
        with running(session) as api:
            url = f"{api.url}/v1/conversations/{flagged}/export"
            md = httpx.get(url, timeout=30).text
            data = httpx.get(url, params={"format": "json"}, timeout=30).json()
    finally:
        session.close()
    assert "<u>Beatriz</u>" in md and "details not found in your notes (underlined)" in md
    assert {"3 June", "Beatriz"} <= set(_spans(data))
