"""`sadie search "query"`: the ranked chunks as retrieval sees them, with every channel's score.

Writes telemetry like ask and chat do (a ``turns`` row of kind "search" and one ``retrievals``
row per chunk); ``--json`` prints one object for scripts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table

from ..display import safe_line
from ..engine.operations import SearchMemory
from .context import Context
from .output import console, error_line, print_json

if TYPE_CHECKING:
    from ..engine.retrieval.report import Search

SNIPPET = 140


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _snippet(text: str, width: int = SNIPPET) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


@click.command("search")
@click.argument("query")
@click.option(
    "--persona", default=None, help="Persona whose rules apply (default: the ask persona)."
)
@click.option(
    "-k",
    "k",
    type=click.IntRange(1, 100),
    default=None,
    help="How many chunks (default: the persona's count).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def command(ctx: Context, query: str, persona: str | None, k: int | None, as_json: bool) -> None:
    """Show the chunks retrieval picks for QUERY, with each channel's score."""
    found = ctx.session().call(SearchMemory(query, persona=persona, k=k))
    for notice in found.notices:
        error_line(notice)
    if as_json:
        print_json(found.as_json())
        return
    render(found)


def render(result: Search) -> None:
    """The search as a table: one row per chunk, then the beliefs and records."""
    out = console()
    persona = result.persona
    window = ""
    if result.window is not None:
        w = result.window
        span = f"{w.start.date() if w.start else '…'} – {w.end.date() if w.end else '…'}"
        window = f"  window [bold]{escape(w.phrase)}[/] ({span})"
    out.print(
        f"[bold]{escape(result.effective_query)}[/]  persona {escape(persona)}{window}"
        f"  [dim]{result.elapsed_ms:.0f} ms{'' if result.vector_used else ', no vectors'}[/]"
    )
    if not result.chunks:
        out.print("nothing found (is the memory empty? `sadie ingest PATH` fills it)")
        return
    table = Table(box=None, padding=(0, 1), header_style="bold")
    for name, justify in (
        ("#", "right"),
        ("episode", "left"),
        ("date", "left"),
        ("vector", "right"),
        ("keyword", "right"),
        ("graph", "right"),
        ("final", "right"),
        ("snippet", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=name != "snippet")  # type: ignore[arg-type]
    for c in result.chunks:
        table.add_row(
            str(c.rank),
            ("[dim]outside ·[/] " if c.in_window is False else "") + escape(safe_line(c.title)),
            c.date.isoformat(),
            _score(c.scores.get("vector")),
            _score(c.scores.get("keyword")),
            _score(c.scores.get("graph")),
            f"{c.final:.3f}",
            escape(_snippet(c.text)),
        )
    out.print(table)
    outside = sum(1 for c in result.chunks if c.in_window is False)
    if outside and result.window is not None:
        out.print(
            f"[dim]{outside} marked outside: {escape(result.window.phrase)} holds too few notes,"
            " so notes from other times fill the rest, ranked below[/]"
        )
    for b in result.beliefs:
        mark = "[dim]outside ·[/] " if b.in_window is False else ""
        out.print(
            f"[bold]belief[/] {mark}({escape(b.status)}, {b.score:.2f}) {escape(b.statement)}"
        )
    for o in result.observations:
        out.print(
            f"[bold]record[/] {'[dim]outside ·[/] ' if o.in_window is False else ''}"
            f"{escape(o.source)} {o.observed_at:%Y-%m-%d} ({o.score:.2f})"
            f" {escape(_snippet(o.text))}"
        )
