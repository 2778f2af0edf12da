"""A conversation shown whole: the shape of `sadie conversations show --json` and of
``GET /v1/conversations/{id}``, declared once (``wire`` derives its JSON and decoding)."""

from __future__ import annotations

from dataclasses import dataclass

from ..jsonvalue import JSONObject
from ..store.chips import Chip
from ..store.conversations import Conversation, Message
from ..wire import dump


@dataclass(frozen=True)
class ConversationShow:
    """A conversation with its messages (oldest first) and the chips attached to it."""

    conversation: Conversation
    messages: list[Message]
    chips: list[Chip]

    def as_json(self) -> JSONObject:
        """Its JSON (``wire``)."""
        data: JSONObject = dump(self)
        return data
