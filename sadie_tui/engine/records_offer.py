"""Records a persona leaves out, offered instead of lost.

A persona may leave connector records (the ``observations`` table: calendar events,
workouts, purchases…) out of its briefing; the friend, chat's default, does. Its rule is
kept: nothing here goes into the briefing. But a record that *strongly* matches the message
is offered (``ContextBudget.offered``), and a face lets the person attach it as a
``record`` chip with one key; the next message then has it as attached context.

"Strongly", the one rule: among the records the observations channel ranks for the message
(``beliefs_observations.search_side``, the persona widened to take records, as `sadie search`
shows them under "record"), the record's text holds at least half (``STRONG_SHARE``) of the
message's content words — stemmed, stopwords, question framing and time words left out, an
irregular verb matching its other forms ("sleep" finds "slept"). At most ``OFFER_LIMIT``, in
the channel's order; none already attached to the conversation.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from .events import RecordOffer
from .retrieval.beliefs_observations import ObservationHit, search_side
from .retrieval.keyword.tokens import query_tokens, tokenize
from .retrieval.pipeline import prepare_query
from .store.chips import chips_of

if TYPE_CHECKING:
    from .memory import Memory
    from .personas import Persona

OFFER_LIMIT = 2
STRONG_SHARE = 0.5


def message_words(text: str) -> list[str]:
    """The message's content words, as the rule counts them (stemmed, each once)."""
    return list(dict.fromkeys(query_tokens(text)))


def holds(words: list[str], record: str) -> float:
    """The share of ``words`` the record's text holds (0 when there are no words)."""
    if not words:
        return 0.0
    own = set(tokenize(record)) | set(query_tokens(record, forms=True))
    return sum(1 for w in words if w in own) / len(words)


def strongly_matches(words: list[str], record: str) -> bool:
    """The rule: the record holds at least ``STRONG_SHARE`` of the message's content words."""
    return bool(words) and holds(words, record) >= STRONG_SHARE


def offer_records(
    memory: Memory,
    message: str,
    persona: Persona,
    conversation_id: str,
    *,
    use_vector: bool = True,
    now: datetime | None = None,
) -> tuple[RecordOffer, ...]:
    """The records to offer for ``message`` (none when the persona takes records itself:
    they are in its briefing already)."""
    if persona.observations:
        return ()
    prepared = prepare_query(
        memory, message, now=now or datetime.now(), previous=None, use_vector=use_vector
    )
    words = message_words(prepared.text_query)
    if not words:
        return ()
    widened = replace(persona, observations=True, beliefs=False)
    _, hits = search_side(
        memory, prepared.vector, prepared.text_query, widened, prepared.window, beliefs=False
    )
    attached = {c.ref_id for c in chips_of(memory.db, conversation_id) if c.kind == "record"}
    offers = [
        _offer(hit) for hit in hits if hit.id not in attached and strongly_matches(words, hit.text)
    ]
    return tuple(offers[:OFFER_LIMIT])


def _offer(hit: ObservationHit) -> RecordOffer:
    return RecordOffer(hit.id, hit.source, hit.observed_at.date().isoformat(), hit.text)
