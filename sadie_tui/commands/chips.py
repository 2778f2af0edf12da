"""`sadie chips …`: attach context to a conversation, list, remove, and find what to attach."""

from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from ..engine import chips as chips_engine
from ..engine.operations import AddChip, FindAttachable, ListChips, RemoveChip, ShowConversation
from .context import Context
from .output import console, print_json

KIND_HELP = ", ".join(chips_engine.KINDS)


@click.group("chips")
def group() -> None:
    """Context chips: things attached to a conversation to ground its replies.

    Kinds: wiki (a wiki entry), source (an episode), brief, graph_entity (an entity of the
    knowledge graph), discourse (a Today card), record (a calendar event, workout, purchase…:
    a connector record). Find what to attach with `sadie chips find`.
    """


def _line(chip: chips_engine.Chip) -> str:
    return f"{chip.kind} “{escape(chip.label)}” (chip {chip.id[:8]})"


@group.command("add")
@click.argument("conversation_id")
@click.argument("kind", metavar="KIND")
@click.argument("ref", metavar="REF")
@click.option("--label", help="The label shown on the chip (default: the thing's title).")
@click.option("--json", "as_json", is_flag=True, help="Print the chip as JSON.")
@click.pass_obj
def add(
    ctx: Context, conversation_id: str, kind: str, ref: str, label: str | None, as_json: bool
) -> None:
    """Attach REF (an id or id prefix from `sadie chips find`, or an exact title or entity
    name) of KIND to a conversation. KIND: wiki, source, brief, graph_entity, discourse, record."""
    session = ctx.session()
    before = {c.id for c in session.call(ListChips(conversation_id))}
    chip = session.call(AddChip(conversation_id, kind, ref, label=label))
    if as_json:
        print_json(chip.to_json())
        return
    verb = "already attached" if chip.id in before else "attached"
    title = session.call(ShowConversation(chip.conversation_id)).conversation.title
    console().print(f"{verb} {_line(chip)} to “{escape(title)}”", soft_wrap=True)


@group.command("list")
@click.argument("conversation_id")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_obj
def list_command(ctx: Context, conversation_id: str, as_json: bool) -> None:
    """The chips attached to a conversation, in the order they were attached."""
    found = ctx.session().call(ListChips(conversation_id))
    if as_json:
        print_json([c.to_json() for c in found])
        return
    out = console()
    if not found:
        out.print("no chips attached")
        return
    table = Table(box=None, padding=(0, 1), header_style="bold")
    table.add_column("chip", no_wrap=True, min_width=8)
    table.add_column("kind", no_wrap=True)
    table.add_column("label", min_width=12)
    table.add_column("ref", no_wrap=True, min_width=8)
    table.add_column("snippet", overflow="ellipsis", no_wrap=True, style="dim", max_width=48)
    for c in found:
        table.add_row(
            c.id[:8], c.kind, escape(c.label), escape(c.ref_id[:8]), escape(c.snippet or "")
        )
    out.print(table)


@group.command("remove")
@click.argument("conversation_id")
@click.argument("chip_id")
@click.option("--json", "as_json", is_flag=True, help="Print the removed chip as JSON.")
@click.pass_obj
def remove(ctx: Context, conversation_id: str, chip_id: str, as_json: bool) -> None:
    """Detach a chip (its id or id prefix, from `sadie chips list`)."""
    chip = ctx.session().call(RemoveChip(conversation_id, chip_id))
    if as_json:
        print_json(chip.to_json())
        return
    console().print(f"removed {_line(chip)}", soft_wrap=True)


@group.command("find")
@click.argument("text", default="")
@click.option("--kind", help=f"Only this kind ({KIND_HELP}).")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_obj
def find(ctx: Context, text: str, kind: str | None, limit: int, as_json: bool) -> None:
    """Look up what can be attached; prints the KIND and REF to give `sadie chips add`.

    Without TEXT: the most recent (or most mentioned) things of each kind.
    """
    found = ctx.session().call(FindAttachable(text, kind=kind, limit=limit))
    if as_json:
        print_json([c.to_json() for c in found])
        return
    out = console()
    if not found:
        out.print(f"nothing matches “{escape(text)}”" if text.strip() else "nothing to attach yet")
        return
    for c in found:
        when = f" [dim]({c.date})[/]" if c.date else ""
        out.print(
            f"[bold]{c.kind:<12}[/] {escape(c.ref_id)}  {escape(c.label)}{when}", soft_wrap=True
        )
        if c.snippet:
            out.print(f"{'':<13}[dim]{escape(c.snippet)}[/]", soft_wrap=True)
