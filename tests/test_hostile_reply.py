"""Hostile replies and hostile files (issue 15): what a model, a policy file, a persona file or
an import can throw at sadie — each case is the issue's exact input first, then the rule
behind it. Nothing hangs, nothing traces back, nothing is left ``streaming``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest

from sadie_tui.engine import conversations as conv
from sadie_tui.engine.policies import LintResult, lint, parse_policies, skip_notice
from sadie_tui.engine.prompt import CITATION_RULES, OPINION_RULE, STANDING, TONE
from sadie_tui.engine.reply.citations import police, split_trailing_list
from sadie_tui.engine.reply.grounding import own_citations
from sadie_tui.engine.reply.guard import ReplyGuard
from sadie_tui.engine.reply.near_echo import NearEchoes
from sadie_tui.engine.reply.stream_filter import StreamFilter
from sadie_tui.engine.reply.unsupported import unsupported
from sadie_tui.engine.store.db import Database
from sadie_tui.engine.titles import make_title
from sadie_tui.paths import db_path
from tests.support.ollama_server import Reply
from tests.support.turns import run_chat

EP = "3f7f7a68-0b1c-4d2e-9f00-1234567890ab"
SHOWN = {EP: ["Ran 18 km along the Tagus with Ines. My knee held up."]}
INSTRUCTIONS = [STANDING, CITATION_RULES, OPINION_RULE]


# --------------------------------------------------------------------------- linear replies


def whitespace_reply(pieces: int) -> list[str]:
    """Issue 15, item 2: "Start." and then ``pieces`` × " \\n"."""
    return ["Start.", *[" \n"] * pieces]


def filter_pieces(pieces: list[str]) -> str:
    f = StreamFilter()
    shown = "".join(f.feed(p) for p in pieces)
    return shown + f.finish()


def test_the_issue_whitespace_run_passes_the_stream_filter_at_once():
    started = time.perf_counter()
    shown = filter_pieces(whitespace_reply(60_000))
    assert shown == "Start."
    # It took minutes (2k/4k/8k/16k pieces: 0.45/1.8/8.7/30 s); now it is one pass.
    assert time.perf_counter() - started < 10


def test_the_issue_whitespace_run_is_one_complete_chat_reply(server, memory):
    from sadie_tui.config import load_settings
    from sadie_tui.engine.session import Session

    server.queue(Reply(whitespace_reply(60_000)))
    events = run_chat(Session(memory, load_settings()), "how was the week?")
    rows = conv.messages(memory.db, events[0].conversation_id)
    assert (rows[-1].status, rows[-1].content) == ("complete", "Start.")


def _timed(fn: Callable[[str], object], text: str) -> float:
    """CPU seconds of this process: other processes on a busy machine do not add to it."""
    started = time.process_time()
    fn(text)
    return time.process_time() - started


def assert_linear(fn: Callable[[str], object], make: Callable[[int], str], n: int) -> None:
    """Time per character at 8n is within 3× of that at n: a complexity property, not a speed
    budget. The small size takes the best of five runs, the big one passes on the first of
    three runs under the bound, so a busy machine does not fail it."""
    small, big = make(n), make(8 * n)
    per_char = min(_timed(fn, small) for _ in range(5)) / len(small)
    bound = 3 * per_char * len(big)
    runs = []
    for _ in range(3):
        runs.append(_timed(fn, big))
        if runs[-1] <= bound:
            return
    pytest.fail(
        f"{getattr(fn, '__name__', fn)}: {len(big)} chars took {min(runs):.3f}s, "
        f"more than 3× the time per character of {len(small)} chars ({bound:.3f}s)"
    )


def _pieces(text: str, size: int = 2) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def stream_filter_in_pieces(text: str) -> str:
    return filter_pieces(_pieces(text))


def reply_guard_in_pieces(text: str) -> str:
    guard = ReplyGuard(INSTRUCTIONS)
    shown = "".join(guard.feed(p) for p in _pieces(text, 4))
    return shown + guard.finish()


def reply_guard_whole(text: str) -> str:
    # How ask feeds it: the whole reply at once.
    guard = ReplyGuard(INSTRUCTIONS)
    return guard.feed(text) + guard.finish()


def citations_of_the_reply(text: str) -> object:
    return own_citations(text, "", False, SHOWN)


def citations_of_the_tail(text: str) -> object:
    return police(text, SHOWN)


NEAR_ECHOES = NearEchoes([*INSTRUCTIONS, *TONE.values()])


def near_echoes(text: str) -> object:
    return NEAR_ECHOES.strip(text)


def unsupported_details(text: str) -> object:
    return unsupported(text, ["Ran 18 km along the Tagus with Ines on 2026-03-14."])


HUGE_REPLIES: dict[str, Callable[[int], str]] = {
    "whitespace run": lambda n: "Start." + " \n" * (n // 2),
    "newlines": lambda n: "Start." + "\n" * n,
    "spaces after a line break": lambda n: "Start.\n" + " " * n + "end",
    "a padded CITATIONS line": lambda n: "Start.\nCITATIONS" + " " * n + "x",
    "one long line": lambda n: "a" * n,
    "short sentences": lambda n: ". " * (n // 2),
    "brackets": lambda n: "Answer.\n" + "[" * (n // 2) + "]" * (n // 2),
    "open brackets": lambda n: "[{(" * (n // 3),
    "prose": lambda n: ("Ran 18 km with Ines on 2026-03-14 at 7:30. " * (n // 43 + 1))[:n],
    "echoed instructions": lambda n: (
        'Reply in plain prose, warmly and concretely, speaking to them as "you".\n' * (n // 72 + 1)
    )[:n],
    "dotted words": lambda n: "a." * (n // 2),
    "distinct lines twice": lambda n: "".join(
        f"this is line number {i:07d} of the reply\n" * 2 for i in range(n // 80 + 1)
    ),
}

CHECKS: dict[str, tuple[Callable[[str], object], int]] = {
    "stream filter": (stream_filter_in_pieces, 4000),
    "reply guard, piece by piece": (reply_guard_in_pieces, 4000),
    "reply guard, whole": (reply_guard_whole, 4000),
    "citations in the reply": (citations_of_the_reply, 4000),
    "citations tail": (citations_of_the_tail, 4000),
    "unsupported details": (unsupported_details, 4000),
    "near echoes": (near_echoes, 4000),
    "title": (make_title, 20000),
}


@pytest.mark.parametrize("shape", HUGE_REPLIES)
@pytest.mark.parametrize("check", CHECKS)
def test_everything_that_reads_a_reply_is_linear(check, shape):
    fn, n = CHECKS[check]
    assert_linear(fn, HUGE_REPLIES[shape], n)


HUGE_INSTRUCTIONS: dict[str, Callable[[int], str]] = {
    "one line of short sentences": lambda n: "Be kind. " * (n // 9),
    "one line of tiny sentences": lambda n: "a. " * (n // 3),
    "one long sentence": lambda n: "be kind and " * (n // 12),
}


@pytest.mark.parametrize("shape", HUGE_INSTRUCTIONS)
def test_the_guard_reads_a_huge_instruction_text_in_linear_time(shape):
    """A guardrail block or persona voice the person wrote (one huge line, say): its
    sentences and the runs of them to the line's end are found in linear time."""
    assert_linear(lambda text: ReplyGuard([*INSTRUCTIONS, text]), HUGE_INSTRUCTIONS[shape], 20_000)


def test_the_guard_still_drops_an_echo_wrapped_over_lines():
    sentence = (
        'Use "verbatim" when the quote is copied word for word, "paraphrase" when it restates '
        'the excerpt in other words, and "inference" when you are connecting dots the notes '
        "do not state."
    )
    assert sentence.casefold() in " ".join(CITATION_RULES.split()).casefold()
    words = sentence.split(" ")
    wrapped = " ".join(words[:5]) + "\n" + " ".join(words[5:]) + "\nThe answer."
    assert reply_guard_whole(wrapped) == "The answer."


def test_a_reply_ending_in_brackets_keeps_its_prose():
    text = "Answer.\n" + "[" * 50_000 + "]" * 50_000
    assert split_trailing_list(text) is None
    assert citations_of_the_reply(text).text == text


# --------------------------------------------------------------------------- policy regexes

HANG = "a" * 40 + "!"  # issue 15, item 1: forty "a" and a "!"
WARN_HANG = '[[policy]]\nname = "nested"\naction = "warn"\npattern = "(a+)+$"\n'
# The "regex" engine finds "(a+)+$" fails at once; this one still backtracks without end.
SLOW = '[[policy]]\nname = "slow"\naction = "warn"\npattern = "(a|aa)+$"\n'
GENTLE = '[[policy]]\nname = "gentle"\naction = "rewrite"\npattern = "a!"\nreplacement = "a."\n'


def sadie(home, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "SADIE_HOME": str(home), **env}
    full.pop("COLUMNS", None)
    return subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=120,
    )


def test_the_issue_policy_pattern_lints_the_reply_at_once():
    # In a child process: a backtracking engine would hold the GIL for ever, so only a
    # timeout from outside turns a regression into a failure instead of a hung test run.
    code = (
        "from sadie_tui.engine.policies import lint, parse_policies\n"
        f"rules = parse_policies({WARN_HANG!r}).policies\n"
        f"print(repr(lint({HANG!r}, rules)))\n"
    )
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    (rule,) = parse_policies(WARN_HANG).policies
    assert proc.stdout.strip() == repr(LintResult(HANG, None, (), False))
    assert time.perf_counter() - started < 30
    assert lint(HANG, [rule]).skipped == ()


def test_a_rule_past_its_budget_is_skipped_by_name_and_the_reply_kept():
    rules = parse_policies(SLOW + GENTLE).policies
    started = time.perf_counter()
    outcome = lint(HANG, rules, budget=0.05)
    assert time.perf_counter() - started < 2
    assert outcome.skipped == ("slow",)
    assert outcome.text == "a" * 40 + "."  # the other rule still applies
    assert [h.policy for h in outcome.hits] == ["gentle"]
    assert "slow" in skip_notice("slow") and "policies.toml" in skip_notice("slow")


def test_a_pattern_the_engine_cannot_compile_names_its_rule():
    text = '[[policy]]\nname = "range"\naction = "warn"\npattern = "[z-a]"\n' + GENTLE
    ps = parse_policies(text, source="policies.toml")
    assert [p.name for p in ps.policies] == ["gentle"]
    (error,) = ps.errors
    assert error.startswith("policies.toml: policy 'range': invalid pattern '[z-a]'")
    assert "\n" not in error


def test_lint_runs_off_the_event_loop(server, memory, monkeypatch):
    from sadie_tui.config import load_settings
    from sadie_tui.engine.session import Session
    from sadie_tui.engine.turns import chat as chat_turn

    threads = []

    def spy(text, policies):
        threads.append(threading.current_thread())
        return lint(text, policies)

    monkeypatch.setattr(chat_turn, "lint", spy)
    (memory.home / "policies.toml").write_text(GENTLE)
    server.queue(Reply(["Yes a!"]))
    events = run_chat(Session(memory, load_settings()), "hm")
    assert threads and threads[0] is not threading.main_thread()
    assert any(getattr(e, "value", None) == "Yes a." for e in events)  # it still applies


def test_the_issue_policy_through_the_cli_keeps_the_reply(memory_home, server):
    (memory_home / "policies.toml").write_text(WARN_HANG + SLOW)
    server.queue(Reply([HANG[:20], HANG[20:]]))
    proc = sadie(memory_home, "chat", "hm", OLLAMA_HOST=server.url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(HANG)
    assert 'policy "slow" skipped' in proc.stderr and "nested" not in proc.stderr
    assert "Traceback" not in proc.stderr
    db = Database.open(db_path(memory_home))
    try:
        row = db.fetchone("SELECT content, status, metadata FROM messages WHERE role='assistant'")
    finally:
        db.close()
    assert row[:2] == (HANG, "complete")
    assert json.loads(row[2])["policies_skipped"] == ["slow"]


# --------------------------------------------------------------------------- only reasoning

UNCLOSED = "<think>The person asks how the week went. Let me look at the notes first, and"


def assistant_rows(home) -> list[tuple]:
    db = Database.open(db_path(home))
    try:
        return db.fetchall(
            "SELECT content, status, metadata FROM messages WHERE role='assistant' "
            "ORDER BY created_at"
        )
    finally:
        db.close()


def test_an_unclosed_think_is_a_model_error_in_chat(memory_home, server):
    server.queue(Reply(UNCLOSED, done_reason="length"))
    proc = sadie(memory_home, "chat", "how was the week?", OLLAMA_HOST=server.url)
    assert proc.returncode == 4, proc.stderr
    assert proc.stdout == ""
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("sadie: the model only reasoned and gave no answer")
    assert "<think> block never closed" in last and "reply_tokens" in last
    assert "Traceback" not in proc.stderr
    ((content, status, metadata),) = assistant_rows(memory_home)
    assert (content, status) == ("", "error")
    assert "only reasoned" in json.loads(metadata)["error"]


def test_reasoning_in_the_thinking_field_and_no_content_is_one_too(server, memory):
    from sadie_tui.config import load_settings
    from sadie_tui.engine.events import ErrorEvent
    from sadie_tui.engine.session import Session

    server.queue(Reply(content=[], thinking=["weighing it up"] * 3))
    events = run_chat(Session(memory, load_settings()), "hm")
    assert isinstance(events[-1], ErrorEvent) and events[-1].code == "no_answer"
    assert events[-1].fix == "ask again, or try another model"
    rows = conv.messages(memory.db, events[0].conversation_id)
    assert rows[-1].status == "error"


def test_an_unclosed_think_in_ask_is_answered_offline_with_a_notice(memory_home, server):
    server.queue(Reply(UNCLOSED))
    proc = sadie(
        memory_home, "--ask", "How did the Warden refactor go?", "--json", OLLAMA_HOST=server.url
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    # As with any model error in ask: the notice, then sadie's own answer from the notes.
    assert "the model only reasoned and gave no answer" in proc.stderr
    assert data["offline"] is True and data["answer"]
    assert any("only reasoned" in n for n in data["notices"])


# --------------------------------------------------------------------------- persona values

PERSONA = """name = "night-owl"
chunks = 8
window_days = 90
half_life_days = 30
mmr = 0.8
voice = "Answer in two sentences."
[weights]
vector = 0.5
keyword = 0.5
[channels]
observation_weight = 1.0
"""


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from sadie_tui import cli

    try:
        returned = cli.main(args)
        code = returned if isinstance(returned, int) else 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def user_persona(tmp_home, text: str):
    folder = tmp_home.parent / "config" / "personas"  # SADIE_CONFIG, set by tmp_home
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "night-owl.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_issue_window_of_99999999999_days_is_a_field_error(memory_home, capsys):
    path = user_persona(
        memory_home, PERSONA.replace("window_days = 90", "window_days = 99999999999")
    )
    code, out, err = run_main(["search", "how did I sleep", "--persona", "night-owl"], capsys)
    assert code == 2 and out == ""
    assert err == (
        f"sadie: persona file {path}: field 'window_days' must be between 1 and 36500, "
        "not 99999999999\n"
    )


def test_the_issue_nan_observation_weight_never_reaches_retrieval(memory_home, capsys):
    text = PERSONA.replace("observation_weight = 1.0", "observation_weight = nan")
    path = user_persona(memory_home, text)
    code, out, err = run_main(["--ask", "how did I sleep", "--persona", "night-owl"], capsys)
    assert code == 2 and out == ""
    assert err == (
        f"sadie: persona file {path}: field 'channels.observation_weight' must be a finite "
        "number, not nan\n"
    )


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("vector = 0.5", "vector = nan", "weights.vector"),
        ("vector = 0.5", "vector = inf", "weights.vector"),
        ("vector = 0.5", "vector = 1e300", "weights.vector"),
        ("mmr = 0.8", "mmr = nan", "mmr"),
        ("half_life_days = 30", "half_life_days = nan", "half_life_days"),
        ("half_life_days = 30", "half_life_days = inf", "half_life_days"),
        ("half_life_days = 30", "half_life_days = 1e12", "half_life_days"),
        ("observation_weight = 1.0", "observation_weight = -inf", "channels.observation_weight"),
        ("chunks = 8", "chunks = 99999999999", "chunks"),
    ],
)
def test_every_number_in_a_persona_is_finite_and_in_range(tmp_path, old, new, field):
    from sadie_tui.engine.errors import ConfigError
    from sadie_tui.engine.personas import load_persona_file

    path = tmp_path / "night-owl.toml"
    path.write_text(PERSONA.replace(old, new), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_persona_file(path)
    message = info.value.one_line()
    assert message.startswith(f"persona file {path}: field '{field}' must be ")
    assert "\n" not in info.value.message
    path.write_text(PERSONA, encoding="utf-8")
    assert load_persona_file(path).observation_weight == 1.0


# --------------------------------------------------------------------------- chips and imports


def new_conversation(home, title: str = "Runs") -> str:
    db = Database.open(db_path(home))
    try:
        return conv.create_conversation(db, title).id
    finally:
        db.close()


def count(home, table: str) -> int:
    db = Database.open(db_path(home))
    try:
        return db.fetchone(f"SELECT count(*) FROM {table}")[0]
    finally:
        db.close()


def test_the_issue_superscript_two_is_not_an_entity_id(memory_home, capsys):
    cid = new_conversation(memory_home)
    code, out, err = run_main(["chips", "add", cid, "graph_entity", "²"], capsys)
    # A name that names nothing, like any other: one line, "not found", no traceback.
    assert (code, out) == (5, "")
    assert err == "sadie: no entity '²' (look it up with `sadie chips find`)\n"
    code, _, err = run_main(["chips", "add", cid, "graph_entity", "9" * 40], capsys)
    assert code == 5 and err.count("\n") == 1
    assert count(memory_home, "chips") == 0


def test_a_stored_chip_with_ref_id_superscript_two_no_longer_breaks_chat(server, memory):
    from sadie_tui.config import load_settings
    from sadie_tui.engine.events import Done
    from sadie_tui.engine.session import Session
    from sadie_tui.engine.store import chips as chip_repo
    from sadie_tui.engine.store.ids import new_id, now

    # As the issue's import left it (before imports were checked).
    cid = conv.create_conversation(memory.db, "Runs").id
    chip_repo.insert_chip(
        memory.db,
        new_id(),
        cid,
        kind="graph_entity",
        ref_id="²",
        label="Ines",
        snippet=None,
        created_at=now(),
    )
    server.queue(Reply(["You ran with Ines."]))
    events = run_chat(Session(memory, load_settings()), "who do I run with?", conversation_id=cid)
    assert isinstance(events[-1], Done) and events[-1].status == "complete"
    assert (
        "Ines (person), a node of the knowledge graph."
        in server.requests[-1]["messages"][0]["content"]
    )


def export_file(tmp_path, body: bytes | str, name: str = "export.json"):
    path = tmp_path / name
    path.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
    return path


def export_text(*, message: dict | None = None, chip: dict | None = None, **head) -> str:
    message = {
        "role": "user",
        "content": "How did the run go?",
        "status": "complete",
        "emotion": None,
        "citations": [],
        "model": None,
        "latency_ms": None,
        "metadata": {},
        "created_at": "2026-11-20T08:00:00",
        **(message or {}),
    }
    return json.dumps(
        {
            "format": "sadie-conversation",
            "version": 1,
            "conversation": {"title": "Runs", "summary": "", "pinned": False, **head},
            "messages": [message],
            "chips": [chip] if chip else [],
        }
    )


def test_the_issue_chip_with_ref_id_superscript_two_is_refused_at_import(
    tmp_home, tmp_path, capsys
):
    path = export_file(
        tmp_path, export_text(chip={"kind": "graph_entity", "ref_id": "²", "label": "Ines"})
    )
    code, out, err = run_main(["conversations", "import", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err == (
        "sadie: not a sadie conversation export: chips[0].ref_id: must be an entity id "
        "(digits), not '²'\n"
    )
    assert count(tmp_home, "conversations") == 0


MALFORMED = [
    # The issue's three: bytes that are not UTF-8, JSON nested 100,000 deep, a bad type.
    (b'{"conversation": {"title": "caf\xe9"}}', "not UTF-8 text (byte 31)"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    (
        export_text(message={"latency_ms": "fast"}),
        "messages[0].latency_ms: must be a number, not text 'fast'",
    ),
    (
        export_text(message={"model": {"name": "qwen"}}),
        "messages[0].model: must be text, not an object",
    ),
    (
        export_text(message={"role": "robot"}),
        "messages[0].role: must be one of user, assistant, system, not text 'robot'",
    ),
    (
        export_text(message={"citations": "none"}),
        "messages[0].citations: must be a list, not text 'none'",
    ),
    (
        export_text(message={"citations": [3]}),
        "messages[0].citations[0]: must be an object, not the number 3",
    ),
    (
        export_text(message={"metadata": {"unsupported": [["x"]]}}),
        "messages[0].metadata.unsupported[0]: must be an object, not a list",
    ),
    (
        export_text(message={"created_at": "yesterday"}),
        "messages[0].created_at: is not a date and time: 'yesterday'",
    ),
    (export_text(message={"latency_ms": float("nan")}), "not JSON (NaN is not a JSON number)"),
    (export_text(title=["Runs"]), "conversation.title: must be text, not a list"),
    (export_text(pinned="yes"), "conversation.pinned: must be true or false, not text 'yes'"),
    (
        export_text(chip={"kind": "photo", "ref_id": "x"}),
        "chips[0].kind: must be one of wiki, source, brief, graph_entity, discourse, record, not"
        " text 'photo'",
    ),
    (
        json.dumps({"format": "something-else", "conversation": {}}),
        "format: is 'something-else', not 'sadie-conversation'",
    ),
    (
        json.dumps({"version": 2, "conversation": {}}),
        "version: 2 is newer than this sadie reads (1)",
    ),
    (json.dumps([{"conversation": {}}]), "the file holds a list, not an object"),
    (
        json.dumps({"conversation": {}, "messages": ["hi"]}),
        "messages[0]: must be an object, not text 'hi'",
    ),
]


@pytest.mark.parametrize(
    ("body", "reason"), MALFORMED, ids=[reason.split(":")[0][:32] for _, reason in MALFORMED]
)
def test_a_malformed_export_is_one_line_exit_2_and_stores_nothing(
    tmp_home, tmp_path, capsys, body, reason
):
    path = export_file(tmp_path, body)
    code, out, err = run_main(["conversations", "import", str(path)], capsys)
    assert (code, out) == (2, ""), err
    where = f"{path}: " if reason.startswith("not UTF-8") else ""
    assert err == f"sadie: not a sadie conversation export: {where}{reason}\n"
    assert count(tmp_home, "conversations") == count(tmp_home, "messages") == 0


def test_an_export_still_round_trips(tmp_home, tmp_path, capsys):
    text = export_text(
        message={"status": "streaming"},
        chip={"kind": "graph_entity", "ref_id": "12", "label": "Ines"},
    )
    code, out, err = run_main(["conversations", "import", str(export_file(tmp_path, text))], capsys)
    assert code == 0, err
    db = Database.open(db_path(tmp_home))
    try:
        assert db.fetchall("SELECT role, content, status FROM messages") == [
            ("user", "How did the run go?", "interrupted")  # nothing is writing it any more
        ]
        assert db.fetchall("SELECT kind, ref_id, label FROM chips") == [
            ("graph_entity", "12", "Ines")
        ]
    finally:
        db.close()
