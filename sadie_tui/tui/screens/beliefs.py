""" "What sadie has learned": every belief, grouped by status, each with its kind and
confidence (those you wrote in beliefs.jsonl marked as yours); enter opens one — its quotes
(each opens its note like a citation), its links and its history — and a / r / e accept,
reject or reword it, here or there. Everything goes through the session door, so it works
the same when this app is a client of another sadie.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from ...display import safe
from ...engine.errors import SadieError
from ...engine.events import CitationView
from ...engine.operations import AcceptBelief, EditBelief, ListBeliefs, RejectBelief, ShowBelief
from ..host import from_thread
from .dialogs import TextPrompt

if TYPE_CHECKING:
    from ...engine.reflect.beliefs import Belief, BeliefDetail, Evidence
    from ...engine.session import SessionProtocol
    from ..host import SadieHost

#: The groups, in order: (status, heading).
GROUPS = (
    ("active", "Proposed and active"),
    ("contested", "Contested: evidence on both sides"),
    ("accepted", "Accepted by you"),
    ("retired", "Retired: replaced by something newer"),
    ("rejected", "Rejected by you"),
)
STATUS_STYLE = {
    "active": "bold",
    "contested": "bold yellow",
    "accepted": "bold green",
    "retired": "dim",
    "rejected": "dim strike",
}

# The keys both screens take, one id each (remappable, listed in help).
DECISIONS = [
    Binding(
        "a", "accept", "Accept", id="beliefs.accept", tooltip="Keep it: sadie never retires it"
    ),
    Binding(
        "r", "reject", "Reject", id="beliefs.reject", tooltip="Reject it: never proposed again"
    ),
    Binding("e", "edit", "Edit", id="beliefs.edit", tooltip="Reword it: the quotes stay"),
]


def meta_line(b: Belief) -> Text:
    """kind · confidence · quotes, and who stated it."""
    text = Text(style="dim")
    text.append(" · ".join(x for x in (safe(b.kind or ""), f"confidence {b.confidence:.2f}") if x))
    quotes = "quote" if b.evidence == 1 else "quotes"
    text.append(f" · {b.evidence} {quotes}")
    if b.origin == "stated":
        text.append(" · stated by you", style="italic")
    return text


def belief_prompt(b: Belief) -> Text:
    """A row: the statement, then its kind, confidence and origin."""
    text = Text(no_wrap=False)
    text.append(safe(b.statement), style=STATUS_STYLE.get(b.status, ""))
    text.append("\n  ")
    text.append_text(meta_line(b))
    return text


def stated_notice(b: Belief, proposed: int | None = None) -> str:
    """What a, r and e on a belief the person wrote say instead: where it is changed, and
    which rows they do work on (``proposed``: how many of those the list holds)."""
    rows = "the beliefs sadie proposed (those not marked “stated by you”)"
    if proposed is not None:
        rows = (
            f"the {proposed} belief{'s' if proposed != 1 else ''} sadie proposed"
            " (not marked “stated by you”)"
            if proposed
            else "a belief sadie proposes (`sadie reflect`); none is listed yet"
        )
    return (
        f"“{b.statement}” is yours: it is written in beliefs.jsonl, so change it there and"
        f" ingest again. Accept, reject and reword work on {rows}."
    )


def evidence_rows(evidence: Sequence[Evidence]) -> list[Option]:
    """The quotes for the belief under one heading and those against it under another, each
    option's id its place in ``evidence`` (what enter opens)."""
    options: list[Option] = []
    for stance, heading in (("supports", "For it"), ("contradicts", "Against it")):
        side = [(n, e) for n, e in enumerate(evidence) if e.stance == stance]
        if not side:
            continue
        options.append(Option(Text(f"{heading} ({len(side)})", style="bold"), disabled=True))
        for n, e in side:
            row = Text(f"{e.date} {safe(e.title)}", style="dim")
            if e.quote:
                label = "verbatim" if e.verbatim else "the note's sentence (paraphrased)"
                row.append(f"\n  “{safe(e.quote)}” ", style="")
                row.append(label, style="dim italic")
            options.append(Option(row, id=str(n)))
    return options


def citation_of(e: Evidence) -> CitationView:
    """A quote of a belief as the note screen opens a citation: the quote is always the note's
    own words (``verbatim`` in the note); a stated belief's listed note has no quote."""
    claimed = "verbatim" if e.verbatim else "paraphrase"
    support = "verbatim" if e.quote else "paraphrase"
    return CitationView(e.episode_id, e.quote, support, claimed, e.title, e.date)


class BeliefList(OptionList):
    """The list of beliefs, under status headings."""

    BINDINGS = [Binding("enter", "select", "Open", id="beliefs.open", tooltip="Open the belief")]


def apply(session: SessionProtocol, belief_id: str, action: str, text: str | None) -> BeliefDetail:
    """The decision through the door."""
    if action == "accept":
        return session.call(AcceptBelief(belief_id))
    if action == "reject":
        return session.call(RejectBelief(belief_id))
    return session.call(EditBelief(belief_id, text or ""))


DONE = {"accept": "Accepted", "reject": "Rejected", "edit": "Now"}


class Deciding(Screen[None]):
    """What the list and the belief screen share: a, r and e decide on the belief on show
    (``current``): the change is made in a thread and ``decided`` shows its outcome."""

    host: SadieHost

    def current(self) -> Belief | None:
        raise NotImplementedError

    def proposed(self) -> int | None:
        """How many of the listed beliefs sadie proposed (None: this screen lists none)."""
        return None

    async def decided(self, detail: BeliefDetail) -> None:
        raise NotImplementedError

    def action_accept(self) -> None:
        self._decide("accept")

    def action_reject(self) -> None:
        self._decide("reject")

    def action_edit(self) -> None:
        self._decide("edit")

    def _decide(self, action: str) -> None:
        """Accept or reject at once; edit asks for the new words first."""
        belief = self.current()
        if belief is None:
            self.notify("Choose a belief first", severity="warning", timeout=2)
            return
        if belief.origin == "stated":
            # Said before any prompt: the engine would refuse it, after the typing too.
            self.notify(stated_notice(belief, self.proposed()), title="Stated by you", timeout=8)
            return
        if action != "edit":
            self.run_decision(belief.id, action, None)
            return

        def edited(statement: str | None) -> None:
            if statement and statement != belief.statement:
                self.run_decision(belief.id, "edit", statement)

        self.app.push_screen(TextPrompt("Reword the belief", belief.statement), edited)

    @work(thread=True, group="belief-change", exit_on_error=False)
    def run_decision(self, belief_id: str, action: str, text: str | None) -> None:
        session = self.host.session
        assert session is not None
        try:
            detail = apply(session, belief_id, action, text)
        except SadieError as exc:
            self.app.call_from_thread(self.notify, exc.one_line(), severity="error")
            return
        said = f"{DONE[action]} “{detail.belief.statement}”"
        self.app.call_from_thread(self.notify, said, timeout=3)
        from_thread(self.app, self.decided, detail)


class BeliefsScreen(Deciding):
    """The list (see the module)."""

    BINDINGS = [
        Binding("escape,f5", "back", "Back", id="beliefs.back", tooltip="Back to the conversation"),
        *DECISIONS,
    ]

    DEFAULT_CSS = """
    BeliefsScreen {
        #beliefs-title { height: 1; padding: 0 1; text-style: bold; background: $panel; }
        #beliefs-list { height: 1fr; margin: 0 1; border: none; }
        #beliefs-empty { padding: 1 2; color: $sadie-muted; }
    }
    """

    def __init__(self, host: SadieHost) -> None:
        super().__init__()
        self.host = host
        self.beliefs: list[Belief] = []
        self.loaded = False

    def compose(self):
        yield Static(Text("What sadie has learned"), id="beliefs-title")
        yield BeliefList(id="beliefs-list")
        yield Static(Text(""), id="beliefs-empty")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(BeliefList).focus()
        self.refresh_list()

    def refresh_list(self, keep: str | None = None) -> None:
        """List again, keeping ``keep`` (else the highlighted belief) highlighted."""
        self._load(keep or self.highlighted_id())

    @work(thread=True, exclusive=True, group="beliefs", exit_on_error=False)
    def _load(self, keep: str | None) -> None:
        session = self.host.session
        if session is None:
            self.app.call_from_thread(self._show, [], keep, "The memory is still opening…")
            return
        try:
            found = session.call(ListBeliefs())
        except SadieError as exc:
            self.app.call_from_thread(self._show, [], keep, exc.one_line())
            return
        self.app.call_from_thread(self._show, found, keep, None)

    def _show(self, found: list[Belief], keep: str | None, note: str | None) -> None:
        self.beliefs = found
        listing = self.query_one(BeliefList)
        listing.clear_options()
        options: list[Option] = []
        for status, heading in GROUPS:
            group = [b for b in found if b.status == status]
            if group:
                title = Text(f"{heading} ({len(group)})", style="bold")
                options.append(Option(title, disabled=True))
                options += [Option(belief_prompt(b), id=b.id) for b in group]
        listing.add_options(options)
        rows = [i for i, o in enumerate(options) if not o.disabled]
        ids = [options[i].id for i in rows]
        if rows:
            listing.highlighted = rows[ids.index(keep)] if keep in ids else rows[0]
        message = note or (
            "" if found else "Nothing learned yet: sadie reflect proposes beliefs from your notes."
        )
        empty = self.query_one("#beliefs-empty", Static)
        empty.update(Text(message))
        empty.display = bool(message)
        self.loaded = True

    def highlighted_id(self) -> str | None:
        listing = self.query_one(BeliefList)
        if listing.highlighted is None:
            return None
        return listing.get_option_at_index(listing.highlighted).id

    def selected(self) -> Belief | None:
        found = self.highlighted_id()
        return next((b for b in self.beliefs if b.id == found), None)

    @on(OptionList.OptionSelected, "#beliefs-list")
    def _open(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is None or self.host.session is None:
            return
        self.app.push_screen(
            BeliefScreen(self.host, event.option.id),
            lambda _: self.refresh_list(event.option.id),
        )

    def action_back(self) -> None:
        self.dismiss(None)

    def current(self) -> Belief | None:
        return self.selected()

    def proposed(self) -> int | None:
        return sum(b.origin == "derived" for b in self.beliefs)

    async def decided(self, detail: BeliefDetail) -> None:
        self.refresh_list(detail.belief.id)


class BeliefScreen(Deciding, ModalScreen[None]):
    """One belief: its statement, quotes (enter opens the note), links and history."""

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="belief.close", tooltip="Back to the list"),
        *DECISIONS,
    ]

    DEFAULT_CSS = """
    BeliefScreen {
        align: center middle;
        #belief-box {
            width: 90%;
            max-width: 110;
            height: 85%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        #belief-head { height: auto; margin: 0 0 1 0; }
        #belief-evidence { height: auto; max-height: 70%; border: none; }
        #belief-more { height: 1fr; }
        .belief-heading { text-style: bold; color: $primary; margin: 1 0 0 0; }
        #belief-foot { height: 1; color: $sadie-muted; }
    }
    """

    def __init__(self, host: SadieHost, belief_id: str) -> None:
        super().__init__()
        self.host = host
        self.belief_id = belief_id
        self.detail: BeliefDetail | None = None

    def compose(self):
        with Vertical(id="belief-box"):
            yield Static(Text("loading…"), id="belief-head")
            yield Static(Text("Evidence"), classes="belief-heading")
            yield OptionList(id="belief-evidence")
            yield VerticalScroll(id="belief-more")
            yield Static(
                Text("enter opens the note · a accept · r reject · e edit · escape closes"),
                id="belief-foot",
            )

    def on_mount(self) -> None:
        self.query_one("#belief-evidence", OptionList).focus()
        self._load()

    @work(thread=True, exclusive=True, group="belief", exit_on_error=False)
    def _load(self) -> None:
        session = self.host.session
        assert session is not None
        try:
            detail = session.call(ShowBelief(self.belief_id))
        except SadieError as exc:
            self.app.call_from_thread(self.notify, exc.one_line(), severity="error")
            return
        from_thread(self.app, self.show, detail)

    async def show(self, detail: BeliefDetail) -> None:
        """Draw ``detail`` (again, after a decision)."""
        self.detail = detail
        b = detail.belief
        head = Text(safe(b.statement), style="bold")
        head.append(f"\n{b.status}", style=STATUS_STYLE.get(b.status, ""))
        head.append(" · ")
        head.append_text(meta_line(b))
        self.query_one("#belief-head", Static).update(head)
        evidence = self.query_one("#belief-evidence", OptionList)
        highlighted = evidence.highlighted
        evidence.clear_options()
        options = evidence_rows(detail.evidence)
        evidence.add_options(options)
        rows = [i for i, o in enumerate(options) if not o.disabled]
        if rows:
            evidence.highlighted = max(r for r in rows if r <= max(highlighted or 0, rows[0]))
        more = self.query_one("#belief-more", VerticalScroll)
        await more.remove_children()
        parts: list[Static] = []
        if detail.links:
            parts.append(Static(Text("Links"), classes="belief-heading"))
            for link in detail.links:
                line = Text(f"{link.kind.replace('_', ' ')} ", style="bold")
                line.append(f"{link.target_kind}: {safe(link.text)}")
                if link.quote:
                    line.append(f" — “{safe(link.quote)}”", style="dim")
                parts.append(Static(line))
        if detail.changes:
            parts.append(Static(Text("History"), classes="belief-heading"))
            for c in detail.changes:
                line = Text(f"{c.at[:16].replace('T', ' ')} ", style="dim")
                line.append(c.action, style="bold")
                if c.model:
                    line.append(f" ({safe(c.model)})", style="dim")
                if c.reason:
                    line.append(f": {safe(c.reason)}")
                parts.append(Static(line))
        await more.mount_all(parts)

    @on(OptionList.OptionSelected, "#belief-evidence")
    def _open_quote(self, event: OptionList.OptionSelected) -> None:
        if self.detail is None or event.option.id is None or self.host.session is None:
            return
        from .episode import EpisodeScreen  # lazy: shown on demand

        quote = self.detail.evidence[int(event.option.id)]
        self.app.push_screen(EpisodeScreen(self.host.session, citation_of(quote)))

    def action_close(self) -> None:
        self.dismiss(None)

    def current(self) -> Belief | None:
        return self.detail.belief if self.detail is not None else None

    async def decided(self, detail: BeliefDetail) -> None:
        await self.show(detail)
