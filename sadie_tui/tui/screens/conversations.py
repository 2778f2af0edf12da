"""The conversation browser: pinned first, then recent, then an Archived tab; type to search
titles and message text (each row then shows the match); open, pin, archive, rename, forget
(confirmed) and export. A row is always highlighted while there is one: the current
conversation's at first, the same place after a row leaves the list.

It dismisses with ``("open", id)``, ``("new", None)`` or ``None`` (nothing changed).
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import events, on, work
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static, Tab, Tabs
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from ...display import safe
from ...engine.errors import SadieError
from ...engine.operations import (
    Archive,
    Export,
    ExportFormat,
    Forget,
    ListConversations,
    Pin,
    Rename,
    ShowConversation,
    Unarchive,
    Unpin,
)
from ...engine.privacy.unlock import is_encrypted
from ...paths import write_private
from ..previews import ROOM, Preview, describe, find, summary_preview
from ..registers import GLYPHS, colour
from ..widgets.fitting import FittingFooter
from .dialogs import Confirm, ExportDialog, TextPrompt

if TYPE_CHECKING:
    from ...engine.conversations import Conversation
    from ..host import SadieHost


def when(moment: datetime, now: datetime) -> str:
    if moment.date() == now.date():
        return f"{moment:%H:%M}"
    if moment.year == now.year:
        return f"{moment:%d %b}"
    return f"{moment:%Y-%m-%d}"


#: How a search match stands out in a row.
MATCH_STYLE = "bold underline not dim"


def conversation_prompt(
    c: Conversation,
    now: datetime,
    preview: Preview | None = None,
    search: str = "",
    dark: bool = True,
) -> Text:
    """A row: sigil, title, when and how long; the preview (the summary unless given) below,
    with the search match emphasised in both."""
    preview = preview or Preview(summary_preview(c.summary))
    text = Text(no_wrap=True, overflow="ellipsis")
    if c.emotion in GLYPHS:
        text.append(GLYPHS[c.emotion], style=f"bold {colour(c.emotion, dark=dark)}")
    else:
        text.append(" ")
    text.append(" ")
    start = len(text)
    title = safe(c.title)
    text.append(title, style="bold")
    if search and (span := find(title, search)) is not None:
        text.stylize(MATCH_STYLE, start + span[0], start + span[1])
    text.append(f"  {when(c.updated_at, now)} · {c.message_count} msgs", style="dim")
    if preview.text:
        text.append("\n  ")
        start = len(text)
        shown = safe(preview.text)
        text.append(shown, style="dim italic")
        if preview.span is not None and shown == preview.text:  # offsets into the same text
            text.stylize(MATCH_STYLE, start + preview.span[0], start + preview.span[1])
    return text


def export_name(title: str, conversation_id: str, now: datetime) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40] or "conversation"
    return f"{now:%Y-%m-%d}-{slug}-{conversation_id[:8]}.md"


def export_folder() -> Path:
    """Where an export is offered first: ``~/Documents`` if there is one, else ``~`` (never
    the memory's home, which is hidden in the platform's data folder)."""
    home = Path.home()
    documents = home / "Documents"
    return documents if documents.is_dir() else home


class ConversationList(OptionList):
    """The list; printable keys that are not bindings go to the search box."""

    BINDINGS = [
        Binding("enter", "select", "Open", id="browser.open", tooltip="Open the conversation"),
    ]

    def on_key(self, event: events.Key) -> None:
        screen = self.screen
        # Keys typed in one burst after / (or a first letter) reach the list before the
        # search box has focus: they are the search's, not the row keys' (e exports).
        typing = isinstance(screen, BrowserScreen) and screen.search_pending
        if event.key in screen.active_bindings and not typing:
            return
        if event.is_printable and event.character and isinstance(screen, BrowserScreen):
            event.stop()
            event.prevent_default()
            # At once, not by message: the next key must already land in the search box.
            screen.type_ahead(event.character)

    def on_focus(self) -> None:
        if isinstance(self.screen, BrowserScreen):
            self.screen.search_pending = False  # back on the list: letters are row keys

    def row_ids(self) -> list[str]:
        """The ids of the rows that can be highlighted (not the section headings), in order."""
        return [
            option.id
            for option in (self.get_option_at_index(i) for i in range(self.option_count))
            if not option.disabled and option.id is not None
        ]

    def highlighted_id(self) -> str | None:
        """The highlighted conversation's id (None: nothing is highlighted)."""
        if self.highlighted is None:
            return None
        return self.get_option_at_index(self.highlighted).id

    def highlighted_row(self) -> int | None:
        """The highlighted row's place among the rows (headings not counted)."""
        cid = self.highlighted_id()
        rows = self.row_ids()
        return rows.index(cid) if cid in rows else None

    def highlight_row(self, row: int) -> None:
        """Highlight the ``row``-th highlightable row (clamped to the last)."""
        rows = [i for i in range(self.option_count) if not self.get_option_at_index(i).disabled]
        if rows:
            self.highlighted = rows[max(0, min(row, len(rows) - 1))]


class SearchBox(Input):
    """The search box. Escape, Up and Down leave it for the list, the filter kept, so the
    row keys act on the highlighted row (escape on the list then clears the filter)."""

    BINDINGS = [
        Binding(
            "escape",
            "to_list",
            "To the list",
            id="browser.to-list",
            tooltip="Leave the search box for the list, keeping the search (escape on the"
            " list clears it)",
        ),
        Binding(
            "down,up",
            "to_list",
            "To the list",
            id="browser.to-list-arrows",
            show=False,
            tooltip="Down or up in the search box: on to the list, the search kept",
        ),
    ]

    def action_to_list(self) -> None:
        self.screen.query_one(ConversationList).focus()


class BrowserScreen(Screen[tuple[str, str | None] | None]):
    BINDINGS = [
        # Before "back": while a search filters the list, escape clears it first.
        Binding(
            "escape",
            "clear_search",
            "Clear search",
            id="browser.clear-search",
            tooltip="Clear the search (escape again goes back)",
        ),
        Binding(
            "escape,ctrl+l",
            "back",
            "Back",
            id="browser.back",
            tooltip="Back to the conversation (escape clears a search first)",
        ),
        Binding("ctrl+n", "new", "New", id="new-conversation", tooltip="Start a new conversation"),
        Binding(
            "slash",
            "search",
            "Search",
            id="browser.search",
            tooltip="Search titles and message text (or just start typing)",
        ),
        # One key, one id, named for what it does to the highlighted row.
        Binding("p", "pin", "Pin", id="browser.pin", tooltip="Pin the conversation"),
        Binding("p", "unpin", "Unpin", id="browser.pin", tooltip="Unpin the conversation"),
        # One key, one id (so one remap moves both), named for what it does in each tab.
        Binding(
            "a", "archive", "Archive", id="browser.archive", tooltip="Archive the conversation"
        ),
        Binding(
            "a",
            "restore",
            "Restore",
            id="browser.archive",
            tooltip="Restore the conversation from the archive",
        ),
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
            tooltip="Export as Markdown or JSON, to a file you choose",
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

    def __init__(self, host: SadieHost, current: str | None = None) -> None:
        super().__init__()
        self.host = host
        self.current = current
        self.conversations: list[Conversation] = []
        self.archived = False
        self._forgot_current = False
        self.search_pending = False  # focus is on its way to the search box
        # The row highlighted in each tab when it was left, to come back to.
        self._left_at: dict[bool, str | None] = {False: current, True: None}

    def compose(self):
        yield Static(Text("Conversations"), id="browser-title")
        yield SearchBox(
            placeholder="search titles and messages  (/)",
            id="browser-search",
            select_on_focus=False,
        )
        yield Tabs(
            Tab("Conversations", id="active"), Tab("Archived", id="archived"), id="browser-tabs"
        )
        yield ConversationList(id="browser-list")
        yield Static(Text(""), id="browser-empty")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.query_one("#browser-tabs", Tabs).can_focus = False
        self.query_one(ConversationList).focus()
        self.refresh_list(keep=self.current)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_search":
            # False passes escape on to "back".
            return bool(self.query_one("#browser-search", Input).value)
        if action == "archive":
            return not self.archived
        if action == "restore":
            return self.archived
        if action in ("pin", "unpin"):
            c = self.selected()
            return (c is not None and c.pinned) == (action == "unpin")
        return super().check_action(action, parameters)

    # -- listing -----------------------------------------------------------------------------
    def refresh_list(self, keep: str | None = None, row: int | None = None) -> None:
        """List again; highlight ``keep`` if it is still listed, else the ``row``-th row, else
        the row highlighted now, else the first."""
        search = self.query_one("#browser-search", Input).value
        # A row's preview line starts two cells in; a scrollbar may take one more.
        room = self.query_one(ConversationList).content_size.width - 3
        self._load(search, self.archived, keep, row, room if room > 20 else ROOM)

    @work(thread=True, exclusive=True, group="browser", exit_on_error=False)
    def _load(
        self, search: str, archived: bool, keep: str | None, row: int | None, room: int
    ) -> None:
        worker = get_current_worker()
        session = self.host.session
        if session is None:
            self.app.call_from_thread(self._show, [], {}, keep, row, "The memory is still opening…")
            return
        found = session.call(ListConversations(archived=archived, search=search or None))
        previews = describe(
            found,
            search,
            lambda cid: session.call(ShowConversation(cid)).messages,
            room=room,
            cancelled=lambda: worker.is_cancelled,
        )
        if worker.is_cancelled:  # a newer listing (the next keystroke) is on its way
            return
        self.app.call_from_thread(self._show, found, previews, keep, row, None)

    def _show(
        self,
        found: list[Conversation],
        previews: dict[str, Preview],
        keep: str | None,
        row: int | None,
        note: str | None,
    ) -> None:
        self.conversations = found
        now = self.host.clock()
        search = self.query_one("#browser-search", Input).value
        listing = self.query_one(ConversationList)
        previous = listing.highlighted_id()
        listing.clear_options()

        dark = self.app.current_theme.dark

        def option(c: Conversation) -> Option:
            prompt = conversation_prompt(c, now, previews.get(c.id), search, dark)
            return Option(prompt, id=c.id)

        options: list[Option] = []
        pinned = [c for c in found if c.pinned]
        rest = [c for c in found if not c.pinned]
        if not self.archived and pinned:
            options.append(Option(Text("Pinned", style="bold"), disabled=True))
            options += [option(c) for c in pinned]
            if rest:  # no heading over nothing (a search whose rows are all pinned)
                options.append(Option(Text("Recent", style="bold"), disabled=True))
                options += [option(c) for c in rest]
        else:
            options += [option(c) for c in found]
        listing.add_options(options)
        rows = listing.row_ids()
        if keep in rows:
            listing.highlight_row(rows.index(keep))
        elif row is not None:
            listing.highlight_row(row)
        elif previous in rows:
            listing.highlight_row(rows.index(previous))
        else:
            listing.highlight_row(0)
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
        self.refresh_bindings()  # the highlighted row may be pinned now, or unpinned

    def selected(self) -> Conversation | None:
        cid = self.query_one(ConversationList).highlighted_id()
        return next((c for c in self.conversations if c.id == cid), None)

    @on(Input.Changed, "#browser-search")
    def _search_changed(self) -> None:
        self.refresh_bindings()  # escape: clear the search, or go back
        self.refresh_list()

    @on(Input.Submitted, "#browser-search")
    def _search_submitted(self) -> None:
        self.query_one(ConversationList).focus()

    def type_ahead(self, character: str) -> None:
        search = self.query_one("#browser-search", Input)
        self.search_pending = True
        search.focus()
        search.insert_text_at_cursor(character)

    @on(Tabs.TabActivated)
    def _tab(self, event: Tabs.TabActivated) -> None:
        archived = event.tab.id == "archived"
        if archived != self.archived:
            self._left_at[self.archived] = self.query_one(ConversationList).highlighted_id()
            self.archived = archived
            self.refresh_bindings()  # "a" archives or restores
            self.refresh_list(keep=self._left_at[archived])

    # enter on the list opens (OptionList's own binding): listed in help for completeness.
    @on(OptionList.OptionSelected, "#browser-list")
    def _open(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(("open", event.option.id))

    # -- actions -----------------------------------------------------------------------------
    def action_back(self) -> None:
        self.dismiss(("new", None) if self._forgot_current else None)

    def action_new(self) -> None:
        self.dismiss(("new", None))

    def action_clear_search(self) -> None:
        self.query_one("#browser-search", Input).value = ""

    def action_search(self) -> None:
        self.search_pending = True
        self.query_one("#browser-search", Input).focus()

    def action_toggle_archived(self) -> None:
        tabs = self.query_one(Tabs)
        tabs.active = "active" if self.archived else "archived"

    def _need_selection(self) -> Conversation | None:
        c = self.selected()
        if c is None:
            self.notify("Choose a conversation first", severity="warning", timeout=2)
        return c

    def action_pin(self) -> None:
        if (c := self._need_selection()) is not None:
            self._change("pin", c.id, not c.pinned)
            self.notify("Pinned" if not c.pinned else "Unpinned", timeout=2)

    def action_unpin(self) -> None:
        self.action_pin()  # the same toggle, under the word the footer shows

    @on(OptionList.OptionHighlighted, "#browser-list")
    def _highlighted(self) -> None:
        self.refresh_bindings()  # "p" pins or unpins the row

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

    def action_restore(self) -> None:
        self.action_archive()  # the same toggle: only its name in the footer differs

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

    def _change(self, what: str, conversation_id: str, value: bool | str | None) -> None:
        """Change the conversation, then list again with the highlight where it was: on the
        renamed row, or on whatever takes the place of one that moved or left."""
        listing = self.query_one(ConversationList)
        row = listing.highlighted_row() if listing.highlighted_id() == conversation_id else None
        self._apply(what, conversation_id, value, None if what == "rename" else row)

    @work(thread=True, group="browser-change", exit_on_error=False)
    def _apply(
        self, what: str, conversation_id: str, value: bool | str | None, row: int | None
    ) -> None:
        session = self.host.session
        assert session is not None
        try:
            if what == "pin":
                session.call(Pin(conversation_id) if value is True else Unpin(conversation_id))
            elif what == "archive":
                session.call(
                    Archive(conversation_id) if value is True else Unarchive(conversation_id)
                )
            elif what == "rename":
                session.call(Rename(conversation_id, str(value or "")))
            elif what == "forget":
                session.call(Forget(conversation_id))
        except SadieError as exc:
            self.app.call_from_thread(self.notify, exc.one_line(), severity="error")
        if row is None:
            self.app.call_from_thread(self.refresh_list, conversation_id)
        else:
            self.app.call_from_thread(self.refresh_list, None, row)

    def action_export(self) -> None:
        """Ask where, then write the highlighted conversation there and say where it went."""
        if (c := self._need_selection()) is None:
            return
        session = self.host.session
        assert session is not None
        name = export_name(c.title, c.id, self.host.clock())
        encrypted = is_encrypted(Path(session.home))

        def write(path: Path, fmt: str) -> None:
            write_private(
                path, session.call(Export(c.id, cast(ExportFormat, fmt)))
            )  # a journal: 0600 when new

        # An export is plain text: from an encrypted memory, it leaves the encryption.
        plain = " in plain text, outside the memory's encryption" if encrypted else ""

        def written(path: Path | None) -> None:
            if path is not None:
                self.notify(f"“{c.title}” written to {path}{plain}", title="Exported", timeout=8)

        dialog = ExportDialog(f"Export “{c.title}” to", export_folder() / name, write)
        self.app.push_screen(dialog, written)
