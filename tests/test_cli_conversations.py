"""The CLI end to end on a real home: `sadie conversations …`, `sadie chips …`, `sadie soul`,
`sadie policies`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from sadie_tui import cli
from sadie_tui.commands import conversations as conversations_cmd
from sadie_tui.commands import output
from sadie_tui.engine import chips
from sadie_tui.engine import conversations as conv
from sadie_tui.engine.errors import NotFoundError
from sadie_tui.engine.store.db import Database
from sadie_tui.paths import db_path
from tests.test_chips import Rows, seed

Invoke = Callable[..., Result]


@pytest.fixture
def invoke(tmp_home: Path, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    # A wide terminal, so table cells are not cut; the console is rebuilt to read it.
    monkeypatch.setenv("COLUMNS", "220")
    monkeypatch.setattr(output, "_out", None)
    monkeypatch.setattr(output, "_err", None)
    runner = CliRunner()

    def run(*args: str, input: str | None = None) -> Result:
        return runner.invoke(cli.main_group, list(args), input=input)

    return run


def with_db(home: Path, fn):  # type: ignore[no-untyped-def]
    db = Database.open(db_path(home))
    try:
        return fn(db)
    finally:
        db.close()


def make_conversation(home: Path, title: str, *texts: str, **state: str) -> str:
    def build(db: Database) -> str:
        c = conv.create_conversation(db, title)
        for i, text in enumerate(texts):
            conv.add_message(
                db,
                c.id,
                "user" if i % 2 == 0 else "assistant",
                text,
                emotion=None if i % 2 == 0 else "reflective",
                citations=[]
                if i % 2 == 0
                else [
                    {
                        "episode_id": "3f7f7a68-0b1c-4d2e-9f00-1234567890ab",
                        "quote": "the quote",
                        "support": "inference",
                        "title": "Race day",
                        "date": "2026-10-11",
                    }
                ],
            )
        if state:
            conv.set_state(db, c.id, **state)
        return c.id

    return with_db(home, build)


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Through `cli.main`, as the `sadie` script runs: real exit codes and one-line errors."""
    try:
        # The console script does sys.exit(main()): a returned int is the exit status.
        returned = cli.main(args)
        code = returned if isinstance(returned, int) else 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- conversations


def test_list_table_json_and_markup(invoke: Invoke, tmp_home: Path) -> None:
    empty = invoke("conversations", "list")
    assert empty.exit_code == 0 and "no conversations yet" in empty.output
    first = make_conversation(tmp_home, "Plans [bold]big[/bold] [@click=app.quit]", "hello")
    second = make_conversation(tmp_home, "Second", "a", "b", emotion="curious")
    result = invoke("conversations", "list")
    assert result.exit_code == 0, result.output
    assert "Plans [bold]big[/bold] [@click=app.quit]" in result.output
    assert first[:8] in result.output and second[:8] in result.output
    assert result.output.index("Second") < result.output.index("Plans")
    assert "curious" in result.output and "just now" in result.output
    data = json.loads(invoke("conversations", "list", "--json").output)
    assert [d["id"] for d in data] == [second, first]
    assert data[0]["message_count"] == 2 and data[0]["emotion"] == "curious"
    assert set(data[0]) >= {
        "title",
        "summary",
        "pinned",
        "archived_at",
        "created_at",
        "updated_at",
        "persona",
    }
    limited = json.loads(invoke("conversations", "list", "--json", "--limit", "1").output)
    assert [d["id"] for d in limited] == [second]


def test_list_search_and_archived(invoke: Invoke, tmp_home: Path) -> None:
    a = make_conversation(tmp_home, "Marathon", "how did the race go")
    b = make_conversation(tmp_home, "Work", "Marta and the promotion")
    found = json.loads(invoke("conversations", "list", "--json", "--search", "PROMOTION").output)
    assert [d["id"] for d in found] == [b]
    assert "no conversation matches" in invoke("conversations", "list", "--search", "zz").output
    archived = invoke("conversations", "archive", a[:6])
    assert archived.exit_code == 0 and "archived" in archived.output
    assert [d["id"] for d in json.loads(invoke("conversations", "list", "--json").output)] == [b]
    only = json.loads(invoke("conversations", "list", "--json", "--archived").output)
    assert [d["id"] for d in only] == [a] and only[0]["archived"] is True
    assert invoke("conversations", "unarchive", a[:6]).exit_code == 0
    assert "no archived conversations" in invoke("conversations", "list", "--archived").output


def test_pin_unpin_rename(invoke: Invoke, tmp_home: Path) -> None:
    a = make_conversation(tmp_home, "Old")
    make_conversation(tmp_home, "Newer")
    pinned = invoke("conversations", "pin", a[:8])
    assert pinned.exit_code == 0 and "pinned" in pinned.output
    data = json.loads(invoke("conversations", "list", "--json").output)
    assert data[0]["id"] == a and data[0]["pinned"] is True
    assert "★" in invoke("conversations", "list").output
    assert invoke("conversations", "unpin", a[:8]).exit_code == 0
    assert json.loads(invoke("conversations", "list", "--json").output)[0]["title"] == "Newer"
    renamed = invoke("conversations", "rename", a[:8], "A [red]new[/red] name")
    assert renamed.exit_code == 0 and "A [red]new[/red] name" in renamed.output
    assert invoke("conversations", "rename", a[:8], "  ").exit_code == 2


def test_show_replays_messages(invoke: Invoke, tmp_home: Path) -> None:
    cid = make_conversation(
        tmp_home,
        "Race [b]day[/b]",
        "How did it go? [italic]honestly[/italic]",
        "You cried at the finish.",
        emotion="reflective",
        summary="first → reply",
    )
    result = invoke("conversations", "show", cid[:8])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Race [b]day[/b]" in out and "How did it go? [italic]honestly[/italic]" in out
    assert "You" in out and "sadie" in out and "reflective" in out
    assert "[1] Race day (2026-10-11) — reading between the lines: “the quote”" in out
    assert "first → reply" in out
    data = json.loads(invoke("conversations", "show", cid, "--json").output)
    assert data["conversation"]["id"] == cid
    assert [m["role"] for m in data["messages"]] == ["user", "assistant"]
    assert data["messages"][1]["citations"][0]["support"] == "inference"
    assert data["messages"][1]["emotion"] == "reflective"


def test_unknown_id_is_not_found(
    invoke: Invoke, tmp_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_conversation(tmp_home, "x")
    result = invoke("conversations", "show", "ffffffff")
    assert isinstance(result.exception, NotFoundError)
    code, out, err = run_main(["conversations", "show", "ffffffff"], capsys)
    assert code == 5 and err == "sadie: no conversation 'ffffffff'\n"


def test_forget(invoke: Invoke, tmp_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cid = make_conversation(tmp_home, "Secret", "something private")
    refused = invoke("conversations", "forget", cid[:8])  # no terminal, no --yes
    assert refused.exit_code == 2 and "--yes" in refused.output
    monkeypatch.setattr(conversations_cmd, "_interactive", lambda: True)
    kept = invoke("conversations", "forget", cid[:8], input="n\n")
    assert kept.exit_code == 1  # aborted
    assert len(json.loads(invoke("conversations", "list", "--json").output)) == 1
    asked = invoke("conversations", "forget", cid[:8], input="y\n")
    assert asked.exit_code == 0 and "Forget “Secret” and its 1 messages" in asked.output
    assert json.loads(invoke("conversations", "list", "--json").output) == []
    other = make_conversation(tmp_home, "Another", "hi")
    assert invoke("conversations", "forget", other, "--yes").exit_code == 0
    assert with_db(tmp_home, lambda db: db.fetchone("SELECT count(*) FROM messages")) == (0,)


def test_export_and_import(invoke: Invoke, tmp_home: Path, tmp_path: Path) -> None:
    cid = make_conversation(tmp_home, "Exported", "question?", "answer.")
    md = invoke("conversations", "export", cid[:8], "--format", "md")
    assert md.exit_code == 0 and md.output.startswith("# Exported\n")
    assert "reading between the lines" in md.output
    target = tmp_path / "out.json"
    written = invoke("conversations", "export", cid[:8], "--format", "json", "-o", str(target))
    assert written.exit_code == 0 and "wrote" in written.stderr
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["conversation"]["title"] == "Exported" and len(data["messages"]) == 2
    imported = invoke("conversations", "import", str(target))
    assert imported.exit_code == 0 and "imported" in imported.output
    listed = json.loads(invoke("conversations", "list", "--json").output)
    assert [d["title"] for d in listed] == ["Exported", "Exported"]
    assert len({d["id"] for d in listed}) == 2
    bad = invoke("conversations", "export", cid[:8], "--format", "pdf")
    assert bad.exit_code == 2


# --------------------------------------------------------------------------- chips


@pytest.fixture
def seeded(tmp_home: Path) -> Rows:
    return with_db(tmp_home, seed)


def test_chips_add_list_remove(invoke: Invoke, tmp_home: Path, seeded: Rows) -> None:
    cid = make_conversation(tmp_home, "Chat")
    added = invoke("chips", "add", cid[:8], "wiki", seeded.wiki[:8])
    assert added.exit_code == 0, added.output
    assert "attached wiki “Ines”" in added.output and "“Chat”" in added.output
    again = invoke("chips", "add", cid[:8], "wiki", seeded.wiki)
    assert "already attached" in again.output
    entity = json.loads(invoke("chips", "add", cid, "graph_entity", "Lisbon", "--json").output)
    assert entity["ref_id"] == "3" and entity["kind"] == "graph_entity"
    labelled = invoke("chips", "add", cid, "source", seeded.race, "--label", "[bold]race[/bold]")
    assert "[bold]race[/bold]" in labelled.output
    listed = json.loads(invoke("chips", "list", cid, "--json").output)
    assert [c["kind"] for c in listed] == ["wiki", "graph_entity", "source"]
    table = invoke("chips", "list", cid[:8]).output
    assert "Ines" in table and "Lisbon" in table and "[bold]race[/bold]" in table
    removed = invoke("chips", "remove", cid, listed[1]["id"][:8])
    assert removed.exit_code == 0 and "removed graph_entity “Lisbon”" in removed.output
    assert [c["kind"] for c in json.loads(invoke("chips", "list", cid, "--json").output)] == [
        "wiki",
        "source",
    ]
    assert "no chips attached" in invoke("chips", "list", make_conversation(tmp_home, "e")).output


def test_chips_errors(
    invoke: Invoke, tmp_home: Path, seeded: Rows, capsys: pytest.CaptureFixture[str]
) -> None:
    cid = make_conversation(tmp_home, "Chat")
    missing = invoke("chips", "add", cid, "wiki", "no such entry")
    assert isinstance(missing.exception, NotFoundError)
    code, _out, err = run_main(["chips", "add", cid, "wiki", "no such entry"], capsys)
    assert code == 5 and err.startswith("sadie: no wiki entry 'no such entry'")
    assert err.count("\n") == 1
    code, _out, err = run_main(["chips", "add", cid, "photo", "x"], capsys)
    assert code == 2 and "unknown chip kind 'photo'" in err and "discourse" in err
    code, _out, err = run_main(["chips", "remove", cid, "ffffffff"], capsys)
    assert code == 5 and "no chip" in err
    code, _out, err = run_main(["chips", "list", "ffffffff"], capsys)
    assert code == 5 and "no conversation 'ffffffff'" in err


def test_chips_find(invoke: Invoke, tmp_home: Path, seeded: Rows) -> None:
    result = invoke("chips", "find", "ines")
    assert result.exit_code == 0, result.output
    assert seeded.wiki in result.output and seeded.run in result.output
    data = json.loads(invoke("chips", "find", "ines", "--kind", "source", "--json").output)
    assert {d["ref_id"] for d in data} == {seeded.race, seeded.run}
    assert all(d["kind"] == "source" for d in data)
    # what find prints is what add takes
    cid = make_conversation(tmp_home, "Chat")
    assert invoke("chips", "add", cid, data[0]["kind"], data[0]["ref_id"]).exit_code == 0
    everything = json.loads(invoke("chips", "find", "--json").output)
    # every kind the seed has (it holds no record)
    assert {d["kind"] for d in everything} == set(chips.KINDS) - {"record"}
    assert "nothing matches" in invoke("chips", "find", "zzzz").output
    assert invoke("chips", "find", "x", "--kind", "photo").exit_code != 0


# --------------------------------------------------------------------------- soul


def test_soul_show_edit_path(
    invoke: Invoke, tmp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = invoke("soul")
    assert empty.exit_code == 0 and "sadie soul edit" in empty.output
    with_db(
        tmp_home,
        lambda db: db.execute(
            "INSERT INTO soul (id, text) VALUES (1, 'Maya [bold]from the table[/bold]')"
        ),
    )
    assert "Maya [bold]from the table[/bold]" in invoke("soul").output
    path = invoke("soul", "path").output.strip()
    assert path == str(tmp_home / "soul.md")

    seen: list[str] = []

    def fake_edit(text: str, **kwargs: object) -> str:
        seen.append(text)
        return text.replace("from the table", "edited")

    monkeypatch.setattr(click, "edit", fake_edit)
    edited = invoke("soul", "edit")
    assert edited.exit_code == 0 and "saved" in edited.output
    assert seen == ["Maya [bold]from the table[/bold]\n"]  # seeded from the table
    assert (tmp_home / "soul.md").read_text(encoding="utf-8") == "Maya [bold]edited[/bold]\n"
    assert invoke("soul").output.strip() == "Maya [bold]edited[/bold]"
    monkeypatch.setattr(click, "edit", lambda text, **kwargs: None)  # closed without saving
    assert "unchanged" in invoke("soul", "edit").output
    assert (tmp_home / "soul.md").read_text(encoding="utf-8") == "Maya [bold]edited[/bold]\n"


# --------------------------------------------------------------------------- policies

POLICIES = r"""
[[policy]]
name = "no-diagnoses"
action = "block"
pattern = "(?i)you (have|suffer from) (depression|adhd)"
message = "sadie does not diagnose"

[[policy]]
name = "broken"
action = "block"
pattern = "(unclosed"

[[policy]]
name = "gentle-words"
action = "rewrite"
pattern = "(?i)\\blazy\\b"
replacement = "[bold]tired[/bold]"
"""


def test_policies(invoke: Invoke, tmp_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    none = invoke("policies")
    assert none.exit_code == 0
    assert str(tmp_home / "policies.toml") in none.output and "[[policy]]" in none.output
    tmp_home.mkdir(parents=True, exist_ok=True)
    (tmp_home / "policies.toml").write_text(POLICIES, encoding="utf-8")
    result = invoke("policies")
    assert result.exit_code == 0, result.output
    assert "no-diagnoses" in result.output and "gentle-words" in result.output
    assert "→ [bold]tired[/bold]" in result.output and "sadie does not diagnose" in result.output
    error_lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1 and "broken" in error_lines[0]
    data = json.loads(invoke("policies", "--json").output)
    assert [p["name"] for p in data["policies"]] == ["no-diagnoses", "gentle-words"]
    assert data["policies"][1] == {
        "name": "gentle-words",
        "action": "rewrite",
        "scope": "chat",
        "pattern": r"(?i)\blazy\b",
        "message": "",
        "replacement": "[bold]tired[/bold]",
        "description": "",
    }
    assert len(data["errors"]) == 1 and data["exists"] is True
    (tmp_home / "policies.toml").write_text("[[policy]\nname = ", encoding="utf-8")
    code, out, _err = run_main(["policies"], capsys)
    assert code == 2 and "not valid TOML" in out
