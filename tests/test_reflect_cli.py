"""`sadie reflect`, `sadie beliefs …` and `sadie soul suggest` through the CLI, against the
Ollama-protocol test server: JSON shapes, exit codes, and a draft never written unasked."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sadie_tui.cli import main_group
from tests.support.ollama_server import Reply
from tests.support.reflect_model import ReflectModel
from tests.test_cli_conversations import run_main
from tests.test_reflect import RUN, SLOW, WORRY


def sadie(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main_group, list(args), input=input, terminal_width=200)


def test_reflect_and_decide_from_the_command_line(
    memory_home: Path, server, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("SADIE_REASONER", "ollama")
    server.responder = ReflectModel(beliefs=[RUN, WORRY, SLOW])
    ran = sadie("reflect", "--json")
    assert ran.exit_code == 0, ran.output
    report = json.loads(ran.stdout)
    assert report["new"] == 3 and report["left"] == 0 and len(report["new_ids"]) == 3
    again = sadie("reflect")
    assert again.exit_code == 0 and "Nothing to reflect on" in again.stdout

    listed = json.loads(sadie("beliefs", "list", "--origin", "derived", "--json").stdout)
    assert {b["statement"] for b in listed} == {RUN.statement, WORRY.statement, SLOW.statement}
    by = {b["statement"]: b["id"] for b in listed}
    shown = json.loads(sadie("beliefs", "show", by[RUN.statement][:8], "--json").stdout)
    assert shown["belief"]["id"] == by[RUN.statement]
    assert shown["evidence"][0]["quote"] == RUN.quote and shown["evidence"][0]["verbatim"]
    table = sadie("beliefs", "show", by[RUN.statement])
    assert "“Ran 18 km along the Tagus with Ines” verbatim" in table.stdout

    assert (
        json.loads(sadie("beliefs", "accept", by[RUN.statement], "--json").stdout)["belief"][
            "status"
        ]
        == "accepted"
    )
    assert (
        "rejected “I worry about my promotion”"
        in sadie("beliefs", "reject", by[WORRY.statement]).stdout
    )
    edited = json.loads(
        sadie("beliefs", "edit", by[SLOW.statement], "I take my time", "--json").stdout
    )
    assert (edited["belief"]["statement"], edited["belief"]["status"]) == (
        "I take my time",
        "accepted",
    )
    assert [
        b["statement"]
        for b in json.loads(sadie("beliefs", "list", "--status", "rejected", "--json").stdout)
    ] == [WORRY.statement]

    stated = [
        b for b in json.loads(sadie("beliefs", "list", "--json").stdout) if b["origin"] == "stated"
    ]
    # Through `cli.main`, as the script runs: exit codes and one-line errors.
    assert run_main(["beliefs", "show", "ffffffff"], capsys)[::2] == (
        5,
        "sadie: no belief 'ffffffff'\n",
    )
    code, _, err = run_main(["beliefs", "accept", stated[0]["id"]], capsys)
    assert code == 2 and "beliefs.jsonl" in err and err.count("\n") == 1
    assert run_main(["reflect", "--since", "March"], capsys)[0] == 2


def test_soul_suggest_shows_a_diff_and_writes_only_when_asked(
    memory_home: Path, server, monkeypatch
) -> None:
    monkeypatch.setenv("SADIE_REASONER", "ollama")
    draft = "Maya, 34, backend engineer in Lisbon; runs with Ines on weekends, worries about work."
    server.queue(Reply(draft), Reply(draft), Reply(draft))
    as_json = json.loads(sadie("soul", "suggest", "--json").stdout)
    assert as_json["proposed"] == draft and "+Maya, 34" in as_json["diff"]
    soul = memory_home / "soul.md"
    assert not soul.exists()  # --json writes nothing
    declined = sadie("soul", "suggest", input="n\n")
    assert declined.exit_code == 0 and not soul.exists()
    assert (
        "-Maya, 34, backend engineer in Lisbon; runs, worries about work, loves Ines."
        in declined.stdout
    )
    accepted = sadie("soul", "suggest", input="y\n")
    assert accepted.exit_code == 0
    assert soul.read_text(encoding="utf-8") == draft + "\n"
    # What the model was told: the summary, and the beliefs and notes after it.
    told = server.requests[0]["messages"][1]["content"]
    assert told.startswith("Soul summary:\nMaya, 34") and "Latest notes:" in told
