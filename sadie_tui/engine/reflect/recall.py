"""What a reflection question finds across the whole memory and all time.

A question the model raised about a batch ("How much does the person sleep?") is answered by
``retrieval.retrieve`` over every note, not only the batch's: a belief about a person or a
topic gathers its evidence across months. The persona is reflection's own (``PERSONA``): the
whole history (no window), no recency decay (a note from March counts as much as one from
last week), vector and keyword channels, MMR on so the passages spread over different notes;
no graph, beliefs or records (beliefs and records are what the judge checks a belief against).
Of what it ranks, ``engine.passages.choose`` keeps the few passages that answer the question,
each cut around its answer, as a turn's briefing does; the notes of the batch itself are left
out (the request shows them whole already).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..passages import Fit, choose
from ..personas import Persona
from ..prompt import Excerpt

if TYPE_CHECKING:
    from ..memory import Memory

# Ranked before ``passages.choose`` keeps the best few: enough that, with a batch's own notes
# left out, a question still has notes from other months to choose from.
RANKED = 12

PERSONA = Persona(
    name="reflection",
    description="Reflection's questions: the whole history, every note alike by age.",
    chunks=RANKED,
    window_days=None,
    half_life_days=None,
    weights=MappingProxyType({"vector": 0.5, "keyword": 0.5, "graph": 0.0}),
    graph=False,
    beliefs=False,
    contested=False,
    observations=False,
    observation_weight=0.0,
    stages=("retrieve",),
    voice="",
    source="sadie_tui.engine.reflect.recall",
    mmr=0.7,
)


@dataclass(frozen=True)
class Recalled:
    """One passage found for a question: ``text`` as shown (cut around the answer), ``whole``
    the chunk it was cut from (a quote is checked against it)."""

    episode_id: str
    date: str
    title: str
    text: str
    whole: str


Recall = Callable[[str, Collection[str]], list[Recalled]]  # (question, episodes left out)


def recall_for(memory: Memory, passages: int, chars: int) -> Recall:
    """A ``Recall`` over ``memory``: at most ``passages`` passages of ``chars`` characters."""
    # lazy: retrieval loads the keyword index and the vectors; only a run with a model asks
    from ..retrieval import retrieve

    def recall(question: str, leave_out: Collection[str]) -> list[Recalled]:
        result = retrieve(memory, question, PERSONA, k=RANKED)
        excerpts = [
            Excerpt(c.episode_id, c.occurred_at.date().isoformat(), c.title, c.text)
            for c in result.chunks
            if c.episode_id not in leave_out
        ]
        return [
            Recalled(e.episode_id, e.date, e.title, e.text, e.whole or e.text)
            for e in choose(excerpts, question, Fit(passages, chars))
        ]

    return recall
