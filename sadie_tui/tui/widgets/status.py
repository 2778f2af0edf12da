"""The status line: model and online/offline, persona, what went into the last briefing
(chunks, messages, chips, retrieval time), tokens/s of the last reply, the sadie holding the
memory when this one is its client, idle reflection's progress, an empty memory, and loading
states."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ...display import safe
from ...engine.events import ContextBudget
from .fitting import NARROW

SEP = " │ "


def counted(n: int, noun: str) -> str:
    """ "1 chip", "2 chips", "0 msgs"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class StatusLine(Widget):
    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        width: 1fr;
        padding: 0 1;
        background: $panel;
        color: $foreground 80%;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    model: reactive[str] = reactive("")
    online: reactive[bool | None] = reactive(None)  # None: not checked yet
    persona: reactive[str] = reactive("")
    context: reactive[ContextBudget | None] = reactive(None)
    tokens_per_s: reactive[float | None] = reactive(None)
    memory_state: reactive[str] = reactive("opening")  # opening | ready | failed
    embedder_ready: reactive[bool] = reactive(False)
    via: reactive[str] = reactive("")  # the sadie holding the memory, when this is its client
    reflecting: reactive[str] = reactive("")  # "reflecting… 2/5" while the app reflects idle
    memory_empty: reactive[bool] = reactive(False)  # no notes yet: say how to fill it

    def render(self) -> Text:
        full = self.line()
        room = self.content_size.width
        if not room or full.cell_len <= room or self.app.size.width >= NARROW:
            return full
        return self.line(short=True)

    def line(self, short: bool = False) -> Text:
        """The status in words; ``short`` (a narrow screen): fewer of them."""
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.online is None:
            text.append("○ ", style="dim")
            text.append(safe(self.model or "model"), style="bold")
            text.append(" checking…", style="dim")
        elif self.online:
            text.append("● ", style="bold green")
            text.append(safe(self.model), style="bold")
            if not short:  # the green dot says it
                text.append(" online")
        else:
            text.append("● ", style="bold yellow")
            text.append("offline", style="bold")
            if not short:
                text.append(" (quotes from your notes)", style="dim")
        if self.persona:
            text.append(SEP, style="dim")
            text.append(safe(self.persona))
        ctx = self.context
        if ctx is not None:
            text.append(SEP, style="dim")
            text.append(f"{counted(ctx.chunks, 'chunk')} · {counted(ctx.messages, 'msg')}")
            if ctx.messages_dropped:
                text.append(f" ({ctx.messages_dropped} older left out)", style="yellow")
            if ctx.chips:
                text.append(f" · {counted(ctx.chips, 'chip')}")
            if not short:
                text.append(f" · {ctx.retrieval_ms:.0f} ms")
            if not ctx.vector:
                text.append(" · keywords+names", style="dim")
        if self.tokens_per_s:
            text.append(SEP, style="dim")
            text.append(f"{self.tokens_per_s:.0f} tok/s")
        if self.via:
            text.append(SEP, style="dim")
            text.append(f"via {safe(self.via)}", style="italic")
        if self.reflecting:
            text.append(SEP, style="dim")
            text.append(safe(self.reflecting), style="italic")
        if self.memory_empty:
            text.append(SEP, style="dim")
            text.append("memory empty", style="bold yellow")
            if not short:
                text.append(": sadie ingest PATH", style="yellow")
        if self.memory_state == "opening":
            text.append(SEP, style="dim")
            text.append("opening memory…", style="italic")
        elif self.memory_state == "failed":
            text.append(SEP, style="dim")
            text.append("memory unavailable", style="bold red")
        elif not self.embedder_ready:
            text.append(SEP, style="dim")
            text.append(
                "embedder loading…" if short else "embedding model loading…", style="italic"
            )
        return text
