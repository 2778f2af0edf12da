"""Near echoes: instruction sentences a model wrote back in other words are taken out of the
finished reply (chat and ask), never ordinary sentences; a reply that was nothing else is the
model failing to answer. The echo is what Gemma-3-270M wrote on the demo memory."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sadie_tui.config import load_settings
from sadie_tui.engine import conversations as conv
from sadie_tui.engine.events import Done, ErrorEvent, Replace
from sadie_tui.engine.prompt import (
    CITATION_RULES,
    EMPTY_MEMORY_NOTE,
    OPINION_RULE,
    STANDING,
    TONE,
)
from sadie_tui.engine.reply.near_echo import NearEchoes, sentences
from sadie_tui.engine.session import Session
from sadie_tui.engine.turns.chat import ECHO_REASON
from tests.support.ollama_server import Reply, split_pieces
from tests.support.turns import run_chat

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTIONS = [STANDING, CITATION_RULES, OPINION_RULE, EMPTY_MEMORY_NOTE, *TONE.values()]
# Gemma-3-270M on "Who is Priya?": STANDING's "Reply in plain prose, warmly and concretely,
# in a few short paragraphs at most, speaking to them as "you"", its middle left out.
GEMMA = 'Reply in plain prose, warmly and concretely, speaking to them as "you".'


def test_a_paraphrased_instruction_is_taken_out_and_the_answer_kept():
    echoes = NearEchoes(INSTRUCTIONS)
    text, echoed = echoes.strip(f"{GEMMA}\nPriya is your sister. She lives in Leeds.")
    assert text == "Priya is your sister. She lives in Leeds."
    assert echoed == [GEMMA]
    text, echoed = echoes.strip(f"Priya is your sister.\n\n{GEMMA}\n\nShe called on Sunday.")
    assert text == "Priya is your sister.\n\nShe called on Sunday."
    assert echoes.strip(GEMMA) == ("", [GEMMA])
    # and with words of its own added at the end (13 of its 18 words from the instruction)
    padded = (
        "Reply in plain prose, warmly and concretely, speaking to them as you would if they "
        "were your parents."
    )
    assert echoes.strip(f"{padded} Priya is your sister.") == ("Priya is your sister.", [padded])


def test_ordinary_sentences_are_never_echoes():
    echoes = NearEchoes(INSTRUCTIONS)
    for text in (
        "You ran with Ines on Saturday and felt good about it.",
        "Reply to Kofi when you can; he asked about the marathon twice.",
        "You wrote that you want to speak to them about the move in plain words.",
        "Take it slowly this week: your notes say the knee still hurts after long runs.",
        "Short one.",
    ):
        assert echoes.strip(text) == (text, []), text


def test_no_sentence_of_the_demo_memory_is_an_echo():
    """Every sentence of six words or more in the demo's notes (thousands of them): none is
    taken for an instruction, with the personas' voices among the instructions too."""
    voices = [p.read_text() for p in sorted((ROOT / "personas").glob("*")) if p.is_file()]
    echoes = NearEchoes([*INSTRUCTIONS, *voices])
    checked = 0
    for path in sorted((ROOT / "data" / "demo").rglob("*")):
        if not path.is_file():
            continue
        for sentence in sentences(path.read_text(errors="replace")):
            if len(sentence.split()) >= 6:
                checked += 1
                assert not echoes.is_echo(sentence), (path.name, sentence)
    assert checked > 1000


def test_a_chat_reply_loses_its_near_echo_with_a_replace(server, memory):
    server.queue(Reply(split_pieces(f"{GEMMA}\nPriya is your sister.", 5)))
    events = run_chat(Session(memory, load_settings()), "Who is Priya?")
    assert isinstance(events[-1], Done) and events[-1].status == "complete"
    replaces = [e for e in events if isinstance(e, Replace)]
    assert [(r.value, r.reason) for r in replaces] == [("Priya is your sister.", ECHO_REASON)]
    stored = conv.get_message(memory.db, events[-1].message_id)
    assert stored.content == "Priya is your sister."
    assert stored.metadata["echoes_hidden"] == 1
    assert GEMMA in stored.metadata["streamed_text"]


def test_a_chat_reply_of_echoes_only_is_no_answer(server, memory):
    server.queue(Reply(split_pieces(f"{GEMMA}\n\n{GEMMA}", 7), done_reason="length"))
    events = run_chat(Session(memory, load_settings()), "Who is Priya?")
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert error.message == "the model only wrote its instructions back"
    assert error.fix == "ask again, or try another model"  # more tokens: more echoes
    stored = conv.get_message(memory.db, error.message_id)
    assert stored.status == "error"


def test_an_ask_answer_loses_its_near_echo(server, memory):
    ep = memory.db.fetchone("SELECT id::VARCHAR FROM episodes WHERE title = ?", ["Race day"])[0]
    cite = [{"episode": ep, "quote": "Finished the Lisbon marathon in 3:58", "support": "verbatim"}]
    server.queue(
        Reply(split_pieces(f"{GEMMA}\nYou finished in 3:58.\n@@CITATIONS@@\n{json.dumps(cite)}", 6))
    )
    result = asyncio.run(Session(memory, load_settings()).ask("How fast was my marathon?"))
    assert result.answer == "You finished in 3:58."
