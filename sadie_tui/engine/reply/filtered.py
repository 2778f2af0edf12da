"""A reply as it is read: through the stream filter and the reply guard while it streams,
then, once finished, less what it wrote back of its instructions in other words, with its own
citations policed. Part of the reply's room; the turns reach it through ``check``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ModelNoAnswer
from .grounding import Grounded, own_citations
from .guard import ReplyGuard
from .near_echo import NearEchoes
from .stream_filter import StreamFilter

if TYPE_CHECKING:
    from ..prompt import Briefing
    from ..reasoners.base import Reasoner


class Filtered:
    """The stream filter then the reply guard, fed piece by piece as the reply streams."""

    def __init__(self, briefing: Briefing, max_chars: int) -> None:
        self.filter = StreamFilter()
        self._instructions = briefing.instructions()
        self.guard = ReplyGuard(self._instructions, max_chars=max_chars)
        self.near_echoes: list[str] = []  # the sentences ``unecho`` took out
        self._prose_done = False

    def unecho(self, text: str) -> str:
        """The finished ``text`` without the instruction sentences the model wrote back in
        other words (``near_echo``)."""
        kept, self.near_echoes = NearEchoes(self._instructions).strip(text)
        return kept

    @property
    def echoes(self) -> int:
        """How many echoes were kept from the screen: word for word, or in other words."""
        return len(self.guard.dropped) + len(self.near_echoes)

    def feed(self, piece: str) -> str:
        shown = self.guard.feed(self.filter.feed(piece))
        if self.filter.diverted and not self._prose_done and not self.guard.stopped:
            # The citations marker ends the prose: what the guard still holds shows now, not
            # after the tail has streamed (no visible text can follow the marker).
            self._prose_done = True
            shown += self.guard.finish()
        return shown

    @property
    def prose_done(self) -> bool:
        """The citations marker was seen: the visible reply is complete, the tail streams."""
        return self._prose_done

    def finish(self) -> str:
        if self.guard.stopped:
            return ""
        rest = self.filter.finish()
        if self._prose_done:
            return ""
        self._prose_done = True
        return self.guard.feed(rest) + self.guard.finish()

    def cut(self, reasoner: Reasoner) -> str | None:
        """Why the reply was cut short: the guard's reason, or the model's token cap."""
        if self.guard.stopped:
            return self.guard.stopped
        return "tokens" if getattr(reasoner, "last_done_reason", "") == "length" else None

    def read(
        self,
        shown: str,
        briefing: Briefing,
        reasoner: Reasoner,
        *,
        thought: bool = False,
        required: bool = True,
    ) -> Grounded:
        """The finished reply (``shown``: what streamed, or the whole draft once filtered),
        less its instructions written back in other words, with its own citations.
        ``required``: a reply with nothing left to show is the model failing to answer
        (``no_answer``; ``thought``: it reasoned in the separate thinking field)."""
        text = self.unecho(shown)
        if required and not text.strip():
            raise self.no_answer(reasoner, thought)
        return self.own(text, briefing)

    def own(
        self, text: str, briefing: Briefing, *, tail: str | None = None, diverted: bool = False
    ) -> Grounded:
        """``text``'s own citations: from the tail the stream filter set aside, or ``tail``
        (a reply stopped mid-tail: its complete entries, ``diverted`` saying the marker was
        seen), or a JSON list the reply ended with and no marker."""
        if tail is None:
            tail, diverted = self.filter.tail, self.filter.diverted
        return own_citations(text, tail, diverted, briefing.shown, briefing.tail)

    def no_answer(self, reasoner: Reasoner, thought: bool = False) -> ModelNoAnswer:
        """The error for a reply that shows nothing once filtered (``thought``: reasoning
        came in the model's separate thinking field)."""
        out_of_tokens = getattr(reasoner, "last_done_reason", "") == "length"
        if thought or self.filter.saw_thinking:
            message = "the model only reasoned and gave no answer"
            if self.filter.thinking:
                message += " (its <think> block never closed)"
        elif self.echoes:
            # More tokens would only be more echoes: the model is not following its briefing.
            return ModelNoAnswer(
                "the model only wrote its instructions back",
                fix="ask again, or try another model",
            )
        else:
            message = "the model's reply had nothing to show"
        if out_of_tokens:
            return ModelNoAnswer(
                message + ": it ran out of tokens", fix="raise reply_tokens in config.toml"
            )
        return ModelNoAnswer(message, fix="ask again, or try another model")
