"""The episode a citation points to, in a modal, with the quoted words highlighted and
scrolled into view."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...display import safe
from ...engine.errors import NotFoundError, SadieError
from ...engine.events import CitationView
from ...engine.operations import GetEpisode
from ..host import from_thread
from ..widgets.citations import LABEL_HELP

#: What a citation to a removed note opens to (its file was deleted since it was cited).
REMOVED = "This note was removed from the memory: its file was deleted after it was cited."

if TYPE_CHECKING:
    from ...engine.episodes import Episode
    from ...engine.session import SessionProtocol


def quote_pattern(quote: str) -> re.Pattern[str] | None:
    """The quote as a pattern that ignores case and runs of whitespace (as the checker does)."""
    words = quote.split()
    if not words:
        return None
    return re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)


def highlight(paragraph: str, pattern: re.Pattern[str] | None) -> tuple[Text, bool]:
    text = Text(paragraph)
    found = False
    if pattern is not None:
        for match in pattern.finditer(paragraph):
            text.stylize("bold reverse", match.start(), match.end())
            found = True
    return text, found


class EpisodeScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,q", "dismiss_screen", "Close", id="close-episode"),
        Binding("y", "copy_quote", "Copy quote", id="copy-quote"),
    ]

    DEFAULT_CSS = """
    EpisodeScreen {
        align: center middle;
        #episode-box {
            width: 90%;
            max-width: 110;
            height: 85%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        #episode-head { height: auto; margin: 0 0 1 0; }
        #episode-text { height: 1fr; }
        #episode-text > Static { margin: 0 0 1 0; }
        #episode-foot { height: 1; color: $sadie-muted; }
    }
    """

    def __init__(self, session: SessionProtocol, citation: CitationView) -> None:
        """Open ``citation``'s note; one that was removed says so, with the quote kept."""
        super().__init__()
        self.session = session
        self.citation = citation

    def compose(self):
        c = self.citation
        with Vertical(id="episode-box"):
            head = Text(safe(c.title or "episode"), style="bold")
            if c.date:
                head.append(f"  {c.date}", style="dim")
            head.append(f"\n{c.label}", style="bold")
            help_text = LABEL_HELP.get(c.label)
            if help_text:
                head.append(f" — {help_text}", style="dim")
            yield Static(head, id="episode-head")
            yield VerticalScroll(Static(Text("loading…")), id="episode-text")
            yield Static(Text("escape closes · y copies the quote"), id="episode-foot")

    def on_mount(self) -> None:
        self._load()

    @work(thread=True, exit_on_error=False)
    def _load(self) -> None:
        try:
            episode = self.session.call(GetEpisode(self.citation.episode_id))
        except NotFoundError:  # a note since removed: the screen says so
            episode = None
        except SadieError as exc:
            self.app.call_from_thread(self.notify, exc.one_line(), severity="error")
            episode = None
        from_thread(self.app, self._show, episode)

    async def _show(self, episode: Episode | None) -> None:
        scroller = self.query_one("#episode-text", VerticalScroll)
        await scroller.remove_children()
        if episode is None:
            # Its file was deleted (or the memory rebuilt): the citation still shows what it quoted.
            gone = [Static(Text(REMOVED, style="italic"), id="episode-removed")]
            if self.citation.quote:
                gone.append(Static(Text(f"“{safe(self.citation.quote)}”", style="dim")))
            await scroller.mount_all(gone)
            return
        kind, body = safe(episode.kind), safe(episode.text)
        self.query_one("#episode-box").border_title = Text(kind)  # from a note: text
        pattern = quote_pattern(safe(self.citation.quote))
        paragraphs = [p for p in re.split(r"\n\s*\n", body) if p.strip()] or [body]
        target: Static | None = None
        widgets = []
        for paragraph in paragraphs:
            text, found = highlight(paragraph, pattern)
            widget = Static(text, classes="-quoted" if found else "")
            if found and target is None:
                target = widget
            widgets.append(widget)
        await scroller.mount_all(widgets)
        if target is not None:
            scroller.scroll_to_widget(target, animate=False, top=True)
        elif self.citation.quote:
            note = "the quoted words are not in this note word for word"
            self.query_one("#episode-foot", Static).update(
                Text(f"{note} · escape closes · y copies the quote")
            )

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)

    def action_copy_quote(self) -> None:
        self.app.copy_to_clipboard(self.citation.quote)
        self.notify("Copied the quote", timeout=2)
