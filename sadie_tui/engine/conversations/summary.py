"""A conversation's summary, made from its first exchange rather than by a model."""

from __future__ import annotations

from ..titles import make_title

SUMMARY_LIMIT = 140


def summary_from_first_exchange(user: str, assistant: str) -> str:
    """The conversation's summary: its first exchange on one line, at most 140 characters.

    We use the first exchange rather than a model summary: it is free, immediate and never
    says anything the conversation did not. The person's words get up to 60 characters.
    """
    question = make_title(user, 60) if (user or "").strip() else ""
    if not (assistant or "").strip():
        return question
    if not question:
        return make_title(assistant, SUMMARY_LIMIT)
    joiner = " → "
    room = SUMMARY_LIMIT - len(question) - len(joiner)
    if room < 12:
        return question
    return question + joiner + make_title(assistant, room)
