"""Reflection that asks (issue 36, items 1 and 5), against the project's Ollama-protocol server
with the scripted reflection model: a batch's salient questions are asked in one request, each
is answered from retrieval over the whole memory (a note months older than the batch becomes
evidence), every request opens with the same system prompt and the batch so the server's
prompt cache is reused, plans and one-day events are set aside by the model-free rule, and the
run reports its requests and tokens. Real DuckDB, real embedder, real ollama client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sadie_tui.cli import main_group
from sadie_tui.config import Settings
from sadie_tui.engine.operations import ListBeliefs, ShowBelief
from sadie_tui.engine.reflect.plans import not_a_belief
from sadie_tui.engine.reflect.prompt import QUESTION_CHARS
from sadie_tui.engine.reflect.report import ReflectReport
from sadie_tui.engine.reflect.step import MAX_QUESTIONS, echoes
from sadie_tui.engine.requests import ReflectJob
from sadie_tui.engine.session import Session
from sadie_tui.eval.reflect import per_hundred
from tests.support.ollama_server import CpuModel, Reply
from tests.support.reflect_model import ReflectModel, Rule, Scripted

BED_QUESTION = "When does the person go to bed?"
RAN = "Ran 18 km along the Tagus with Ines"
BED = "Bed at eleven and up at six, every night for years"
BELIEF = "I go to bed at eleven every night"


def note(root: Path, name: str, date: str, title: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntitle: {title}\ndate: {date}\n---\n{text}\n", encoding="utf-8")
    return path


@pytest.fixture
def model(server) -> ReflectModel:  # type: ignore[no-untyped-def]
    scripted = ReflectModel()
    server.responder = scripted
    return scripted


@pytest.fixture
def session(memory_home: Path, server, embedder):  # type: ignore[no-untyped-def]
    with_session = Session.open(memory_home, Settings(ollama_host=server.url, reasoner="ollama"))
    yield with_session
    with_session.close()


def _months_apart(session: Session, model: ReflectModel, tmp_path: Path) -> ReflectReport:
    """A March note about bedtime, reflected on with nothing learned; then a November note
    whose batch raises the question of bedtime: the run that answers it."""
    session.ingest(
        [
            note(
                tmp_path / "old",
                "2026-03-10.md",
                "2026-03-10",
                "Bedtime",
                f"{BED}. It suits me.",
            )
        ]
    )
    assert session.reflect().new == 0  # nothing scripted yet: every note is now reflected on
    session.ingest(
        [
            note(
                tmp_path / "new",
                "2026-11-30.md",
                "2026-11-30",
                "Cutover",
                "The cutover ran all night. Home at five, too wired to sleep.",
            )
        ]
    )
    model.questions = [BED_QUESTION]
    model.beliefs = [Scripted("Bed at eleven", BELIEF, BED)]
    return session.reflect()


def test_a_question_is_answered_by_a_note_months_older_than_the_batch(
    session, model, server, tmp_path
) -> None:
    report = _months_apart(session, model, tmp_path)
    assert report.episodes == 1 and report.questions == 1 and report.recalled >= 1
    assert report.new == 1
    (belief,) = [b for b in session.call(ListBeliefs(origin="derived")) if b.statement == BELIEF]
    (quote,) = session.call(ShowBelief(belief.id)).evidence
    assert (quote.quote, quote.date, quote.title) == (BED, "2026-03-10", "Bedtime")
    assert quote.verbatim
    # The batch's requests: the questions, then one answer per question that shows the batch
    # and, under the handles after the batch's, what retrieval found.
    asked = [b for b in server.format_requests if "questions" in b["format"]["properties"]]
    answered = [b for b in server.format_requests if "beliefs" in b["format"]["properties"]]
    # The first run asked too, got no question, and read its batch directly.
    assert len(asked) == 2 and len(answered) == 2
    question, answer = asked[-1], answered[-1]
    user = answer["messages"][1]["content"]
    assert BED_QUESTION in user and "E2 (2026-03-10) Bedtime" in user
    handles = answer["format"]["properties"]["beliefs"]["items"]["properties"]["evidence"]
    assert handles["items"]["properties"]["e"]["enum"][0] == "E1"
    # The cached prefix: the same system prompt, and the answer opens with the question's
    # excerpts, byte for byte.
    assert answer["messages"][0] == question["messages"][0]
    shared = question["messages"][1]["content"].rsplit("\n\n", 1)[0]  # less the instruction
    assert "too wired to sleep" in shared and user.startswith(shared)


def test_a_batch_without_questions_is_read_directly(session, model, server) -> None:
    model.beliefs = [Scripted("Ran 18 km", "I run with Ines on weekends", RAN)]
    report = session.reflect()
    assert (report.questions, report.recalled, report.new) == (0, 0, 1)
    assert model.asked == 1 and model.proposals == 1


def test_plans_and_one_day_events_are_set_aside_and_counted(session, model) -> None:
    model.beliefs = [
        Scripted("Ran 18 km", "I will run a full marathon next spring", RAN),
        Scripted(
            "auth refactor",
            "I shipped the auth refactor on November 21st",
            "Shipped the auth refactor this week",
        ),
        Scripted(
            "promotion",
            "I worry about my promotion",
            "I keep thinking about the promotion conversation",
        ),
    ]
    report = session.reflect()
    assert report.proposed == 3 and report.new == 1
    assert report.not_beliefs == {"plan": 1, "one-day event": 1}
    assert report.as_dict()["not_beliefs"] == {"plan": 1, "one-day event": 1}
    derived = {b.statement for b in session.call(ListBeliefs(origin="derived"))}
    assert derived == {"I worry about my promotion"}


@pytest.mark.parametrize(
    ("statement", "why"),
    [
        ("I am confident that I will be able to try a full marathon next spring", "plan"),
        ("The migration will be completed by June 14th", "plan"),
        ("I'm going to sleep earlier", "plan"),
        ("I plan to call my mother", "plan"),
        ("I see Carla tomorrow", "plan"),
        ("I finished the migration on June 14th", "one-day event"),
        ("I met Ines on Saturday", "one-day event"),
        ("I was too wired to sleep last night", "one-day event"),
        ("I ran 18 km on 2026-11-20", "one-day event"),
        ("I sleep about seven hours a night", None),
        ("I swim on Mondays", None),
        ("I see Carla once a month", None),
        ("I want to run a marathon", None),
        ("I may be more tired than I think", None),
        ("I do my best work in the mornings", None),
    ],
)
def test_the_plan_and_event_rule(statement: str, why: str | None) -> None:
    assert not_a_belief(statement) == why


def test_the_run_reports_its_requests_and_the_tokens_it_read_and_wrote(
    session, model, server, tmp_path
) -> None:
    server.cpu = CpuModel(scale=0.0)  # prompt_eval_count counts only what the cache missed
    report = _months_apart(session, model, tmp_path)
    formatted = [b for b in server.format_requests]
    assert report.requests == 3  # questions, one answer, one verdict (the two runs: 4)
    assert report.eval_tokens > 0 and report.prompt_tokens > 0
    # What the answer shares with the questions before it is not read again.
    whole = sum(
        sum(len(m["content"]) for m in b["messages"]) // 4 for b in formatted[-report.requests :]
    )
    assert report.prompt_tokens < whole
    data = report.as_dict()
    assert {"requests", "prompt_tokens", "eval_tokens"} <= set(data)


def test_per_hundred_episodes() -> None:
    report = ReflectReport(episodes=20, prompt_tokens=3000, eval_tokens=500, elapsed=60.0)
    assert per_hundred(report) == (300.0, {"read": 15000, "written": 2500})
    assert per_hundred(ReflectReport()) == (0.0, {"read": 0, "written": 0})


def test_the_summary_and_json_say_what_was_set_aside_and_the_tokens(
    memory_home: Path, server, monkeypatch
) -> None:
    monkeypatch.setenv("SADIE_REASONER", "ollama")
    server.responder = ReflectModel(
        beliefs=[
            Scripted("Ran 18 km", "I will run a full marathon next spring", RAN),
            Scripted(
                "promotion",
                "I worry about my promotion",
                "thinking about the promotion conversation",
            ),
        ]
    )
    ran = CliRunner().invoke(main_group, ["reflect", "--json"], terminal_width=200)
    assert ran.exit_code == 0, ran.output
    data = json.loads(ran.stdout)
    assert data["not_beliefs"] == {"plan": 1} and data["new"] == 1
    assert data["requests"] == 2 and data["questions"] == 0  # questions (none), the batch
    assert data["prompt_tokens"] > 0 and data["eval_tokens"] > 0
    again = CliRunner().invoke(main_group, ["reflect", "--all"], terminal_width=200)
    assert again.exit_code == 0, again.output
    assert "set aside: plans and one-day events" in again.stdout
    assert "requests to the model" in again.stdout and "questions asked" in again.stdout


def test_the_beliefs_a_batch_speaks_to_are_judged_in_one_request(
    session, model, server, tmp_path
) -> None:
    model.beliefs = [
        Scripted("Ran 18 km", "I run with Ines on weekends", RAN),
        Scripted(
            "promotion",
            "I worry about my promotion",
            "I keep thinking about the promotion conversation",
        ),
    ]
    session.reflect()
    model.beliefs = []
    model.rules = [
        Rule("with Ines", "stopped running", "contradicts", "Ines has stopped running with me")
    ]
    session.ingest(
        [
            note(
                tmp_path / "later",
                "2026-11-29.md",
                "2026-11-29",
                "Running alone, still worrying",
                "Ines has stopped running with me since her injury, so I run alone on weekends. "
                "I still worry about my promotion every day.",
            )
        ]
    )
    before = model.judgements
    report = session.reflect()
    assert (model.judgements - before, model.many_judgements) == (1, 1)
    (request,) = [
        b for b in server.format_requests if b["messages"][1]["content"].startswith("Beliefs:")
    ]
    told = request["messages"][1]["content"]
    assert told.startswith("Beliefs:\nB1 ") and "\nB2 " in told
    assert report.contested == 1 and report.judged == 1
    statuses = {b.statement: b.status for b in session.call(ListBeliefs(origin="derived"))}
    assert statuses == {
        "I run with Ines on weekends": "contested",
        "I worry about my promotion": "active",
    }


@pytest.mark.parametrize(
    ("question", "echo"),
    [
        # Two answers of qwen2.5-coder:1.5b to the first wording of the request (measured).
        (
            "What are the most salient high-level questions we can answer about this person "
            "over months, not about one day?",
            True,
        ),
        (
            "What are their habits, health, the people in their life, their work, their "
            "values, or what changed?",
            True,
        ),
        ("How much does the person sleep?", False),
        ("How often does Maya run with Ines?", False),
        ("Why did her sleep change in the spring?", False),
        ("What does Maya value most in her life?", False),
    ],
)
def test_a_question_that_repeats_the_instruction_is_dropped(question: str, echo: bool) -> None:
    assert echoes(question) is echo


def test_echoed_questions_leave_the_batch_read_directly(session, model) -> None:
    model.questions = [
        "What are the most salient high-level questions we can answer about this person?"
    ]
    model.beliefs = [Scripted("Ran 18 km", "I run with Ines on weekends", RAN)]
    report = session.reflect()
    assert (report.questions, report.new, model.proposals) == (0, 1, 1)


def test_run_on_and_cut_off_questions_are_read(session, model, server) -> None:
    # The 1.5B model ran a dozen questions into one string, and was cut at its token limit
    # in the middle of the next one (measured): each finished question counts, up to the
    # MAX_QUESTIONS a batch asks.
    model.questions = ["How often does the person run? How much does the person sleep?"]
    assert session.reflect(ReflectJob(everything=True)).questions == min(2, MAX_QUESTIONS)
    server.queue(
        Reply('{"questions": ["How often does the person run?", "How much time does the per')
    )
    assert session.reflect(ReflectJob(everything=True)).questions == 1
    # The grammar closes a string at QUESTION_CHARS: the words after its last question mark
    # are not a question ("How much time does the per" was one, kept as asked).
    server.queue(Reply('{"questions": ["How often does the person run? How much time does the per"]}'))
    assert session.reflect(ReflectJob(everything=True)).questions == 1
    asked = [b["format"] for b in server.format_requests if "questions" in b["format"]["properties"]]
    assert asked[-1]["properties"]["questions"]["items"]["maxLength"] == QUESTION_CHARS
