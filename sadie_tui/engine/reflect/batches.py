"""Episodes packed into batches that fit the model's context.

A batch is shown whole in one request: the standing instruction, its excerpts (each episode up
to ``prompt.EPISODE_CHARS``), and room for the answer. Its size is the smaller of what the
context holds (``num_ctx``, at ``CHARS_PER_TOKEN``) and ``TARGET_CHARS``: a small model given
many notes at once proposes fewer beliefs per note, and a killed run loses at most one batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..reasoners.rates import CHARS_PER_TOKEN
from .prompt import PROPOSE, PROPOSE_ASK, Shown, shown_text

if TYPE_CHECKING:
    from ..store.reflection import EpisodeText

TARGET_CHARS = 6000
ANSWER_TOKENS = 700  # the answer's num_predict
SLACK_TOKENS = 256  # the chat template, the headers, rounding


def batch_chars(num_ctx: int) -> int:
    """How many characters of excerpts one batch may hold in a context of ``num_ctx``."""
    fixed = (len(PROPOSE) + len(PROPOSE_ASK)) / CHARS_PER_TOKEN + ANSWER_TOKENS + SLACK_TOKENS
    room = int((num_ctx - fixed) * CHARS_PER_TOKEN)
    return max(1000, min(TARGET_CHARS, room))


def pack(episodes: Sequence[EpisodeText], limit: int) -> list[list[Shown]]:
    """``episodes`` in order, as batches of at most ``limit`` characters of excerpts (an
    episode longer than that alone, cut), each under handles E1, E2, …"""
    batches: list[list[Shown]] = []
    current: list[Shown] = []
    size = 0
    for episode in episodes:
        text = shown_text(episode.text)[:limit]
        cost = len(text) + len(episode.title) + 20
        if current and size + cost > limit:
            batches.append(current)
            current, size = [], 0
        current.append(Shown(f"E{len(current) + 1}", episode.id, episode.date, episode.title, text))
        size += cost
    if current:
        batches.append(current)
    return batches
