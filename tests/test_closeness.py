"""A quote found nowhere in its note is not a paraphrase (issue 28, item 1): the label on
screen is a claim sadie has checked, with the real embedding model, on a real memory."""

from __future__ import annotations

import asyncio
import json

from sadie_tui.config import load_settings
from sadie_tui.engine import conversations as conv
from sadie_tui.engine.events import CitationsEvent, to_json
from sadie_tui.engine.reply.closeness import NEAR, UNFOUND, closeness
from sadie_tui.engine.session import Session
from tests.support.ollama_server import Reply
from tests.support.turns import episode_of, run_chat

ZEBRA = "zebra quartz nebula words that appear in no note"  # the trial's exact quote
TEARS = "I was in tears when I crossed the finish line of the Lisbon marathon"


def test_a_paraphrase_is_near_its_note_and_an_invented_quote_is_not(embedder):
    note = ["Finished the Lisbon marathon in 3:58. Cried at the finish line. Ines was there."]
    encode = embedder.encode
    assert closeness(TEARS, note, encode) >= NEAR
    assert closeness(ZEBRA, note, encode) < NEAR
    assert closeness("The landlord will not renew our lease", note, encode) < NEAR
    assert closeness(ZEBRA, [], encode) == 0.0


def tail(ep: str) -> str:
    return json.dumps(
        [
            {"episode": ep, "quote": ZEBRA, "support": "verbatim"},
            {"episode": ep, "quote": TEARS, "support": "paraphrase"},
        ]
    )


# The second sentence is the model's own invention, and its quote is made to back it: only
# the check of the quote against the note can tell that the note never says it.
REPLY = (
    "You cried at the finish line of the Lisbon marathon. "
    "You also wrote about zebra quartz nebula words that appear in no note."
)


def test_chat_drops_a_quote_found_nowhere_and_keeps_the_paraphrase(server, memory):
    ep, _ = episode_of(memory, "Race day")
    server.queue(Reply(f"{REPLY}\n@@CITATIONS@@\n{tail(ep)}"))
    events = run_chat(Session(memory, load_settings()), "How did my marathon go?")
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert [(c.quote, c.support) for c in cites.value] == [(TEARS, "paraphrase")]
    assert ZEBRA not in json.dumps(to_json(cites))  # in no face's events either
    stored = conv.get_message(memory.db, events[-1].message_id)
    assert [c["quote"] for c in stored.citations] == [TEARS]
    assert stored.metadata["dropped_citations"] == 1


def test_ask_counts_the_quote_found_nowhere_as_dropped_with_its_reason(server, memory):
    ep, _ = episode_of(memory, "Race day")
    server.queue(Reply(f"{REPLY}\n@@CITATIONS@@\n{tail(ep)}"))
    result = asyncio.run(Session(memory, load_settings()).ask("How did my marathon go?"))
    assert not result.abstained
    assert [(c.quote, c.support) for c in result.citations] == [(TEARS, "paraphrase")]
    assert result.grounding["dropped_reasons"] == [UNFOUND]
    assert result.grounding["counts"]["paraphrase"] == 1
