"""Support means the claim (issue 33): a verbatim quote that shares words with the answer is
not support by itself. Each class of wrong answer seen with a real 1.5B model, scripted
through the project's Ollama-protocol server, gets its doubt before the answer and a score
that says so; a right answer keeps its full score."""

from __future__ import annotations

import asyncio
import json
import shutil
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from sadie_tui.config import load_settings
from sadie_tui.engine.events import CitationsEvent
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.reply.citations import grade, note_span
from sadie_tui.engine.reply.claims import Note, asked, judge
from sadie_tui.engine.session import Session
from tests.conftest import write_notes
from tests.support.ollama_server import Reply
from tests.support.serve import running
from tests.support.turns import run_chat
from tests.test_ask import _cli

CLAIM_NOTES = {
    "journal/2026-04-30.md": (
        "---\ntitle: April money\ndate: 2026-04-30\n---\n"
        "Paid the rent and the gym. For April, I saved 180 euros for the kiln."
    ),
    "journal/2026-11-15.md": (
        "---\ntitle: Jar count\ndate: 2026-11-15\n---\n"
        "Counted the jar again. So far saved 420 euros for the kiln. Glazes are next."
    ),
    "journal/2026-05-02.md": (
        "---\ntitle: One to one with Carla\ndate: 2026-05-02\n---\n"
        "Carla said the transfer to Porto is approved for September."
    ),
    "journal/2026-06-10.md": (
        "---\ntitle: Team lunch\ndate: 2026-06-10\n---\n"
        "Carla said the new coffee machine on the third floor is terrible."
    ),
    "journal/2026-07-03.md": (
        "---\ntitle: Choir\ndate: 2026-07-03\n---\n"
        "Left the choir after the summer concert. Sang the Fauré one last time."
    ),
    "journal/2026-09-14.md": (
        "---\ntitle: Long letter\ndate: 2026-09-14\n---\n"
        + "The allotment tomatoes split after the storm and the beans climbed the fence. " * 12
        + "\n\n"
        + "In the kitchen the bread was a project of its own that week. " * 12
        + "The sourdough finally rose on Sunday."
    ),
    "journal/2026-08-21.md": (
        "---\ntitle: Hospital job\ndate: 2026-08-21\n---\n"
        "I am unhappy with my job at the hospital, and I dislike my manager Bruna."
    ),
}


@pytest.fixture(scope="module")
def claims_home(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    notes = write_notes(tmp_path_factory.mktemp("claim-notes"), CLAIM_NOTES)
    home = tmp_path_factory.mktemp("claims") / "home"
    with Memory.open(home, embedder=embedder) as memory:
        memory.ingest([notes])
    return home


@pytest.fixture
def claims_memory(claims_home: Path, tmp_home: Path, embedder):
    shutil.copytree(claims_home, tmp_home)
    with Memory.open(tmp_home, embedder=embedder) as memory:
        yield memory


def episode(memory: Memory, title: str) -> str:
    return memory.db.fetchone("SELECT id::VARCHAR FROM episodes WHERE title = ?", [title])[0]


def reply(text: str, *cites: tuple[str, str]) -> Reply:
    tail = [{"episode": ep, "quote": q, "support": "verbatim"} for ep, q in cites]
    return Reply(f"{text}\n@@CITATIONS@@\n{json.dumps(tail)}")


def ask(memory: Memory, question: str):
    return asyncio.run(Session(memory, load_settings()).ask(question))


DOUBT = "Your notes don't say this directly."


def assert_doubted(result) -> None:
    assert result.answer.startswith(DOUBT), result.answer
    assert result.grounding["score"] <= 0.5 and result.grounding["doubt"].startswith(DOUBT)
    assert any(c.doubt for c in result.citations)


# -- the classes, end to end through the scripted model ------------------------------------


def test_a_quote_sharing_only_a_name_does_not_back_the_answer(server, claims_memory):
    lunch = episode(claims_memory, "Team lunch")
    wrong = (
        "Carla said your transfer to Lisbon was refused.",
        (lunch, "Carla said the new coffee machine on the third floor is terrible"),
    )
    server.queue(reply(*wrong), reply(*wrong))  # the draft, and its revision (no better)
    result = ask(claims_memory, "What did Carla say about my transfer?")
    assert_doubted(result)
    # The closest the notes come is the sentence that does answer it.
    assert "approved for September" in result.answer


def test_a_stale_figure_for_a_past_month_does_not_answer_now(server, claims_memory):
    april = episode(claims_memory, "April money")
    server.queue(
        reply(
            "You have saved 180 euros for the kiln.",
            (april, "For April, I saved 180 euros for the kiln."),
        )
    )
    result = ask(claims_memory, "How much have I saved for the kiln?")
    assert_doubted(result)
    (cited,) = result.citations
    assert cited.support == "verbatim" and "April" in cited.doubt
    assert "So far saved 420 euros for the kiln." in result.answer


def test_a_right_quote_then_the_notes_do_not_say_is_answered_from_the_quote(server, claims_memory):
    fund = episode(claims_memory, "Jar count")
    server.queue(
        reply(
            "The notes do not say how much you have saved for the kiln.",
            (fund, "So far saved 420 euros for the kiln."),
        )
    )
    result = ask(claims_memory, "How much have I saved for the kiln?")
    assert not result.abstained
    assert "So far saved 420 euros for the kiln." in result.answer
    assert "do not say" not in result.answer
    assert result.grounding["score"] == 1.0 and not result.grounding["doubt"]


def test_a_reason_made_up_around_a_real_event_is_doubted(server, claims_memory):
    choir = episode(claims_memory, "Choir")
    server.queue(
        reply(
            "You left the choir because the rehearsals clashed with your night shifts.",
            (choir, "Left the choir after the summer concert."),
        )
    )
    result = ask(claims_memory, "Why did I leave the choir?")
    assert_doubted(result)
    assert "does not give this reason" in result.citations[0].doubt


def test_a_quote_cut_mid_word_is_not_verbatim_and_not_support(server, claims_memory):
    job = episode(claims_memory, "Hospital job")
    server.queue(
        reply(
            "You are happy with your job at the hospital, and you like your manager Bruna.",
            (job, "happy with my job at the hospital"),
            (job, "like my manager Bruna"),
        )
    )
    result = ask(claims_memory, "How do I feel about my job at the hospital?")
    assert all(c.support != "verbatim" for c in result.citations)
    assert result.grounding["score"] < 0.9
    assert result.answer.startswith(DOUBT)


def test_the_right_person_on_another_day_is_doubted(server, claims_memory):
    lunch = episode(claims_memory, "Team lunch")
    server.queue(
        reply(
            "In May, Carla said the coffee machine on the third floor is terrible.",
            (lunch, "Carla said the new coffee machine on the third floor is terrible."),
        )
    )
    result = ask(claims_memory, "What did Carla tell me in May 2026?")
    assert_doubted(result)
    assert "2026-06-10" in result.citations[0].doubt


def test_an_uncited_first_answer_before_a_true_quote_is_doubted(server, claims_memory):
    # "Kyoto guesthouse garden." then a true, cited sentence about crying there: the answer
    # is the first sentence, and nothing quoted says it.
    choir = episode(claims_memory, "Choir")
    made_up = reply(
        "The Brahms Requiem. You left the choir after the summer concert.",
        (choir, "Left the choir after the summer concert."),
    )
    server.queue(made_up, made_up)  # the draft, and its revision (no better)
    result = ask(claims_memory, "Which piece did I sing at my last choir concert?")
    assert result.answer.startswith(DOUBT), result.answer
    assert "The Brahms Requiem." in result.answer  # shown, after the doubt
    assert result.grounding["doubt"].startswith(DOUBT)


def test_an_uncited_first_answer_that_the_quote_says_is_not_doubted(server, claims_memory):
    choir = episode(claims_memory, "Choir")
    answer = "It was the Fauré. You sang the Fauré one last time, then left the choir."
    server.queue(reply(answer, (choir, "Sang the Fauré one last time.")))
    result = ask(claims_memory, "Which piece did I sing at my last choir concert?")
    assert result.answer == answer and not result.grounding["doubt"]


def test_a_right_answer_keeps_its_full_score(server, claims_memory):
    fund = episode(claims_memory, "Jar count")
    server.queue(
        reply(
            "You have saved 420 euros for the kiln so far.",
            (fund, "So far saved 420 euros for the kiln."),
        )
    )
    result = ask(claims_memory, "How much have I saved for the kiln?")
    assert result.answer == "You have saved 420 euros for the kiln so far."
    assert result.grounding["score"] == 1.0 and not result.grounding["doubt"]
    assert [c.doubt for c in result.citations] == [""]


def test_chat_shows_the_doubt_before_the_reply(server, claims_memory):
    choir = episode(claims_memory, "Choir")
    text = "You left the choir because the rehearsals clashed with your night shifts."
    server.queue(reply(text, (choir, "Left the choir after the summer concert.")))
    events = run_chat(Session(claims_memory, load_settings()), "Why did I leave the choir?")
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert cites.value[0].doubt
    kept = next(e for e in events if e.type == "replace")
    assert kept.value.startswith(DOUBT) and kept.value.endswith(text)
    stored = claims_memory.db.fetchone(
        "SELECT content, metadata FROM messages WHERE role = 'assistant'"
    )
    assert stored[0] == kept.value and json.loads(stored[1])["doubt"].startswith(DOUBT)


# -- the rules, pure --------------------------------------------------------------------------

TODAY = datetime(2026, 12, 5)


def note(text: str, date: str = "2026-11-15", title: str = "A note") -> Note:
    return Note("e1", date, title, (text,))


@pytest.mark.parametrize(
    ("quote", "text", "verbatim"),
    [
        ("happy with my job", "I am unhappy with my job.", False),
        ("like my manager", "I dislike my manager.", False),
        ("t like Mondays", "I don't like Mondays.", False),
        ("unhappy with my job", "I am unhappy with my job.", True),
        ("like Mondays", "I don't like Mondays.", True),
        ("job.", "I am unhappy with my job.", True),
        ("420 euros", "saved 420 euros", True),
        ("20 euros", "saved 420 euros", False),
    ],
)
def test_verbatim_holds_on_word_boundaries_only(quote, text, verbatim):
    assert (grade("verbatim", quote, [text]) == "verbatim") is verbatim
    assert (note_span(quote, [text]) is not None) is verbatim


def test_a_quote_cut_out_of_a_negated_sentence_says_the_opposite():
    q = asked("Do I like Mondays?", TODAY)
    verdict = judge(q, "You like Mondays.", "like Mondays", note("I don't like Mondays."))
    assert not verdict.ok and "opposite" in verdict.reason
    kept = judge(q, "You don't like Mondays.", "like Mondays", note("I don't like Mondays."))
    assert kept.ok


def test_a_person_the_question_names_must_be_in_the_note():
    q = asked("What did Mum say about the chutney?", TODAY)
    assert [p.lower() for p in q.people] == ["mum"] and q.quotes
    verdict = judge(q, "She said it was Dad's.", "It was Dad's", note("It was Dad's chutney."))
    assert not verdict.ok and "mention" in verdict.reason
    assert judge(q, "She said it was Dad's.", "It was Dad's", note("Mum: it was Dad's.")).ok
    # What someone did may come from a record that does not name them.
    did = asked("Where did Tomás take me for dinner?", TODAY)
    assert judge(
        did,
        "He took you to Tasca da Esquina.",
        "Dinner at Tasca da Esquina",
        note("Dinner at Tasca da Esquina, two tasting menus."),
    ).ok


def test_the_question_decides_now_and_why():
    assert asked("How much have I saved for the kiln?", TODAY).now
    assert asked("What do I weigh these days?", TODAY).now
    assert not asked("How much had I saved in April?", TODAY).now
    assert asked("Why did I leave the choir?", TODAY).why
    assert not asked("When did I leave the choir?", TODAY).why


def test_offline_answers_now_with_the_newest_sentence_that_answers(claims_memory):
    # No model (OLLAMA_HOST is a closed port): sadie quotes the notes itself. "How much have
    # I saved" asks about now: the November figure, not April's.
    result = ask(claims_memory, "How much have I saved for the kiln?")
    assert result.offline
    first = result.citations[0]
    assert first.quote == "So far saved 420 euros for the kiln."
    assert result.answer.index("420 euros") < result.answer.find("180 euros") or (
        "180 euros" not in result.answer
    )


def test_offline_picks_the_newest_answering_sentence_for_now_even_when_ranked_second():
    from sadie_tui.engine.prompt import Excerpt
    from sadie_tui.engine.reasoners.offline import pick_quotes

    april = Excerpt("a", "2026-04-30", "April money", CLAIM_NOTES["journal/2026-04-30.md"])
    november = Excerpt("b", "2026-11-15", "Jar count", "So far saved 420 euros for the kiln.")
    picked = pick_quotes([april, november], "How much have I saved for the kiln?")
    assert picked[0][1] == "So far saved 420 euros for the kiln."
    # A question about a named time keeps retrieval's order.
    then = pick_quotes([april, november], "How much had I saved for the kiln in April?")
    assert then[0][0] is april


# -- every face reads the doubt before the answer -------------------------------------------

MADE_UP = "You left the choir because the rehearsals clashed with your night shifts."


def test_every_face_shows_the_doubt_first(server, claims_memory, tmp_home: Path):
    choir = episode(claims_memory, "Choir")
    made_up = reply(MADE_UP, (choir, "Left the choir after the summer concert."))
    question = "Why did I leave the choir?"
    claims_memory.close()

    # `sadie --ask` (as a person reads it) and `sadie chat --ndjson` (as a script does).
    server.queue(made_up, made_up)
    host = {"OLLAMA_HOST": server.url}
    printed = _cli(tmp_home, "--ask", question, env_extra=host)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.lstrip().startswith(DOUBT)
    assert printed.stdout.index(DOUBT) < printed.stdout.index("rehearsals")
    server.queue(made_up)
    streamed = _cli(tmp_home, "chat", question, "--ndjson", env_extra=host)
    events = [json.loads(line) for line in streamed.stdout.splitlines()]
    (kept,) = [e for e in events if e["type"] == "replace"]
    assert kept["value"].startswith(DOUBT) and kept["value"].endswith(MADE_UP)
    (cites,) = [e for e in events if e["type"] == "citations"]
    assert cites["value"][0]["doubt"]

    # HTTP: /v1/ask's answer and the SSE chat's replace event.
    with Memory.open(tmp_home) as memory:
        session = Session(memory, load_settings())
        with running(session) as srv, httpx.Client(base_url=srv.url, timeout=60) as http:
            server.queue(made_up, made_up)
            answer = http.post("/v1/ask", json={"question": question}).json()
            assert answer["answer"].startswith(DOUBT) and answer["grounding"]["score"] <= 0.5
            server.queue(made_up)
            with http.stream("POST", "/v1/chat", json={"message": question}) as sse:
                body = sse.read().decode()
            assert "event: replace" in body and DOUBT in body


async def test_mcp_ask_memory_shows_the_doubt_first(server, claims_memory, tmp_home: Path):
    from tests.test_mcp import call, client

    choir = episode(claims_memory, "Choir")
    made_up = reply(MADE_UP, (choir, "Left the choir after the summer concert."))
    claims_memory.close()
    server.queue(made_up, made_up)
    async with client(tmp_home, tmp_home.parent / "mcp.err", OLLAMA_HOST=server.url) as mcp:
        failed, asked = await call(mcp, "ask_memory", question="Why did I leave the choir?")
    assert not failed
    assert asked["answer"].startswith(DOUBT) and asked["grounding"]["doubt"].startswith(DOUBT)


def test_offline_citations_back_the_line_that_quotes_them(memory):
    # Issue 34, item 5: each offline quote backs its own line ("On <date>, in “<title>”:
    # “…”"), and sadie's own framing there (the date, the title) is never "not in the note".
    result = ask(memory, "What did Ines do?")
    assert result.offline and len(result.citations) >= 2
    for c in result.citations:
        assert " ".join(c.quote.split()) in " ".join(c.backs.split())
        assert c.unbacked == ()


def test_a_quote_backs_the_sentence_that_quotes_it_word_for_word():
    from sadie_tui.engine.reply.backing import back
    from sadie_tui.engine.reply.citations import Citation, PolicedCitations

    reply = (
        "I've drunk coffee at night, at ten, my whole life of it, since 2026-03-01.\n"
        "On 2026-01-16, in “Commute sleep”: “I've drunk coffee at ten at night my whole life.”"
    )
    quote = "I've drunk coffee at ten at night my whole life."
    policed = PolicedCitations((Citation("e1", quote, "verbatim", "verbatim"),), (), None)
    backed = back(
        policed,
        reply,
        {"e1": [quote]},
        headers={"e1": ["episode e1 (2026-01-16) Commute sleep"]},
    )
    start, end = backed.sentences[0]
    assert reply[start:end].startswith("On 2026-01-16") and backed.unbacked == ((),)


def test_a_quote_from_a_part_of_the_note_not_shown_is_graded_by_the_whole_note(
    server, claims_memory
):
    # Issue 34 item 14: the model read the allotment passage; it quotes the note's last line,
    # which is really there, in a chunk it was not shown: verbatim, never "not in the note".
    letter = episode(claims_memory, "Long letter")
    server.queue(
        reply(
            "Your sourdough finally rose on Sunday.",
            (letter, "The sourdough finally rose on Sunday."),
        )
    )
    result = ask(claims_memory, "What happened to the allotment tomatoes?")
    assert [(c.episode_id, c.support) for c in result.citations] == [(letter, "verbatim")]
    assert result.grounding["dropped"] == 0


def test_one_name_beside_what_the_quote_says_doubts_the_citation_not_the_answer():
    from sadie_tui.engine.reply.claims import Judged, assess

    q = asked("What did we do over the long weekend in August?", TODAY)
    ericeira = note(
        "Two surf lessons at Ribeira d'Ilhas, a surf guesthouse in Ribamar.", "2026-08-15"
    )
    sentence = "You took two surf lessons at Ribeira d'Ilhas with Tomás."
    verdict = judge(q, sentence, "Two surf lessons at Ribeira d'Ilhas", ericeira)
    assert not verdict.ok and verdict.minor and "Tomás" in verdict.reason
    judged = [Judged((0, len(sentence)), "e1", "Two surf lessons", "verbatim", verdict)]
    assert assess(q, sentence, judged, [ericeira]).doubt == ""
    # A sentence whose words are not the quote's is doubted whole.
    other = "You sailed to Porto with Tomás."
    wrong = judge(q, other, "Two surf lessons at Ribeira d'Ilhas", ericeira)
    assert not wrong.ok and not wrong.minor


def test_close_in_meaning_but_not_one_answer_word_of_the_quote_is_not_support():
    # The embedding model finds "a big moment for Lena" near "Lena said in front of
    # everyone …": the same topic, another claim (how it felt is not in the quote).
    q = asked("How did it feel when Lena backed the design in front of everyone?", TODAY)
    said = note("In the postmortem, Lena said in front of everyone that the design was right.")
    quote = "Lena said in front of everyone that the design was right."
    near = lambda a, b: 0.9  # noqa: E731
    felt = "It was a significant moment, the first time anyone publicly supported it."
    verdict = judge(q, felt, quote, said, near=near)
    assert not verdict.ok and "does not say" in verdict.reason
    # Other words for what the quote says, with one of its own: still support.
    assert judge(q, "She told the postmortem it was right, openly.", quote, said, near=near).ok


def test_a_now_answer_is_stale_against_a_newer_note_retrieved_but_not_read():
    # A small model reads four passages; retrieval found more. The quote is the March
    # figure, with no "for March" in it to give it away; a November note retrieval found
    # (not among the passages read) speaks to the question: the answer is doubted, and the
    # closest line is the newer sentence.
    march = _excerpt(6, "2026-03-02", "Kiln jar", "Counted the jar. Saved 100 euros for the kiln.")
    november = _excerpt(7, "2026-11-15", "Jar count", "So far saved 420 euros for the kiln.")
    question = "How much have I saved for the kiln?"
    text = "You have saved 100 euros for the kiln."
    quote = [(march, "Saved 100 euros for the kiln.")]
    stale = _settled(question, text, quote, [march], [november])
    assert stale.doubt.startswith(DOUBT) and "420 euros" in stale.doubt
    assert "newer note (2026-11-15, Jar count)" in stale.policed.citations[0].doubt
    # With nothing newer found, the same quote answers "now".
    alone = _settled(question, text, quote, [march])
    assert alone.doubt == "" and alone.policed.citations[0].doubt == ""


def test_the_persons_own_name_for_you_is_not_a_detail_missing_from_the_note():
    # A small model writes "you" as the name the soul summary opens with; no note of theirs
    # need hold it. Another name beside the answer still is checked.
    fee = _excerpt(
        8,
        "2026-01-13",
        "Lisbon Marathon registration",
        "Lisbon Marathon 2026 entry fee, €75.00, paid by card.",
    )
    question = "How much was the marathon entry fee?"
    quote = [(fee, "Lisbon Marathon 2026 entry fee, €75.00, paid by card.")]
    text = "The marathon entry fee for Maya Okafor was €75.00, paid by card."
    own = _settled(question, text, quote, [fee], person="Maya Okafor")
    assert own.doubt == "" and own.policed.citations[0].doubt == ""
    other = _settled(
        question, text.replace("Maya Okafor", "Ines"), quote, [fee], person="Maya Okafor"
    )
    assert "“Ines” is not in this note" in other.policed.citations[0].doubt


def test_a_part_of_a_total_does_not_answer_how_much_in_all():
    # Asked what was paid up front, the model gave one of the sums the quote adds up.
    paid = note(
        "Transfer to Maria de Lurdes Antunes: 2× €1,350 caução + €1,350 first month (June) "
        "= €4,050.",
        "2026-03-28",
    )
    quote = paid.texts[0]
    q = asked("How much did we pay up front for the new flat?", TODAY)
    part = judge(q, "We paid €1,350 upfront for the new flat.", quote, paid)
    assert not part.ok and part.reason == "this is part of a total: the note gives €4,050"
    assert judge(q, "You paid €4,050 up front.", quote, paid).ok
    # Asked for the part the sum names, the part answers.
    month = asked("How much was the first month's rent on the new flat?", TODAY)
    assert judge(month, "The first month was €1,350.", quote, paid).ok


def _settled(question, reply_text, cites, shown, unshown=(), people=(), person=""):
    """The reply checked as a turn checks it: the briefing, its citations policed, settled."""
    from sadie_tui.engine.prompt import build_briefing
    from sadie_tui.engine.reply.citations import police
    from sadie_tui.engine.reply.grounding import Grounded, settle

    briefing = build_briefing(
        message=question,
        excerpts=list(shown),
        unshown=list(unshown),
        people=list(people),
        person=person,
    )
    tail = json.dumps(
        [{"episode": e.episode_id, "quote": q, "support": "verbatim"} for e, q in cites]
    )
    grounded = Grounded(reply_text, police(tail, briefing.shown), "ok")
    settle(briefing, grounded)
    return grounded


def _excerpt(n, date, title, text):
    from sadie_tui.engine.prompt import Excerpt

    return Excerpt(f"{n:08x}-0000-0000-0000-000000000000", date, title, text)


HENRIK = _excerpt(
    1,
    "2026-02-24",
    "1:1 with Henrik",
    'Henrik said sorry, sort of: "sorry if it came across that way." The non-apology, classic '
    "edition. Still, I said the thing.",
)
KNEE = _excerpt(
    2,
    "2026-02-28",
    "The knee",
    "Long run with the group, eighteen kilometres. A sharp pain outside the left knee from 14 km.",
)


@pytest.mark.parametrize(
    "copied",
    [
        # Copied word for word from a shown note, about another matter: verbatim, and not
        # what was asked.
        "The non-apology, classic edition. Still, I said the thing.",
        # "I'm sorry …" reads as a reply that declines; copied from the note, it is checked
        # as any answer is.
        "I'm sorry if it came across that way. The non-apology, classic edition.",
    ],
    ids=["about-something-else", "an-apology-copied"],
)
def test_a_true_sentence_about_something_else_is_no_answer(copied):
    checked = _settled(
        "What went wrong on my long run?",
        copied,
        [(HENRIK, "The non-apology, classic edition.")],
        [HENRIK, KNEE],
    )
    # The closest line comes from the note that does speak to it.
    assert checked.doubt.startswith(DOUBT) and "(2026-02-28, The knee)" in checked.doubt


def test_how_much_is_how_it_asks_not_what_about():
    # "how much" is shared with the reply, the phone is not: the reply speaks to nothing asked.
    run = _excerpt(3, "2026-11-20", "Saturday", "I have a long run at seven. Early night.")
    phone = _excerpt(4, "2026-03-31", "Screen time", "Phone after 23:00: 58 min a night.")
    checked = _settled(
        "How much am I on my phone after 11pm these days?",
        "I'm not sure how much I spend on it, but I have a long run at seven.",
        [(run, "I have a long run at seven.")],
        [run, phone],
    )
    assert checked.doubt.startswith(DOUBT) and "(2026-03-31, Screen time)" in checked.doubt


def test_the_latest_session_is_found_by_its_notes_title():
    # "First monthly session." says little by itself; under its title "Therapy — Carla (first
    # monthly)" it is a newer session than the May note the answer quotes.
    may = _excerpt(
        3, "2026-05-21", "Therapy — Carla", "Talked about Ryoan-ji and the fourteen rocks."
    )
    november = _excerpt(
        4,
        "2026-11-05",
        "Therapy — Carla (first monthly)",
        "First monthly session. Reviewed the year.",
    )
    question = "What did Carla and I talk about in my most recent therapy session?"
    answer = "You and Carla talked about Ryoan-ji and the fourteen rocks."
    quote = [(may, "Talked about Ryoan-ji and the fourteen rocks.")]
    stale = _settled(question, answer, quote, [may], [november], people=["Carla"])
    assert stale.doubt.startswith(DOUBT)
    assert "newer note (2026-11-05" in stale.policed.citations[0].doubt
    # A newer note that only names Carla says nothing newer about the sessions.
    lunch = _excerpt(5, "2026-11-20", "Lunch", "Carla waved from the other table.")
    kept = _settled(question, answer, quote, [may], [lunch], people=["Carla"])
    assert kept.doubt == "" and kept.policed.citations[0].doubt == ""


def test_a_first_time_answer_is_doubted_by_an_older_note_retrieved_but_not_read():
    # "My first Saturday session", answered with the date of a June training plan made "after
    # the Saturday group run"; retrieval also found January's note titled "…, first Saturday",
    # which the model did not read.
    june = _excerpt(
        9,
        "2026-06-20",
        "Marathon block planning with Rui",
        "Attendees: Maya, Rui (after the Saturday group run, café in Campo Grande).",
    )
    january = _excerpt(
        10,
        "2026-01-10",
        "Maré Runners, first Saturday",
        "First session with Maré Runners. Met at 8am at the Jardim do Campo Grande.",
    )
    question = "When was my first Saturday session with the running club?"
    answer = "Your first Saturday session with the running club was on 20 June 2026."
    quote = [(june, "Attendees: Maya, Rui (after the Saturday group run, café in Campo Grande).")]
    early = _settled(question, answer, quote, [june], [january])
    assert early.doubt.startswith(DOUBT) and "(2026-01-10, Maré Runners" in early.doubt
    assert "older note (2026-01-10" in early.policed.citations[0].doubt
    # Asked for the last one, the older note changes nothing; nor does it without "first".
    for later in (
        "When did I last have a Saturday session with the running club?",
        "What did we plan after the Saturday session with the running club?",
    ):
        kept = _settled(later, answer, quote, [june], [january])
        assert "older note" not in kept.policed.citations[0].doubt
    # And for the last time, a newer note does what an older one does for the first.
    hills = _excerpt(
        11, "2026-11-28", "Maré Runners", "Saturday session with the club: hills in Monsanto."
    )
    last = _settled(
        "When did I last have a Saturday session with the running club?",
        "Your last Saturday session with the running club was on 10 January.",
        [(january, "First session with Maré Runners.")],
        [january],
        [hills],
    )
    assert "newer note (2026-11-28" in last.policed.citations[0].doubt


def test_the_same_person_on_another_occasion_is_doubted():
    # What Kofi said the day of the bathroom, answered with what he said over lunch in
    # November: verbatim, his name and "told" shared, another occasion.
    news = _excerpt(
        12,
        "2026-11-12",
        "Kofi's news",
        "Kofi told me over lunch, on the river steps, that he's moving back to Porto. Lena has "
        "agreed he'll work remotely.",
    )
    bathroom = _excerpt(
        13,
        "2026-03-31",
        "The bathroom on the second floor",
        "I cried in the second-floor bathroom at work today. When I came out Kofi was standing "
        'by the water cooler. He said "go home." He said "you\'re polishing a spoon."',
    )
    question = "What did Kofi tell me by the water cooler the day I cried in the bathroom at work?"
    wrong = _settled(
        question,
        "Kofi told me over lunch, on the river steps, that he's moving back to Porto.",
        [(news, "Kofi told me over lunch, on the river steps, that he's moving back to Porto.")],
        [news, bathroom],
        people=["Kofi"],
    )
    assert wrong.doubt.startswith(DOUBT)
    assert "another note (2026-03-31, The bathroom" in wrong.policed.citations[0].doubt
    right = _settled(
        question,
        "He told you to go home: you're polishing a spoon.",
        [(bathroom, 'He said "you\'re polishing a spoon."')],
        [news, bathroom],
        people=["Kofi"],
    )
    assert right.doubt == "" and right.policed.citations[0].doubt == ""
    # Asked only what Kofi said, any note of his words may answer.
    said = _settled(
        "What did Kofi tell me?",
        "Kofi told me over lunch, on the river steps, that he's moving back to Porto.",
        [(news, "Kofi told me over lunch, on the river steps, that he's moving back to Porto.")],
        [news, bathroom],
        people=["Kofi"],
    )
    assert "another note" not in said.policed.citations[0].doubt


def test_a_when_answer_says_when_in_its_notes_words():
    # "The day before the race" is nowhere in the note it cites (a breakfast in October);
    # the note's date, a day it names, or the month of its date say when.
    dog = note(
        "Tomás showed me, over breakfast, the Instagram of a shelter. Less busy after the race.",
        date="2026-10-05",
    )
    quote = "Tomás showed me, over breakfast, the Instagram of a shelter."
    q = asked("When did Tomás first show me Bolacha?", TODAY, ["Tomás", "Bolacha"])
    made_up = judge(q, "Tomás showed you Bolacha the day before the race.", quote, dog)
    assert not made_up.ok and "does not say when" in made_up.reason
    assert judge(q, "Tomás showed you Bolacha over breakfast on 5 October.", quote, dog).ok
    assert judge(q, "He showed you her in October, over breakfast.", quote, dog).ok
    unsaid = judge(q, "Tomás showed you Bolacha over breakfast.", quote, dog)
    assert not unsaid.ok and unsaid.reason == "this does not say when"
    # Not asked when: no time is wanted.
    how = asked("How did Tomás show me Bolacha?", TODAY, ["Tomás", "Bolacha"])
    assert judge(how, "Tomás showed you Bolacha over breakfast.", quote, dog).ok


def test_a_later_mention_is_not_a_later_time():
    # A year's review mentions the dentist; the visit itself is the December record.
    visit = _excerpt(14, "2025-12-16", "Dentist", "Dentist, Clínica Dentária Arroios. Cleaning.")
    review = _excerpt(
        15, "2025-12-31", "The year, honestly", "Teeth ground down, the dentist said."
    )
    kept = _settled(
        "When did I last go to the dentist?",
        "You last went to the dentist on 16 December 2025.",
        [(visit, "Dentist, Clínica Dentária Arroios.")],
        [visit],
        [review],
    )
    assert kept.doubt == "" and kept.policed.citations[0].doubt == ""


def test_words_quoted_across_sentence_ends_are_one_sentence():
    # 'Callum posted "All ok.' alone was the answer's first sentence, and no quote backed it.
    night = _excerpt(
        16,
        "2026-07-15",
        "The night Ife was born",
        "Callum's first message to the family WhatsApp, sent at 23:58: \"All ok. Both sleeping. "
        'I have eaten a second banana."',
    )
    checked = _settled(
        "What did Callum post in the family WhatsApp the night Ife was born?",
        'Callum posted "All ok. Both sleeping. I have eaten a second banana." at 23:58.',
        [(night, "Callum's first message to the family WhatsApp, sent at 23:58")],
        [night],
        people=["Callum"],
    )
    assert checked.doubt == ""


def test_the_other_side_of_the_event_asked_about_is_doubted():
    # "The evening before the marathon", answered from a note of four days after it.
    hollow = _excerpt(
        8, "2026-10-15", "Post-race hollow", "Four days after the marathon and I feel hollow."
    )
    quote = [(hollow, "Four days after the marathon and I feel hollow.")]
    before = _settled(
        "How was I feeling the evening before the marathon?", "You felt hollow.", quote, [hollow]
    )
    assert before.doubt.startswith(DOUBT)
    assert "after the marathon, not before it" in before.policed.citations[0].doubt
    after = _settled("How was I feeling after the marathon?", "You felt hollow.", quote, [hollow])
    assert after.doubt == "" and after.policed.citations[0].doubt == ""


def test_a_who_is_answer_from_the_wiki_page_sadie_added_is_not_doubted(server, memory):
    # The page is no episode to cite; the answer's words and details are the page's.
    race = memory.db.fetchone("SELECT id::VARCHAR FROM episodes WHERE title = 'Race day'")[0]
    answer = "Ines is your partner, and she runs with you on weekends."
    server.queue(reply(answer, (race, "Ines was there with a sign.")))
    result = ask(memory, "Who is Ines?")
    assert result.answer == answer and not result.grounding["doubt"]
    briefing = server.requests[0]["messages"][0]["content"]
    assert "soul summary" not in briefing  # the person's own profile is no answer to it


def test_a_plan_does_not_establish_that_it_happened():
    # Asked when she actually came home, the model quoted the note that said she would.
    approved = note(
        "Patas do Tejo called: we're approved. She comes home on Saturday. I cried in the car.",
        "2026-11-24",
        "Approved",
    )
    quote = "She comes home on Saturday."
    came = asked("When did Bolacha actually come home with us?", TODAY, ["Bolacha"])
    verdict = judge(came, "Bolacha came home with us on Saturday.", quote, approved)
    assert not verdict.ok and verdict.reason == "the note says it was to happen, not that it did"
    # "She'll take us to …" is a plan too.
    osaka = note(
        "Hana is in Osaka next week. She says she'll take us to a place that makes okonomiyaki "
        '"the correct way".',
        "2026-05-09",
    )
    took = asked("Where did Hana take us for okonomiyaki in Osaka?", TODAY, ["Hana"])
    plan = 'She says she\'ll take us to a place that makes okonomiyaki "the correct way".'
    assert not judge(took, "Hana took us to a place that makes okonomiyaki.", plan, osaka).ok
    # Asked about the plan, or answered as a plan, the plan establishes it.
    when = asked("When was Bolacha going to come home?", TODAY, ["Bolacha"])
    assert judge(when, "Bolacha was to come home on Saturday.", quote, approved).ok
    assert judge(came, "The note says she comes home on Saturday.", quote, approved).ok
    # A plan of something else beside the answer is no plan of it.
    one_to_one = note("Attendees: Maya, Henrik - Committee tomorrow.", "2026-11-17", "1:1")
    latest = asked("When was my latest one-to-one with Henrik?", TODAY, ["Henrik"])
    quoted = "Attendees: Maya, Henrik - Committee tomorrow."
    assert judge(
        latest, "I had my latest one-to-one with Henrik on 2026-11-17.", quoted, one_to_one
    ).ok
    # What happened, said as done, is not a plan.
    home = note("She's home. Bolacha came home at eleven on Saturday.", "2026-11-28", "Home")
    assert judge(
        came, "Bolacha came home on Saturday.", "Bolacha came home at eleven on Saturday.", home
    ).ok


def test_another_of_the_same_kind_does_not_establish_the_one_asked():
    # Asked for the halfway split, the model gave the 30k split from the race record.
    record = note(
        "Lisbon Marathon 2026, bib 3417. Chip time 4:07:33 (avg 5:52/km). Half split 1:59:40. "
        "30k split 2:51:05. Wall at ~35 km.",
        "2026-10-11",
        "Lisbon Marathon — official result",
    )
    halfway = asked("What was my halfway split in the marathon?", TODAY)
    verdict = judge(halfway, "My halfway split was 2:51:05.", "30k split 2:51:05.", record)
    assert not verdict.ok
    assert verdict.reason == (
        "the note speaks of “30k split”, not “halfway split”: another of the same kind"
    )
    # The half split is the halfway one ("half" and "halfway" say the same).
    assert judge(halfway, "My halfway split was 1:59:40.", "Half split 1:59:40.", record).ok
    # The first of two cutovers, for the second: the kind is a word or two after "second".
    cutover = note(
        "The first cutover was a mess: we rolled back at 3am. Everyone got logged out.",
        "2026-04-14",
        "Cutover, take one",
    )
    second = asked("When was the second Warden cutover, the one that worked?", TODAY)
    verdict = judge(
        second,
        "The second Warden cutover was on 14 April.",
        "The first cutover was a mess: we rolled back at 3am.",
        cutover,
    )
    assert verdict.reason == (
        "the note speaks of “first cutover”, not “second Warden cutover”: another of the same kind"
    )
    # A question that names no which-one, or a quote that names none, is not held to it.
    split = asked("What was my 30k split?", TODAY)
    assert judge(split, "Your 30k split was 2:51:05.", "30k split 2:51:05.", record).ok
    chip = asked("What was my chip time in the marathon?", TODAY)
    quote = "Chip time 4:07:33 (avg 5:52/km)."
    assert judge(chip, "My chip time was 4:07:33.", quote, record).ok
    # A question naming two of the kind compares them: a quote about either may answer it.
    both = asked("Why was the second cutover at ten, instead of at 6am like the first?", TODAY)
    quote = "The first cutover was a mess: we rolled back at 3am."
    assert judge(both, "The first cutover was a mess, so the second was at ten.", quote, cutover).ok
    # "Next" is relative: the next cutover, after the first, may be the second.
    postmortem = note(
        "Cutover scheduled at Cascais shift change = worst possible traffic shape. "
        "Next cutover NOT at shift change: Tuesday 28 April, 10:30.",
        "2026-04-16",
        "Postmortem — Warden cutover 14 April",
    )
    when = asked("When was the second Warden cutover?", TODAY)
    quote = "Next cutover NOT at shift change: Tuesday 28 April, 10:30."
    assert judge(when, "The second cutover was on Tuesday 28 April.", quote, postmortem).ok
