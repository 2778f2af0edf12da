"""The citation sidebar: one reply's validated citations (the focused reply, else the newest)
— episode title and date, the quote, the support label — under a caption naming the reply,
or what is happening to its sources while it streams. The sidebar follows one reply until
told to follow another, and shows its sources again when told they changed. Enter (or a
click) on a citation posts ``CitationItem.Selected`` up to the screen, which opens the
episode; ctrl+y copies the quote."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from ...display import safe
from ...engine.events import CitationView

LABEL_HELP = {
    "verbatim": "these exact words are in that note (checked, not the model's word)",
    "paraphrase": "the idea is in that note, in other words",
    "reading between the lines": "sadie connecting dots: no note says it in these words",
    "found by sadie": "the model gave no citations: sadie matched this sentence of the reply"
    " to that note itself",
}

# What the sidebar says when a reply has no citation, by what the model's own tail was.
EMPTY_NOTES = {
    "empty": "This reply cites no notes: the model said none of them supports it.",
    "missing": "The model ignored the citation format, and no note could be matched to this reply.",
    "unasked": "This model does not write citations itself (sadie stopped asking), and no note"
    " could be matched to this reply.",
    "unusable": "The model's citations did not check out (notes it was not shown, or copied"
    " placeholders), and none could be recovered.",
    "ok": "This reply cites no notes.",
}


# What the sidebar says while a reply's sources are not settled yet, by ``Sources.state``.
STATE_NOTES = {
    "waiting": "The sources of this reply appear when it is complete.",
    "checking": "checking sources…",
    "writing": "The reply is complete; the model is writing its sources…",
    "stopped": "This reply was stopped before its sources were checked.",
    "failed": "This reply failed: it has no checked sources.",
}


def stopped_note(arrived: int) -> str:
    """What a reply stopped while the model wrote its sources says under it: how many of
    its citations had arrived (each was checked; the citation pass did not run)."""
    return f"■ stopped while writing its sources: {arrived} checked"


@dataclass
class Sources:
    """What one reply rests on, as the sidebar shows it. ``state``: waiting (streaming),
    writing (the prose is complete, the model writes its citations), checking (the citation
    pass runs), done, stopped (esc before the check), failed. ``stopped``: the reply was
    stopped while the model wrote its sources, and this many citations had arrived."""

    citations: tuple[CitationView, ...] = ()
    found: tuple[CitationView, ...] = ()
    unsupported: int = 0
    tail: str = "ok"
    repaired: bool = False
    note: str = ""  # why the citation pass gave nothing, if it ran
    state: str = "done"
    stopped: int | None = None

    @property
    def count(self) -> int:
        return len(self.citations) + len(self.found)

    @classmethod
    def stored(cls, citations: list[dict], metadata: dict, status: str) -> Sources:
        """A stored reply's sources (its message's citations and metadata)."""
        passed = metadata.get("citation_pass")
        sources = cls(
            citations=tuple(CitationView.from_json(c) for c in citations or ()),
            found=tuple(CitationView.from_json(c) for c in metadata.get("found_by_sadie") or ()),
            unsupported=len(metadata.get("unsupported") or ()),
            tail=str(metadata.get("tail") or "ok"),
            repaired=bool(metadata.get("repaired")),
            note="" if passed in (None, "ok") else str(passed),
        )
        arrived = metadata.get("stopped_in_sources")
        if isinstance(arrived, int) and not isinstance(arrived, bool):
            sources.stopped = arrived
        if status == "interrupted" and not sources.count:
            sources.state = "stopped"
        elif status == "error" and not sources.count:
            sources.state = "failed"
        return sources


class HasSources(Protocol):
    """What the sidebar follows: a reply with its sources and a caption naming it."""

    sources: Sources

    def caption(self) -> str: ...


class CitationItem(Widget, can_focus=True):
    DEFAULT_CSS = """
    CitationItem {
        height: auto;
        padding: 0 1;
        margin: 0 0 1 0;
        &:focus {
            background: $primary 20%;
        }
        &:hover {
            background: $primary 10%;
        }
    }
    """

    BINDINGS = [
        Binding(
            "enter",
            "open",
            "Open episode",
            id="open-citation",
            tooltip="Open the episode with the quote highlighted",
        ),
        Binding(
            "down",
            "step(1)",
            "Next source",
            id="next-citation",
            show=False,
            tooltip="The next citation in the sidebar (tab moves past the list)",
        ),
        Binding(
            "up",
            "step(-1)",
            "Previous source",
            id="previous-citation",
            show=False,
            tooltip="The previous citation in the sidebar",
        ),
        # The screen's ctrl+y (a priority binding) copies the quote; this one names it in
        # the footer while a citation has focus.
        Binding("ctrl+y", "copy", "Copy quote", id="copy", tooltip="Copy the quote"),
    ]

    class Selected(Message):
        """A citation was opened: the screen shows its episode."""

        def __init__(self, citation: CitationView) -> None:
            super().__init__()
            self.citation = citation

    def __init__(self, citation: CitationView, number: int) -> None:
        super().__init__()
        self.citation = citation
        self.number = number

    def on_mount(self) -> None:
        self.tooltip = LABEL_HELP.get(self.citation.label, "")

    def render(self) -> Text:
        c = self.citation
        text = Text()
        text.append(f"{self.number}. ", style="bold")
        text.append(safe(c.title or f"episode {c.episode_id[:8]}"), style="bold")
        if c.date:
            text.append(f"  {c.date}", style="dim")
        text.append("\n“")
        text.append(" ".join(safe(c.quote).split()), style="italic")
        text.append("”\n")
        label_style = {
            "verbatim": "green",
            "paraphrase": "yellow",
        }.get(c.support, "cyan")
        if c.origin == "sadie":
            label_style = "magenta"
            label = f"{c.label} · {c.support}"
        else:
            label = c.label
        text.append(label, style=f"bold {label_style}")
        if (
            c.backs
            and " ".join(c.quote.split()).casefold() not in " ".join(c.backs.split()).casefold()
        ):
            # Which sentence of the reply this note backs (unless that sentence quotes it
            # whole, as an offline answer does), and what of it the note lacks.
            backs = " ".join(safe(c.backs).split())
            if len(backs) > 80:
                backs = backs[:79].rsplit(" ", 1)[0] + "…"
            text.append(f"\nbacks: “{backs}”", style="dim")
            if c.unbacked:
                missing = ", ".join(safe(d) for d in c.unbacked)
                text.append(f"\nnot in this note: {missing}", style="yellow")
        if c.doubt:
            # Really in the note, but it does not say what the reply says (``reply.claims``).
            text.append(f"\ndoes not establish it: {safe(c.doubt)}", style="yellow")
        return text

    def action_open(self) -> None:
        self.post_message(self.Selected(self.citation))

    def action_step(self, step: int) -> None:
        """Focus the citation ``step`` places away in the list (the ends stay put)."""
        items = list(self.parent.query_children(CitationItem)) if self.parent else [self]
        at = items.index(self) + step
        if 0 <= at < len(items):
            items[at].focus()
            items[at].scroll_visible()

    def on_click(self) -> None:
        self.post_message(self.Selected(self.citation))

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.citation.quote)
        self.app.notify("Copied the quote", timeout=2)


class CitationSidebar(VerticalScroll, can_focus=False):
    DEFAULT_CSS = """
    CitationSidebar {
        width: 38;
        height: 1fr;
        border-left: tall $panel;
        padding: 0 0 0 1;
        #sources-title {
            text-style: bold;
            color: $sadie-assistant;
        }
        #sources-caption {
            color: $sadie-muted;
            margin: 0 0 1 0;
        }
        #sources-empty {
            color: $sadie-muted;
        }
        #sources-state {
            color: $sadie-muted;
            margin: 0 0 1 0;
            display: none;
        }
        #sources-unsupported {
            color: $warning;
            margin: 0 0 1 0;
            display: none;
        }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.citations: tuple[CitationView, ...] = ()
        self.sources: Sources | None = None
        self.caption = ""
        self.following: HasSources | None = None  # the reply whose sources are shown

    async def follow(self, reply: HasSources | None) -> None:
        """Show ``reply``'s sources (the focused reply, or the newest) until told to follow
        another; None: none."""
        self.following = reply
        if reply is None:
            await self.reset()
            return
        await self.show(reply.sources, caption=reply.caption())

    async def sources_changed(self, reply: HasSources) -> None:
        """``reply``'s sources changed: shown again if it is the reply followed."""
        if self.following is reply:
            await self.follow(reply)

    def compose(self):
        yield Static("Sources", id="sources-title", markup=False)
        yield Static("", id="sources-caption", markup=False)
        yield Static("", id="sources-unsupported", markup=False)
        yield Static("", id="sources-state", markup=False)
        yield Static("The notes a reply rests on appear here.", id="sources-empty", markup=False)

    async def show(self, sources: Sources, *, caption: str = "") -> None:
        """Show ``sources`` under ``caption`` (which reply they belong to)."""
        self.sources, self.caption = sources, caption
        self.query_one("#sources-caption", Static).update(Text(safe(caption)))
        shown = (*sources.citations, *sources.found)
        if shown != self.citations or not self.query(CitationItem):
            self.citations = shown
            await self.query(CitationItem).remove()
            await self.mount_all([CitationItem(c, n) for n, c in enumerate(shown, start=1)])
        flagged = self.query_one("#sources-unsupported", Static)
        flagged.display = sources.unsupported > 0
        noun = "detail" if sources.unsupported == 1 else "details"
        flagged.update(Text(f"⚠ {sources.unsupported} {noun} not found in your notes (underlined)"))
        state = self.query_one("#sources-state", Static)
        note = ""
        if sources.stopped is not None:
            n = sources.stopped
            note = (
                f"Stopped while the model wrote its sources: {n} had arrived and"
                f" {'was' if n == 1 else 'were'} checked (no second pass)."
                if n
                else "Stopped while the model wrote its sources: none had arrived whole."
            )
            if sources.found and not sources.citations:
                note += " sadie matched these notes to the reply itself:"
        elif sources.repaired and sources.tail == "unasked":
            note = "This model does not write citations itself; these came from a checked pass."
        elif sources.repaired:
            note = "The model skipped the citation format; these came from a second, checked pass."
        elif sources.found and not sources.citations:
            note = "The model gave no citations. sadie matched these notes to the reply itself:"
        elif sources.state in ("checking", "writing"):
            note = STATE_NOTES[sources.state]
        elif sources.note and not sources.citations:
            note = f"The citation check gave nothing: {safe(sources.note)}."
        state.display = bool(note)
        state.update(Text(note))
        empty = self.query_one("#sources-empty", Static)
        empty.display = (
            not shown and sources.state not in ("checking", "writing") and sources.stopped is None
        )
        if sources.state in ("waiting", "stopped", "failed"):
            empty_text = STATE_NOTES[sources.state]
        else:
            empty_text = EMPTY_NOTES.get(sources.tail, EMPTY_NOTES["ok"])
        empty.update(Text(empty_text) if not shown else "")

    async def reset(self) -> None:
        await self.show(Sources())
        self.sources = None
        self.query_one("#sources-empty", Static).update(
            Text("The notes a reply rests on appear here.")
        )
