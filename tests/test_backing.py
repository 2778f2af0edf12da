"""A citation backs the sentence it is attached to; evidence sadie finds counts; a refusal
is recognised. Pure: the texts are the demo memory's own (the Kyoto and Carla notes) and the
replies qwen2.5-coder:1.5b wrote about them."""

from __future__ import annotations

from pathlib import Path

from sadie_tui.engine.reply.backing import back, declines, evidence, sentence_spans
from sadie_tui.engine.reply.citations import police
from sadie_tui.engine.reply.unsupported import unsupported_within

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo" / "journal"
KYOTO_ID = "5a1d0c3e-1111-4222-8333-944455556666"
CARLA_ID = "7b2e1d4f-1111-4222-8333-944455556666"
SOUL = (
    "Maya lives in the Penha flat in Lisbon with Tomás; therapy with Carla (now monthly), "
    "and a first marathon in 4:07:33."
)


def _body(name: str) -> str:
    text = (DEMO / name).read_text(encoding="utf-8")
    return text.split("---", 2)[2].strip() if text.startswith("---") else text


KYOTO = _body("2026-05-09.md")
CARLA = _body("2026-07-02.md")
SHOWN = {KYOTO_ID: [KYOTO], CARLA_ID: [CARLA]}
HEADERS = {
    KYOTO_ID: ["episode 5a1d0c3e (2026-05-09) Rain day in Kyoto"],
    CARLA_ID: ["episode 7b2e1d4f (2026-07-02) Carla, and the baby"],
}


def _cite(episode: str, quote: str) -> str:
    return f'[{{"episode": "{episode}", "quote": "{quote}", "support": "verbatim"}}]'


def test_the_kyoto_quote_backs_its_sentence_but_not_the_wrong_flat():
    reply = "You stayed in the Penha flat in Kyoto."
    quote = "It's raining in Kyoto, a soft, grey, all-day rain"
    policed = police(_cite(KYOTO_ID, quote), SHOWN)
    assert [c.support for c in policed.citations] == ["verbatim"]
    backed = back(policed, reply, SHOWN, headers=HEADERS, message="Where did I stay in Kyoto?")
    assert len(backed.policed.citations) == 1
    assert reply[slice(*backed.sentences[0])] == reply
    # Penha is the Lisbon flat (the soul summary): the cited note does not hold it.
    assert backed.unbacked == (("Penha",),)
    # And the reply's check flags it, though the soul summary (in the briefing) names it.
    sources = [SOUL, KYOTO, CARLA, *HEADERS[KYOTO_ID], *HEADERS[CARLA_ID]]
    narrow = [(0, len(reply), [KYOTO, *HEADERS[KYOTO_ID], "Where did I stay in Kyoto?"])]
    assert [s.text for s in unsupported_within(reply, sources, narrow)] == ["Penha"]
    assert unsupported_within(reply, sources, []) == []  # what the old check said


def test_the_carla_quote_backs_nothing_and_is_dropped():
    reply = "You see Carla once a week."
    policed = police(_cite(CARLA_ID, "I don't have to decide anything."), SHOWN)
    assert [c.support for c in policed.citations] == ["verbatim"]
    backed = back(policed, reply, SHOWN, headers=HEADERS)
    assert backed.policed.citations == ()
    assert backed.policed.dropped[-1]["reason"] == "unrelated to the reply"


def test_a_citation_holding_a_detail_of_its_sentence_backs_it_without_shared_words():
    reply = "That was a long day. The time was 4:07:33."
    text = "Official result: 4:07:33."
    shown = {KYOTO_ID: [text]}
    policed = police(_cite(KYOTO_ID, text), shown)
    backed = back(policed, reply, shown)
    assert reply[slice(*backed.sentences[0])] == "The time was 4:07:33."
    assert backed.unbacked == ((),)


def test_each_citation_goes_to_the_sentence_it_shares_most_with():
    reply = "It rained all day in Kyoto. Carla says it is allowed."
    tail = (
        f'[{{"episode": "{CARLA_ID}", "quote": "Carla says it\'s allowed.", "support": "verbatim"}},'
        f' {{"episode": "{KYOTO_ID}", "quote": "a soft, grey, all-day rain", "support": "verbatim"}}]'
    )
    backed = back(police(tail, SHOWN), reply, SHOWN, headers=HEADERS)
    spans = [reply[slice(*s)] for s in backed.sentences]
    assert spans == ["Carla says it is allowed.", "It rained all day in Kyoto."]


def test_evidence_counts_details_held_by_an_excerpt_and_not_by_the_question():
    excerpts = ["Speaking: 91. Passed CIPLE with a comfortable margin."]
    found = evidence(
        "I scored 91 in speaking when I passed CIPLE.",
        excerpts,
        "What did I score in speaking when I passed CIPLE?",
        unsupported_count=0,
        sentences=0,
    )
    assert found.details == ("91",)  # CIPLE is only the question said back
    assert found.support == 1
    nothing = evidence(
        "I'm sorry, but I cannot provide the requested information without additional "
        "context or citations.",
        excerpts,
        "What did I score?",
        unsupported_count=0,
        sentences=0,
    )
    assert nothing.support == 0


def test_declines_knows_a_refusal_from_an_answer():
    assert declines(
        "I'm sorry, but I cannot provide the requested information without additional "
        "context or citations."
    )
    assert declines("Your notes don't mention a finishing time.")
    assert not declines("You finished the Lisbon Marathon in 4:07:33.")
    assert not declines("I scored 91 in speaking when I passed CIPLE.")


def test_sentence_spans_are_slices_of_the_reply():
    text = "  One. Two!\n\nThree?  Four…  "
    assert [text[a:b] for a, b in sentence_spans(text)] == ["One.", "Two!", "Three?", "Four…"]


def test_a_verbatim_quote_is_shown_as_the_note_writes_it():
    # qwen wrote the quote in capitals; the match folds case, what is shown is the note's.
    note = "I'm a marathoner. 4:07:33. I didn't break four,\nand I don't care."
    episode = "0a1b2c3d-1111-4222-8333-944455556666"
    tail = _cite(episode, "I'M A MARATHONER. 4:07:33. I DIDN'T BREAK FOUR, AND I")
    (citation,) = police(tail, {episode: [note]}).citations
    assert citation.support == "verbatim"
    assert citation.quote == "I'm a marathoner. 4:07:33. I didn't break four, and I"
    # A paraphrase keeps the model's words: there is no span of the note to show.
    (other,) = police(_cite(episode, "I RAN IT FAST"), {episode: [note]}).citations
    assert other.support == "paraphrase" and other.quote == "I RAN IT FAST"
