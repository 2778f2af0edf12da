"""`sadie stats` and `sadie compact`: what the memory holds; rewriting the file smaller."""

from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from ..engine.operations import GetStats
from ..engine.wire import dump
from .context import Context
from .output import console, print_json


@click.command("stats")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def command(ctx: Context, as_json: bool) -> None:
    """Show what the memory holds."""
    stats = ctx.session().call(GetStats())
    if as_json:
        print_json(dump(stats))
        return
    out = console()
    out.print(f"[bold]memory[/] {escape(stats.home)}  ({stats.size_bytes / 1e6:.1f} MB)")
    if stats.first:
        out.print(f"from {stats.first} to {stats.last}")
    table = Table(show_header=False, box=None, padding=(0, 2))
    for name, count in stats.counts.items():
        table.add_row(name.replace("_", " "), str(count))
    out.print(table)
    if stats.episode_kinds:
        kinds = ", ".join(f"{escape(str(k))} {v}" for k, v in stats.episode_kinds.items())
        out.print(f"[bold]episodes by kind[/] {kinds}")
    if stats.top_entities:
        top = ", ".join(f"{escape(e.name)} ({e.kind}, {e.episodes})" for e in stats.top_entities)
        out.print(f"[bold]most mentioned[/] {top}")


@click.command("compact")
@click.pass_obj
def compact(ctx: Context) -> None:
    """Rewrite the database file without dead space (the vector index grows it)."""
    before, after = ctx.session().compact()
    console().print(f"compacted {before / 1e6:.1f} MB → {after / 1e6:.1f} MB")
