"""The conversation browser: pinned first, then recent, then an Archived tab; type to search
titles and message text; open, pin, archive, rename, forget (confirmed) and export.

It dismisses with ``("open", id)``, ``("new", None)`` or ``None`` (nothing changed).
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, on, work
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static, Tab, Tabs
from textual.widgets.option_list import Option

from ..registers import COLOURS, GLYPHS
from .dialogs import Confirm, TextPrompt

if TYPE_CHECKING:
    from ..app import SadieApp


def when(moment: datetime, now: datetime) -> str:
    if moment.date() == now.date():
        return f"{moment:%H:%M}"
    if moment.year == now.year:
        return f"{moment:%d %b}"
    return f"{moment:%Y-%m-%d}"


def conversation_prompt(c: Any, now: datetime) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    if c.emotion in GLYPHS:
        text.append(GLYPHS[c.emotion], style=f"bold {COLOURS[c.emotion]}")
    else:
        text.append(" ")
    text.append(" ")
    text.append(c.title, style="bold")
    text.append(f"  {when(c.updated_at, now)} · {c.message_count} msgs", style="dim")
    if c.summary:
        text.append("\n  ")
        text.append(" ".join(c.summary.split()), style="dim italic")
    return text


def export_name(title: str, conversation_id: str, now: datetime) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40] or "conversation"
    return f"{now:%Y-%m-%d}-{slug}-{conversation_id[:8]}.md"


class ConversationList(OptionList):
    """The list; printable keys that are not bindings go to the search box."""

    BINDINGS = [
        Binding("enter", "select", "Open", id="browser.open", tooltip="Open the conversation"),
    ]

    def on_key(self, event: events.Key) -> None:
        if event.key in self.screen.active_bindings:
            return
        if event.is_printable and event.character and isinstance(self.screen, BrowserScreen):
            event.stop()
            event.prevent_default()
            # At once, not by message: the next key must already land in the search box.
            self.screen.type_ahead(event.character)


class BrowserScreen(Screen[tuple[str, str | None] | None]):
    BINDINGS = [
        Binding(
            "escape,ctrl+l", "back", "Back", id="browser.back", tooltip="Back to the conversation"
        ),
        Binding("ctrl+n", "new", "New", id="new-conversation", tooltip="Start a new conversation"),
        Binding(
            "slash",
            "search",
            "Search",
            id="browser.search",
            tooltip="Search titles and message text (or just start typing)",
        ),
        Binding("p", "pin", "Pin", id="browser.pin", tooltip="Pin or unpin"),
        Binding("a", "archive", "Archive", id="browser.archive", tooltip="Archive or restore"),
        Binding("r", "rename", "Rename", id="browser.rename", tooltip="Rename"),
        Binding(
            "d",
            "forget",
            "Forget",
            id="browser.forget",
            tooltip="Forget: delete it with its messages (asks first)",
        ),
        Binding(
            "e",
            "export",
            "Export",
            id="browser.export",
            tooltip="Export as Markdown into the home's exports/ folder",
        ),
        Binding(
            "t",
            "toggle_archived",
            "Archived",
            id="browser.archived",
            tooltip="Switch between recent and archived conversations",
        ),
    ]

    DEFAULT_CSS = """
    BrowserScreen {
        #browser-title { height: 1; padding: 0 1; text-style: bold; background: $panel; }
        #browser-search { margin: 0 1; }
        #browser-tabs { margin: 0 1; }
        #browser-list { height: 1fr; margin: 0 1; border: none; }
        #browser-empty { padding: 1 2; color: $sadie-muted; }
    }
    """

    def __init__(self, current: str | None = None) -> None:
        super().__init__()
        self.current = current
        self.conversations: list[Any] = []
        self.archived = False
        self._forgot_current = False

    @property
    def sadie(self) -> SadieApp:
        return self.app  # type: ignore[return-value]

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(Text("Conversations"), id="browser-title")
        yield Input(
            placeholder="search titles and messages  (/)",
            id="browser-search",
            select_on_focus=False,
        )
        yield Tabs(
            Tab("Conversations", id="active"), Tab("Archived", id="archived"), id="browser-tabs"
        )
        yield ConversationList(id="browser-list")
        yield Static(Text(""), id="browser-empty")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#browser-tabs", Tabs).can_focus = False
        self.query_one(ConversationList).focus()
        self.refresh_list()

    # -- listing -----------------------------------------------------------------------------
    def refresh_list(self, keep: str | None = None) -> None:
        self._load(self.query_one("#browser-search", Input).value, self.archived, keep)

    @work(thread=True, exclusive=True, group="browser", exit_on_error=False)
    def _load(self, search: str, archived: bool, keep: str | None) -> None:
        session = self.sadie.session
        if session is None:
            self.app.call_from_thread(self._show, [], keep, "The memory is still opening…")
            return
        found = session.conversations(archived=archived, search=search or None)
        self.app.call_from_thread(self._show, found, keep, None)

    def _show(self, found: list[Any], keep: str | None, note: str | None) -> None:
        self.conversations = found
        now = self.sadie.clock()
        listing = self.query_one(ConversationList)
        previous = keep or self.highlighted_id()
        listing.clear_options()
        options: list[Option] = []
        pinned = [c for c in found if c.pinned]
        rest = [c for c in found if not c.pinned]
        if not self.archived and pinned:
            options.append(Option(Text("Pinned", style="bold"), disabled=True))
            options += [Option(conversation_prompt(c, now), id=c.id) for c in pinned]
            options.append(Option(Text("Recent", style="bold"), disabled=True))
            options += [Option(conversation_prompt(c, now), id=c.id) for c in rest]
        else:
            options += [Option(conversation_prompt(c, now), id=c.id) for c in found]
        listing.add_options(options)
        ids = [o.id for o in options]
        if previous in ids:
            listing.highlighted = ids.index(previous)
        elif found:
            listing.highlighted = next(i for i, o in enumerate(options) if not o.disabled)
        search = self.query_one("#browser-search", Input).value
        empty = self.query_one("#browser-empty", Static)
        if note:
            message = note
        elif found:
            message = ""
        elif search:
            message = f"No conversation mentions “{search}”."
        elif self.archived:
            message = "Nothing is archived."
        else:
            message = "No conversations yet. Escape goes back to start one."
        empty.update(Text(message))
        empty.display = bool(message)

    def highlighted_id(self) -> str | None:
        listing = self.query_one(ConversationList)
        if listing.highlighted is None:
            return None
        return listing.get_option_at_index(listing.highlighted).id

    def selected(self) -> Any | None:
        cid = self.highlighted_id()
        return next((c for c in self.conversations if c.id == cid), None)

    @on(Input.Changed, "#browser-search")
    def _search_changed(self) -> None:
        self.refresh_list()

    @on(Input.Submitted, "#browser-search")
    def _search_submitted(self) -> None:
        self.query_one(ConversationList).focus()

    def type_ahead(self, character: str) -> None:
        search = self.query_one("#browser-search", Input)
        search.focus()
        search.insert_text_at_cursor(character)

    @on(Tabs.TabActivated)
    def _tab(self, event: Tabs.TabActivated) -> None:
        archived = event.tab.id == "archived"
        if archived != self.archived:
            self.archived = archived
            self.refresh_list()

    # enter on the list opens (OptionList's own binding): listed in help for completeness.
    @on(OptionList.OptionSelected, "#browser-list")
    def _open(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(("open", event.option.id))

    # -- actions -----------------------------------------------------------------------------
    def action_back(self) -> None:
        self.dismiss(("new", None) if self._forgot_current else None)

    def action_new(self) -> None:
        self.dismiss(("new", None))

    def action_search(self) -> None:
        self.query_one("#browser-search", Input).focus()

    def action_toggle_archived(self) -> None:
        tabs = self.query_one(Tabs)
        tabs.active = "active" if self.archived else "archived"

    def _need_selection(self) -> Any | None:
        c = self.selected()
        if c is None:
            self.notify("Choose a conversation first", severity="warning", timeout=2)
        return c

    def action_pin(self) -> None:
        if (c := self._need_selection()) is not None:
            self._change("pin", c.id, not c.pinned)
            self.notify("Pinned" if not c.pinned else "Unpinned", timeout=2)

    def action_archive(self) -> None:
        if (c := self._need_selection()) is not None:
            archived = c.archived_at is None
            self._change("archive", c.id, archived)
            self.notify(
                f"Archived “{c.title}” (t shows the archive)"
                if archived
                else f"Restored “{c.title}”",
                timeout=3,
            )

    def action_rename(self) -> None:
        c = self._need_selection()
        if c is None:
            return

        def renamed(title: str | None) -> None:
            if title:
                self._change("rename", c.id, title)

        self.app.push_screen(TextPrompt("Rename the conversation", c.title), renamed)

    def action_forget(self) -> None:
        c = self._need_selection()
        if c is None:
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._change("forget", c.id, None)
                if c.id == self.current:
                    self._forgot_current = True
                self.notify(f"Forgot “{c.title}”", timeout=3)

        self.app.push_screen(
            Confirm(
                f"Forget “{c.title}”?",
                f"Its {c.message_count} messages and attached chips are deleted for good.",
            ),
            confirmed,
        )

    @work(thread=True, group="browser-change", exit_on_error=False)
    def _change(self, what: str, conversation_id: str, value: Any) -> None:
        from ...engine.errors import SadieError

        session = self.sadie.session
        assert session is not None
        try:
            if what == "pin":
                session.pin(conversation_id, value)
            elif what == "archive":
                session.archive(conversation_id, value)
            elif what == "rename":
                session.rename(conversation_id, value)
            elif what == "forget":
                session.forget(conversation_id)
        except SadieError as exc:
            self.app.call_from_thread(self.notify, exc.one_line(), severity="error")
        self.app.call_from_thread(self.refresh_list, conversation_id)

    def action_export(self) -> None:
        if (c := self._need_selection()) is not None:
            self._export(c.id, c.title)

    @work(thread=True, group="browser-change", exit_on_error=False)
    def _export(self, conversation_id: str, title: str) -> None:
        from ...engine.errors import SadieError

        session = self.sadie.session
        assert session is not None
        try:
            text = session.export(conversation_id, "md")
            folder = Path(session.home) / "exports"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / export_name(title, conversation_id, self.sadie.clock())
            path.write_text(text, encoding="utf-8")
        except (SadieError, OSError) as exc:
            message = exc.one_line() if isinstance(exc, SadieError) else str(exc)
            self.app.call_from_thread(self.notify, message, title="Export failed", severity="error")
            return
        self.app.call_from_thread(self.notify, str(path), title="Exported", timeout=8)
