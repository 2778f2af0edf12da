"""Episodes packed into batches that fit the model's context.

A batch is shown whole in each of its requests: the system prompt, its excerpts (each episode
up to ``prompt.EPISODE_CHARS``), what retrieval found for a question (``RECALL_PASSAGES`` of at
most ``RECALL_CHARS``), the instruction, and room for the answer. Its size is the smaller of what the
context holds (``num_ctx``, at ``CHARS_PER_TOKEN``) and ``TARGET_CHARS``: a small model given
many notes at once proposes fewer beliefs per note, and a killed run loses at most one batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..reasoners.rates import CHARS_PER_TOKEN
from .prompt import ANSWER, PROPOSE, PROPOSE_ASK, SYSTEM, Shown, shown_text

if TYPE_CHECKING:
    from ..store.reflection import EpisodeText

TARGET_CHARS = 6000
ANSWER_TOKENS = 700  # the answer's num_predict
SLACK_TOKENS = 256  # the chat template, the headers, rounding
# What one question's retrieval adds to a batch's request: this many passages (one per note),
# each cut to this many characters around what answers (``engine.passages``, as a turn's
# briefing is; a 1.5B model answered better from a few passages than from many, issue 33).
RECALL_PASSAGES = 4
RECALL_CHARS = 700


def batch_chars(num_ctx: int) -> int:
    """How many characters of excerpts one batch may hold in a context of ``num_ctx``."""
    instruction = max(len(PROPOSE), len(ANSWER) + 300)  # + the question
    recalled = RECALL_PASSAGES * (RECALL_CHARS + 80)  # + each passage's header
    fixed = (len(SYSTEM) + instruction + len(PROPOSE_ASK) + recalled) / CHARS_PER_TOKEN
    fixed += ANSWER_TOKENS + SLACK_TOKENS
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
