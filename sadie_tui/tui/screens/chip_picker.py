"""The chip picker: one input searching all six kinds at once (wiki, source, brief,
graph_entity, discourse, record) as you type; enter attaches the highlighted one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ...display import safe
from ...engine.errors import SadieError
from ...engine.operations import FindAttachable
from ..messages import MemoryRefreshed
from ..widgets.chip_bar import KIND_NAMES

if TYPE_CHECKING:
    from ...engine.chips import Candidate
    from ...engine.session import SessionProtocol

LIMIT = 30
SNIPPET_WIDTH = 72  # one line under the label, even in a narrow terminal


def candidate_prompt(candidate: Candidate) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{KIND_NAMES.get(candidate.kind, candidate.kind):<7}", style="bold cyan")
    text.append(" ")
    text.append(safe(candidate.label), style="bold")
    if candidate.date:
        text.append(f"  {candidate.date}", style="dim")
    snippet = " ".join(safe(candidate.snippet or "").split())
    if len(snippet) > SNIPPET_WIDTH:
        snippet = snippet[: SNIPPET_WIDTH - 1].rstrip() + "…"
    if snippet:
        text.append("\n        ")
        text.append(snippet, style="dim")
    return text


class ChipPickerScreen(ModalScreen["Candidate | None"]):
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="picker.cancel"),
        Binding("down", "move(1)", "Next", show=False, id="picker.next"),
        Binding("up", "move(-1)", "Previous", show=False, id="picker.previous"),
    ]

    DEFAULT_CSS = """
    ChipPickerScreen {
        align: center middle;
        #picker-box {
            width: 90%;
            max-width: 100;
            height: 80%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        #picker-title { height: 1; text-style: bold; }
        #picker-results { height: 1fr; border: none; }
        #picker-foot { height: 1; color: $sadie-muted; }
    }
    """

    def __init__(self, session: SessionProtocol) -> None:
        super().__init__()
        self.session = session
        self.candidates: list[Candidate] = []

    def compose(self):
        with Vertical(id="picker-box"):
            yield Static(Text("Attach context"), id="picker-title")
            yield Input(
                placeholder="search wiki, notes, briefs, people, today cards…", id="picker-query"
            )
            yield OptionList(id="picker-results")
            yield Static(Text("enter attaches · ↑↓ choose · escape cancels"), id="picker-foot")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self._search("")

    def on_memory_refreshed(self, _: MemoryRefreshed) -> None:
        """Notes came in from another terminal: search again, so they can be attached."""
        self._search(self.query_one(Input).value)

    @on(Input.Changed, "#picker-query")
    def _changed(self, event: Input.Changed) -> None:
        self._search(event.value)

    @work(thread=True, exclusive=True, group="picker", exit_on_error=False)
    def _search(self, query: str) -> None:
        try:
            found = self.session.call(FindAttachable(query, limit=LIMIT))
        except SadieError as exc:
            self.app.call_from_thread(self.notify, exc.one_line(), severity="error")
            return
        self.app.call_from_thread(self._show, query, found)

    def _show(self, query: str, found: list[Candidate]) -> None:
        if query != self.query_one(Input).value:
            return  # a newer search is on its way
        self.candidates = found
        results = self.query_one(OptionList)
        results.clear_options()
        if not found:
            results.add_option(Option(Text("nothing matches"), disabled=True))
            return
        results.add_options(Option(candidate_prompt(c), id=str(i)) for i, c in enumerate(found))
        results.highlighted = 0

    def action_move(self, step: int) -> None:
        results = self.query_one(OptionList)
        if step > 0:
            results.action_cursor_down()
        else:
            results.action_cursor_up()

    @on(Input.Submitted, "#picker-query")
    def _submitted(self) -> None:
        self._choose(self.query_one(OptionList).highlighted)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option_index)

    def _choose(self, index: int | None) -> None:
        if index is None or not (0 <= index < len(self.candidates)):
            self.app.bell()
            return
        self.dismiss(self.candidates[index])

    def action_cancel(self) -> None:
        self.dismiss(None)
