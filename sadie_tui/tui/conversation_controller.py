"""The conversation on the chat screen: which one it is, opening another (its messages,
sources, register and chips loaded in a thread), and its chips kept in the memory.

A conversation not created yet (before its first reply) has no row to attach chips to: the
chip bar holds them, and the first message takes them along (``Session.chat``'s ``chips``).
The records the last reply offered (``ContextBudget.offered``: they match the message, but
the persona leaves records out) wait here until the person attaches one with one key.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from ..engine.errors import SadieError
from ..engine.operations import AddChip, ListChips, RemoveChip, ShowConversation
from .chat_widgets import NEW_TITLE, ChatWidgets
from .host import from_thread
from .widgets.chip_bar import ChipItem

if TYPE_CHECKING:
    from textual.screen import Screen

    from ..engine.chips import Candidate, Chip
    from ..engine.conversations import Conversation, Message
    from ..engine.events import RecordOffer
    from ..engine.session import SessionProtocol
    from .host import SadieHost


def chip_item(chip: Chip) -> ChipItem:
    """A stored ``Chip`` as the chip bar shows it."""
    return ChipItem(chip.kind, chip.ref_id, chip.label, chip.snippet, chip.id, chip.added_by)


class ConversationController:
    """The conversation on screen and its chips; blocking work runs in thread workers of
    ``owner`` (the chat screen), whose results come back to the widgets."""

    def __init__(self, owner: Screen[None], host: SadieHost, widgets: ChatWidgets) -> None:
        self.owner = owner
        self.host = host
        self.widgets = widgets
        self.conversation_id: str | None = None  # None: a new one, created by its first reply
        self.title = NEW_TITLE
        # One per open(): a load that finishes after a later open (ctrl+n while the reopened
        # conversation is still being read) is dropped; the later intent wins.
        self.opened = 0
        self._showing = asyncio.Lock()  # clearing and showing a load never interleave
        self.offered: list[RecordOffer] = []  # the last reply's, not attached yet

    def _session(self) -> SessionProtocol:
        session = self.host.session
        assert session is not None, "the memory is not open yet"
        return session

    def _tell(self, message: str) -> None:
        """An error from a thread worker, as a notification."""
        self.owner.app.call_from_thread(self.owner.notify, message, severity="error")

    # -- which conversation ------------------------------------------------------------------
    def adopt(self, conversation_id: str, title: str) -> None:
        """The screen shows ``conversation_id`` now (loaded, or created by a reply); the next
        launch opens it again."""
        self.conversation_id = conversation_id
        self.set_title(title)
        self.host.preferences.remember_conversation(conversation_id)

    def set_title(self, title: str) -> None:
        """Show ``title`` in the top bar."""
        self.title = title
        self.widgets.show_title(title)

    async def clear(self) -> None:
        """An empty screen for a new conversation: no messages, sources, register or chips."""
        w = self.widgets
        await w.transcript.clear()
        await w.sources.follow(None)
        self.conversation_id = None
        self.offered = []
        await w.chips.set_items([])
        w.sigil.emotion = ""
        w.status.context = None
        w.status.tokens_per_s = None
        self.set_title(NEW_TITLE)

    async def open(self, conversation_id: str | None) -> None:
        """Show ``conversation_id`` (``None``: a fresh one). The last call wins: a load still
        running for an earlier one is not shown."""
        self.opened += 1
        turn = self.opened
        async with self._showing:
            if turn != self.opened:
                return  # opened again meanwhile
            await self.clear()
            if conversation_id is None:
                self.host.preferences.remember_conversation(None)
                return
        load = partial(self._load, conversation_id, turn)
        self.owner.run_worker(load, thread=True, exclusive=True, group="load", exit_on_error=False)

    def keep_shown(self) -> None:
        """The person acts on the conversation on screen (a message sent): a load still
        running for another one is not shown over it."""
        self.opened += 1

    def _load(self, conversation_id: str, turn: int) -> None:
        session = self.host.session
        if session is None:
            return
        try:
            shown = session.call(ShowConversation(conversation_id))
        except SadieError as exc:
            self._tell(exc.one_line())
            return
        from_thread(
            self.owner.app,
            self._show_loaded,
            turn,
            shown.conversation,
            shown.messages,
            shown.chips,
        )

    async def _show_loaded(
        self, turn: int, conversation: Conversation, items: list[Message], chips: list[Chip]
    ) -> None:
        async with self._showing:
            if turn == self.opened:  # else the person opened another meanwhile
                await self._show(conversation, items, chips)

    async def _show(
        self, conversation: Conversation, items: list[Message], chips: list[Chip]
    ) -> None:
        self.adopt(conversation.id, conversation.title)
        last = await self.widgets.transcript.show_stored(items)
        await self.widgets.sources.follow(last)
        self.widgets.sigil.emotion = conversation.emotion or ""
        await self.widgets.chips.set_items([chip_item(c) for c in chips])

    # -- chips -------------------------------------------------------------------------------
    def pending(self) -> list[ChipItem]:
        """The chips the next message takes along: those held for a conversation not created
        yet (none once it exists: its chips are in the memory)."""
        return self.widgets.chips.pending if self.conversation_id is None else []

    async def chips_taken(self, conversation_id: str) -> None:
        """A reply created the conversation and attached the held chips to it: the bar shows
        them as the memory has them now."""
        session = self._session()
        chips = await asyncio.to_thread(lambda: session.call(ListChips(conversation_id)))
        await self.widgets.chips.set_items([chip_item(c) for c in chips])

    async def attach(self, candidate: Candidate | None) -> None:
        """Attach a picked ``Candidate`` (held in the bar while the conversation is new)."""
        if candidate is None:
            return
        if self.conversation_id is None:
            item = ChipItem(candidate.kind, candidate.ref_id, candidate.label, candidate.snippet)
            await self.widgets.chips.hold(item)
            return
        attach = partial(self._attach_saved, self.conversation_id, candidate)
        self.owner.run_worker(attach, thread=True, group="chips", exit_on_error=False)

    def offer(self, offers: tuple[RecordOffer, ...]) -> None:
        """What this reply offers replaces what the last one did, and is said in a notice
        naming the key that attaches it."""
        self.offered = list(offers)
        if not offers:
            return
        key = self.host.keymap.get("attach-record", "ctrl+f").split(",")[0]
        more = f" (and {len(offers) - 1} more)" if len(offers) > 1 else ""
        self.owner.notify(
            f"a record matches: {offers[0].line}{more} — {key} attaches it",
            title="Left out by the persona",
            timeout=10,
        )

    async def attach_offered(self) -> None:
        """Attach the first record offered and not attached yet, as a ``record`` chip: the
        next message has it in its briefing."""
        if not self.offered:
            self.owner.notify(
                "No record is offered: sadie offers one when a record your persona leaves"
                " out matches your message",
                severity="warning",
                timeout=4,
            )
            return
        from ..engine.chips import Candidate  # lazy: it loads DuckDB

        offer = self.offered.pop(0)
        label = f"{offer.date} {offer.source}"
        await self.attach(Candidate("record", offer.id, label, offer.text, offer.date))
        self.owner.notify(
            f"attached the record “{offer.line}”: your next message has it", timeout=4
        )

    async def remove(self, item: ChipItem) -> None:
        """Detach ``item`` (a held one is only let go of)."""
        if item.chip_id is None or self.conversation_id is None:
            await self.widgets.chips.drop(item)
            return
        remove = partial(self._remove_saved, self.conversation_id, item.chip_id)
        self.owner.run_worker(remove, thread=True, group="chips", exit_on_error=False)

    def _attach_saved(self, conversation_id: str, candidate: Candidate) -> None:
        from ..engine.chips import cut  # lazy: it loads DuckDB, which the first frame need not

        session = self._session()
        try:
            label = cut(candidate.label, 80)
            session.call(AddChip(conversation_id, candidate.kind, candidate.ref_id, label=label))
            chips = session.call(ListChips(conversation_id))
        except SadieError as exc:
            self._tell(exc.one_line())
            return
        from_thread(self.owner.app, self._show_chips, [chip_item(c) for c in chips])

    def _remove_saved(self, conversation_id: str, chip_id: str) -> None:
        session = self._session()
        try:
            session.call(RemoveChip(conversation_id, chip_id))
            chips = session.call(ListChips(conversation_id))
        except SadieError as exc:
            self._tell(exc.one_line())
            return
        from_thread(self.owner.app, self._show_chips, [chip_item(c) for c in chips])

    async def _show_chips(self, items: list[ChipItem]) -> None:
        await self.widgets.chips.set_items(items)
