"""The learning loop against the project's Ollama-protocol server, with a scripted model that
reads the request (excerpts under handles, a belief and its items) and answers under the
request's schema: fabricated evidence is dropped, duplicates merge, a second run adds
nothing, a contradicting note contests and a superseding one retires, the person's decisions
survive re-runs, and retrieval's belief channel returns what was learned. Real DuckDB, real
embedder, real ollama client."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sadie_tui.config import Settings
from sadie_tui.engine.errors import ModelUnreachable, UsageError
from sadie_tui.engine.operations import (
    AcceptBelief,
    EditBelief,
    ListBeliefs,
    RejectBelief,
    ShowBelief,
)
from sadie_tui.engine.requests import ReflectJob
from sadie_tui.engine.session import Session
from tests.support.ollama_server import Reply
from tests.support.reflect_model import ReflectModel, Rule, Scripted

RUN = Scripted("Ran 18 km", "I run with Ines on weekends", "Ran 18 km along the Tagus with Ines")
WORRY = Scripted(
    "promotion", "I worry about my promotion", "I keep thinking about the promotion conversation"
)
SLOW = Scripted("auth refactor", "I ship slowly", "Felt slower than it should have been")


# A batch's first request asks for its salient questions: a test that writes the proposing
# answer by hand queues this before it (no question: the batch is read directly).
NO_QUESTIONS = Reply('{"questions": []}')


def note(root: Path, name: str, date: str, title: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntitle: {title}\ndate: {date}\n---\n{text}\n", encoding="utf-8")
    return path


@pytest.fixture
def model(server) -> ReflectModel:  # type: ignore[no-untyped-def]
    scripted = ReflectModel(beliefs=[RUN, WORRY, SLOW])
    server.responder = scripted
    return scripted


@pytest.fixture
def session(memory_home: Path, server, embedder):  # type: ignore[no-untyped-def]
    settings = Settings(ollama_host=server.url, reasoner="ollama")
    with_session = Session.open(memory_home, settings)
    yield with_session
    with_session.close()


def derived(session: Session) -> dict[str, object]:
    return {b.statement: b for b in session.call(ListBeliefs(origin="derived"))}


# -- proposing and policing -----------------------------------------------------------------


def test_beliefs_are_proposed_with_quotes_found_in_their_notes(session, model, server) -> None:
    report = session.reflect()
    assert report.new == 3 and report.dropped == 0 and report.all_verbatim == 3
    beliefs = derived(session)
    assert set(beliefs) == {RUN.statement, WORRY.statement, SLOW.statement}
    detail = session.call(ShowBelief(beliefs[RUN.statement].id[:8]))  # a prefix resolves
    (quote,) = detail.evidence
    assert quote.verbatim and quote.quote == "Ran 18 km along the Tagus with Ines"
    assert quote.title == "Long run by the river" and quote.date == "2026-11-20"
    assert [c.action for c in detail.changes] == ["proposed"]
    assert detail.changes[0].run_id == report.run_id and detail.changes[0].model == "qwen3:1.7b"
    # One request per batch, under a schema whose handles are the batch's excerpts.
    (propose,) = [b for b in server.format_requests if "beliefs" in b["format"]["properties"]]
    handles = propose["format"]["properties"]["beliefs"]["items"]["properties"]["evidence"]
    assert handles["items"]["properties"]["e"]["enum"] == [f"E{n}" for n in range(1, 7)]
    # The person's own beliefs are still there, marked as theirs.
    stated = session.call(ListBeliefs(origin="stated"))
    assert {b.statement for b in stated} == {
        "I sleep seven hours most nights",
        "Running keeps me sane",
    }


def test_fabricated_evidence_is_dropped_and_counted(session, model, server) -> None:
    model.beliefs = [
        Scripted(
            "auth refactor", "I love deadlines", "I adore a tight deadline more than anything"
        ),
        Scripted("Ran 18 km", "I run to clear my head", "E9 is not an excerpt", kind="habit"),
    ]
    server.queue(
        NO_QUESTIONS,
        Reply(
            json.dumps(
                {
                    "beliefs": [
                        {
                            "statement": "I love deadlines",
                            "kind": "value",
                            "confidence": 0.9,
                            "evidence": [
                                {"e": "E1", "quote": "I adore a tight deadline more than anything"}
                            ],
                        },
                        {
                            "statement": "I live in Porto",
                            "kind": "fact",
                            "confidence": 0.9,
                            "evidence": [
                                {"e": "E7", "quote": "Shipped the auth refactor this week"}
                            ],
                        },
                        {
                            "statement": "I finished a marathon",
                            "kind": "fact",
                            "confidence": 0.9,
                            "evidence": [{"e": "E1", "quote": "<words copied exactly>"}],
                        },
                    ]
                }
            )
        ),
    )
    report = session.reflect()
    assert (report.proposed, report.new, report.dropped) == (3, 0, 3)
    assert report.quotes_dropped == {"not in the note": 1, "unknown excerpt": 1, "placeholder": 1}
    assert derived(session) == {}


def test_a_paraphrased_quote_keeps_the_notes_own_sentence(session, model) -> None:
    model.beliefs = [
        Scripted(
            "Ran 18 km", "I run by the river", "I ran eighteen kilometres by the Tagus with Ines"
        )
    ]
    report = session.reflect()
    assert report.new == 1 and report.all_verbatim == 0
    (quote,) = session.call(ShowBelief(derived(session)["I run by the river"].id)).evidence
    assert quote.verbatim is False
    assert (
        quote.quote == "Ran 18 km along the Tagus with Ines."
    )  # the note's words, not the model's


# -- one belief per idea, and a second run --------------------------------------------------


def test_duplicates_merge_and_a_second_run_adds_nothing(session, model) -> None:
    model.beliefs = [
        RUN,
        Scripted("marathon in 3:58", RUN.statement, "Ines was there with a sign"),
        Scripted(
            "Ran 18 km",
            "I go running with Ines at weekends",
            "Ran 18 km along the Tagus with Ines. My knee held up",
        ),
    ]
    model.rules = [Rule("at weekends", "I run with Ines on weekends", "same")]
    first = session.reflect()
    assert first.new == 1 and first.merged == 2
    (belief,) = derived(session).values()
    detail = session.call(ShowBelief(belief.id))
    assert {e.quote for e in detail.evidence} == {
        "Ran 18 km along the Tagus with Ines",
        "Ines was there with a sign",
        "Ran 18 km along the Tagus with Ines. My knee held up",
    }
    asked = model.proposals
    second = session.reflect()
    assert (second.batches, second.new, model.proposals) == (0, 0, asked)
    again = session.reflect(ReflectJob(everything=True))
    assert again.new == 0 and again.merged == 0 and again.repeated == 3
    assert len(session.call(ShowBelief(belief.id)).evidence) == 3


def test_new_notes_are_marked_for_the_next_reflection(session, model, tmp_path) -> None:
    session.reflect()
    assert session.reflect().batches == 0
    new = note(
        tmp_path / "more", "2026-11-28.md", "2026-11-28", "Quiet day", "A quiet day at home."
    )
    session.ingest([new])
    report = session.reflect()
    assert report.episodes == 1 and report.left == 0


# -- contradiction and supersession ---------------------------------------------------------


def test_a_contradicting_note_contests_a_belief(session, model, tmp_path) -> None:
    session.reflect()
    model.beliefs = []
    model.rules = [
        Rule("with Ines", "stopped running", "contradicts", "Ines has stopped running with me")
    ]
    later = note(
        tmp_path / "later",
        "2026-11-29.md",
        "2026-11-29",
        "Running alone",
        "Ines has stopped running with me since her injury. I run alone now, early, before work.",
    )
    session.ingest([later])
    report = session.reflect()
    assert report.contested == 1
    belief = derived(session)[RUN.statement]
    assert belief.status == "contested" and belief.confidence == pytest.approx(0.48)
    detail = session.call(ShowBelief(belief.id))
    against = [e for e in detail.evidence if e.stance == "contradicts"]
    assert [(e.quote, e.title) for e in against] == [
        ("Ines has stopped running with me", "Running alone")
    ]
    assert detail.changes[-1].action == "contested" and "Running alone" in (
        detail.changes[-1].reason or ""
    )


def test_a_record_outweighs_self_report(session, model, tmp_path) -> None:
    model.beliefs = [
        Scripted("eight hours", "I sleep eight hours a night", "I sleep eight hours most nights")
    ]
    model.rules = [Rule("eight hours", "Slept 5h42m", "contradicts", "Slept 5h42m")]
    session.ingest(
        [
            note(
                tmp_path / "n",
                "2026-11-22.md",
                "2026-11-22",
                "Rested",
                "I sleep eight hours most nights now.",
            )
        ]
    )
    session.reflect()
    belief = derived(session)["I sleep eight hours a night"]
    assert belief.status == "contested" and belief.confidence == pytest.approx(0.3)  # 0.6 × 0.5
    (link,) = session.call(ShowBelief(belief.id)).links
    assert (link.kind, link.target_kind) == ("contradicts", "observation")
    assert "5h42m" in link.text
    # The person's own belief is never changed by sadie.
    stated = {b.statement: b for b in session.call(ListBeliefs(origin="stated"))}
    assert stated["I sleep seven hours most nights"].status == "contested"


def test_a_superseding_note_retires_a_belief_for_its_successor(session, model, tmp_path) -> None:
    model.beliefs = [
        Scripted("every fortnight", "I see Carla every fortnight", "I see Carla every fortnight"),
        Scripted("once a month", "I see Carla once a month", "I see Carla once a month"),
    ]
    model.rules = [Rule("once a month", "every fortnight", "replaces")]
    session.ingest(
        [
            note(
                tmp_path / "a",
                "2026-01-20.md",
                "2026-01-20",
                "Therapy",
                "I see Carla every fortnight, on Wednesdays.",
            )
        ]
    )
    session.reflect()
    session.ingest(
        [
            note(
                tmp_path / "b",
                "2026-11-25.md",
                "2026-11-25",
                "Carla",
                "From November I see Carla once a month, not every fortnight any more.",
            )
        ]
    )
    report = session.reflect()
    assert report.retired == 1 and report.new == 1
    found = derived(session)
    old, new = found["I see Carla every fortnight"], found["I see Carla once a month"]
    assert old.status == "retired" and new.status == "active"
    assert [(link.kind, link.target_id) for link in session.call(ShowBelief(old.id)).links] == [
        ("replaced_by", new.id)
    ]
    assert [(link.kind, link.target_id) for link in session.call(ShowBelief(new.id)).links] == [
        ("supersedes", old.id)
    ]


# -- the person decides ---------------------------------------------------------------------


def test_accept_reject_and_edit_survive_re_runs(session, model, tmp_path) -> None:
    session.reflect()
    found = derived(session)
    run, worry, slow = found[RUN.statement], found[WORRY.statement], found[SLOW.statement]
    assert session.call(AcceptBelief(run.id[:6])).belief.status == "accepted"
    session.call(RejectBelief(worry.id, reason="not me"))
    edited = session.call(EditBelief(slow.id, "I take my time shipping"))
    assert edited.belief.status == "accepted" and len(edited.evidence) == 1
    # The model proposes all three again, a paraphrase of the rejected one, and a note
    # contradicts the accepted one: nothing the person decided moves.
    model.beliefs = [
        RUN,
        WORRY,
        SLOW,
        Scripted(
            "promotion",
            "I keep worrying about my promotion",
            "the promotion conversation with Marta",
        ),
    ]
    model.rules = [Rule("with Ines", "stopped", "contradicts", "Ines has stopped running with me")]
    session.ingest(
        [
            note(
                tmp_path / "c",
                "2026-11-29.md",
                "2026-11-29",
                "Alone",
                "Ines has stopped running with me.",
            )
        ]
    )
    report = session.reflect(ReflectJob(everything=True))
    assert report.new == 0 and report.rejected_before == 2
    after = {b.id: b for b in session.call(ListBeliefs(origin="derived"))}
    assert len(after) == 3
    assert after[run.id].status == "accepted"
    assert after[worry.id].status == "rejected"
    assert (after[slow.id].status, after[slow.id].statement) == (
        "accepted",
        "I take my time shipping",
    )
    history = [c.action for c in session.call(ShowBelief(slow.id)).changes]
    assert history == ["proposed", "edited"]
    with pytest.raises(UsageError, match="beliefs.jsonl"):
        session.call(RejectBelief(session.call(ListBeliefs(origin="stated"))[0].id))


# -- what the rest of sadie sees -------------------------------------------------------------


def test_the_belief_channel_returns_derived_beliefs(session, model) -> None:
    from sadie_tui.engine.retrieval import retrieve
    from sadie_tui.engine.turns.steps import persona_for

    session.reflect()
    worry = derived(session)[WORRY.statement]
    analyst = persona_for("analyst", "analyst")
    found = retrieve(session.memory, "am I worried about the promotion?", analyst)
    assert WORRY.statement in [b.statement for b in found.beliefs]
    session.call(RejectBelief(worry.id))
    found = retrieve(session.memory, "am I worried about the promotion?", analyst)
    assert WORRY.statement not in [b.statement for b in found.beliefs]


def test_reflect_needs_a_model(memory_home: Path, embedder) -> None:
    offline = Session.open(memory_home, Settings(reasoner="offline"))
    try:
        with pytest.raises(ModelUnreachable, match="needs a model"):
            offline.reflect()
    finally:
        offline.close()


# -- batches, budget, resuming --------------------------------------------------------------


def test_a_stop_cancels_the_batch_in_flight(session, model, server) -> None:
    """Stopped while the model is still answering: the request is dropped at once, nothing of
    the batch is kept or counted, and its notes wait for the next run."""
    import threading

    asked = threading.Event()
    stop = threading.Event()

    def slow(body: dict) -> Reply:
        asked.set()
        return Reply(content="{}", delay=600.0)  # would answer in ten minutes

    server.responder = slow
    done: list = []
    runner = threading.Thread(
        target=lambda: done.append(session.reflect(ReflectJob(stop=stop.is_set)))
    )
    runner.start()
    assert asked.wait(60)
    stop.set()
    runner.join(60)
    assert not runner.is_alive(), "the stop did not cancel the request in flight"
    (report,) = done
    assert report.stopped == "stopped" and report.batches == 0 and report.new == 0
    assert report.episodes == 0 and report.left > 0
    server.responder = model
    again = session.reflect()
    assert again.new == 3 and again.left == 0


def small_context(home: Path, tmp_home: Path, server) -> Session:  # type: ignore[no-untyped-def]
    shutil.copytree(home, tmp_home)
    return Session.open(tmp_home, Settings(ollama_host=server.url, reasoner="ollama", num_ctx=2048))


def test_budget_stops_between_batches(many_home, tmp_home, server, model) -> None:
    session = small_context(many_home, tmp_home, server)
    try:
        first = session.reflect(ReflectJob(budget_minutes=1e-6))
        assert first.stopped == "budget" and first.batches == 0 and first.left == 15
        committed: list[int] = []  # progress is told after each batch is committed

        def told(stage: str, done: int, total: int) -> None:
            if stage == "reflecting" and done:
                committed.append(done)

        stopped = session.reflect(ReflectJob(progress=told, stop=lambda: bool(committed)))
        assert stopped.stopped == "stopped" and stopped.batches == 1
        assert 0 < stopped.left < 15
        rest = session.reflect()
        assert rest.stopped is None and rest.left == 0
        assert stopped.episodes + rest.episodes == 15
    finally:
        session.close()


def test_a_changed_note_waits_for_reflection_again(session, model, tmp_path) -> None:
    path = note(
        tmp_path / "n", "2026-11-27.md", "2026-11-27", "Garden", "The basil is dying again."
    )
    session.ingest([path])
    assert session.reflect().episodes == 7  # the six notes and this one
    assert session.reflect().batches == 0
    note(tmp_path / "n", "2026-11-27.md", "2026-11-27", "Garden", "The basil survived after all.")
    session.ingest([path])
    again = session.reflect()
    assert (again.episodes, again.left) == (1, 0)


def test_an_older_memory_keeps_its_beliefs_as_stated(tmp_path: Path) -> None:
    import duckdb

    from sadie_tui.engine.reflect.views import list_beliefs
    from sadie_tui.engine.store.db import Database, vss_extension_path
    from sadie_tui.engine.store.migrations import MIGRATIONS, applied

    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(f"LOAD '{vss_extension_path()}'")
    con.execute("SET hnsw_enable_experimental_persistence = true")
    old = Database(con, path, read_only=False)
    applied(old)
    for name, fn in MIGRATIONS[:6]:
        fn(old)
        old.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])
    old.execute(
        "INSERT INTO beliefs VALUES (gen_random_uuid(), 'I like tea', 'active', 0.7, [], 'b#1', NULL)"
    )
    old.close()
    with Database.open(path) as db:
        (belief,) = list_beliefs(db)
        assert (belief.statement, belief.origin, belief.status) == (
            "I like tea",
            "stated",
            "active",
        )


def test_an_unreadable_answer_and_a_timeout(session, model, server, memory_home, tmp_path) -> None:
    server.queue(NO_QUESTIONS, Reply("I think you like running."))
    unreadable = session.reflect()
    assert (unreadable.unusable, unreadable.new, unreadable.left) == (1, 0, 0)  # read, and done
    session.close()
    impatient = Session.open(
        memory_home,
        Settings(ollama_host=server.url, reasoner="ollama", first_token_timeout=1.0),
    )
    try:
        impatient.ingest(
            [note(tmp_path / "t", "2026-11-30.md", "2026-11-30", "Late", "Ran 18 km.")]
        )
        server.queue(Reply("{}", stall_after=0, stall_seconds=30))
        late = impatient.reflect()
        # The batch in flight timed out: nothing of it is kept, and it waits for the next run.
        assert (late.failed, late.episodes, late.new, late.left) == (1, 0, 0, 1)
        assert derived(impatient) == {}
    finally:
        impatient.close()


def test_an_older_note_does_not_contest_a_newer_belief_it_retires_the_old_one(
    session, model, tmp_path
) -> None:
    model.beliefs = [
        Scripted("whole family", "I love cooking for my family", "I love cooking for my family"),
        Scripted(
            "any more",
            "I don't love cooking for my family any more",
            "I don't love cooking for my family any more",
        ),
    ]
    model.rules = [
        # The model calls the old note a contradiction of the new belief, and the old belief
        # unrelated: the dates decide what that means.
        Rule(
            "any more", "Cooked for the whole family", "contradicts", "I love cooking for my family"
        ),
    ]
    feb = note(
        tmp_path / "a",
        "2026-02-08.md",
        "2026-02-08",
        "Sunday lunch",
        "Cooked for the whole family. I love cooking for my family.",
    )
    session.ingest([feb])
    session.reflect()
    apr = note(
        tmp_path / "b",
        "2026-04-26.md",
        "2026-04-26",
        "Sunday at Inês's",
        "Inês cooks now and I don't love cooking for my family any more; it became a chore.",
    )
    session.ingest([apr])
    report = session.reflect()
    found = derived(session)
    old, new = (
        found["I love cooking for my family"],
        found["I don't love cooking for my family any more"],
    )
    assert (old.status, new.status) == ("retired", "active")
    assert report.contested == 0 and report.retired == 1
    assert [(link.kind, link.target_id) for link in session.call(ShowBelief(old.id)).links] == [
        ("replaced_by", new.id)
    ]


def test_a_quote_about_something_else_backs_nothing(session, model) -> None:
    # A real sentence of a real note, about something else: the belief has no evidence left.
    model.beliefs = [
        Scripted(
            "promotion",
            "I do my best work in the mornings",
            "which is what she said last spring too",
        )
    ]
    report = session.reflect()
    assert (report.new, report.dropped) == (0, 1)
    assert report.quotes_dropped == {"unrelated to the belief": 1}


def test_two_beliefs_from_different_dates_the_newer_wins(session, model, tmp_path) -> None:
    model.beliefs = [
        Scripted(
            "municipal pool", "I swim twice a week", "I swim at the municipal pool twice a week"
        ),
        Scripted("stopped", "I have stopped swimming", "I have stopped swimming"),
    ]
    # The model calls them a contradiction: by their notes' dates, the newer replaces.
    model.rules = [Rule("stopped swimming", "swim twice a week", "contradicts")]
    jan = note(
        tmp_path / "a",
        "2026-01-05.md",
        "2026-01-05",
        "Swim",
        "I swim at the municipal pool twice a week.",
    )
    session.ingest([jan])
    session.reflect()
    apr = note(
        tmp_path / "b",
        "2026-04-15.md",
        "2026-04-15",
        "No swimming",
        "The shifts changed. I have stopped swimming.",
    )
    session.ingest([apr])
    session.reflect()
    found = derived(session)
    assert found["I swim twice a week"].status == "retired"
    assert found["I have stopped swimming"].status == "active"


def test_counter_evidence_must_be_the_notes_words_not_the_beliefs(session, model, tmp_path) -> None:
    model.beliefs = [RUN]
    model.rules = [
        # A small model "quotes" the belief itself, or words the note does not hold.
        Rule("with Ines", "rain or shine", "contradicts", RUN.statement),
        Rule("with Ines", "again this weekend", "contradicts", "I ran with Ines on weekends"),
    ]
    weekend = note(
        tmp_path / "w",
        "2026-11-23.md",
        "2026-11-23",
        "Weekend",
        "I run with Ines on weekends, rain or shine, and the river is always there.",
    )
    sunday = note(
        tmp_path / "w",
        "2026-11-24.md",
        "2026-11-24",
        "Sunday",
        "Ran by the river with Ines again this weekend.",
    )
    session.ingest([weekend, sunday])
    report = session.reflect()
    assert report.contested == 0 and report.judged == 1
    assert report.set_aside == {"quoting the belief itself": 1, "without the note's words": 1}
    assert derived(session)[RUN.statement].status == "active"
