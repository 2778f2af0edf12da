"""`sadie beliefs list|show|accept|reject|edit`: what sadie believes about you, the quotes
behind each belief, and your decisions (every one recorded in the belief's history)."""

from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from ..display import safe_line
from ..engine.operations import AcceptBelief, EditBelief, ListBeliefs, RejectBelief, ShowBelief
from ..engine.reflect.beliefs import ORIGINS, STATUSES, BeliefDetail
from ..engine.wire import dump, dump_each
from .context import Context
from .output import console, print_json

STYLE = {
    "accepted": "green",
    "active": "",
    "contested": "yellow",
    "retired": "dim",
    "rejected": "dim",
}


@click.group("beliefs")
def group() -> None:
    """What sadie believes about you: those you wrote (beliefs.jsonl) and those `sadie reflect`
    proposed, each with the quotes behind it. Accept, reject or edit the proposed ones."""


@group.command("list")
@click.option("--status", type=click.Choice(STATUSES), default=None, help="Only this status.")
@click.option("--origin", type=click.Choice(ORIGINS), default=None, help="Only stated or derived.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_obj
def list_command(ctx: Context, status: str | None, origin: str | None, as_json: bool) -> None:
    """Every belief: accepted, active, contested, retired, rejected; most confident first."""
    found = ctx.session().call(ListBeliefs(status=status, origin=origin))
    if as_json:
        print_json(dump_each(found))
        return
    out = console()
    if not found:
        out.print("no beliefs yet: `sadie reflect` proposes them from your notes")
        return
    table = Table(box=None, padding=(0, 1), header_style="bold")
    table.add_column("belief", no_wrap=True, min_width=8)
    table.add_column("status", no_wrap=True)
    table.add_column("origin", no_wrap=True)
    table.add_column("conf", justify="right", no_wrap=True)
    table.add_column("quotes", justify="right", no_wrap=True)
    table.add_column("statement", min_width=20)
    for b in found:
        style = STYLE.get(b.status, "")
        table.add_row(
            b.id[:8],
            f"[{style}]{b.status}[/]" if style else b.status,
            b.origin,
            f"{b.confidence:.2f}",
            str(b.evidence),
            escape(b.statement),
        )
    out.print(table)


def _show(detail: BeliefDetail) -> None:
    out = console()
    b = detail.belief
    out.print(f"[bold]{escape(b.statement)}[/]", soft_wrap=True)
    kind = f", {b.kind}" if b.kind else ""
    out.print(f"{b.status} · {b.origin}{kind} · confidence {b.confidence:.2f} · belief {b.id}")
    for stance, heading in (("supports", "evidence for"), ("contradicts", "evidence against")):
        side = [e for e in detail.evidence if e.stance == stance]
        if side:
            out.print(f"\n[bold]{heading}[/] ({len(side)})")
        for e in side:
            head = f"{e.date} {escape(safe_line(e.title))}"
            out.print(f"  {head} (episode {e.episode_id[:8]})", soft_wrap=True)
            if e.quote:
                label = "verbatim" if e.verbatim else "the note's sentence (the model paraphrased)"
                out.print(f"    “{escape(e.quote)}” [dim]{label}[/]", soft_wrap=True)
    if detail.links:
        out.print("\n[bold]links[/]")
    for link in detail.links:
        out.print(
            f"  {link.kind.replace('_', ' ')} {link.target_kind} {link.target_id[:8]}:"
            f" {escape(link.text)}",
            soft_wrap=True,
        )
    if detail.changes:
        out.print("\n[bold]history[/]")
    for c in detail.changes:
        by = f" (run {c.run_id[:8]}, {escape(c.model or '')})" if c.run_id else ""
        why = f": {escape(c.reason)}" if c.reason else ""
        out.print(f"  {c.at[:16].replace('T', ' ')} {c.action}{by}{why}", soft_wrap=True)


@group.command("show")
@click.argument("belief_id")
@click.option("--json", "as_json", is_flag=True, help="Print the belief as JSON.")
@click.pass_obj
def show(ctx: Context, belief_id: str, as_json: bool) -> None:
    """One belief (its id or a unique prefix) with its quotes, links and history."""
    detail = ctx.session().call(ShowBelief(belief_id))
    if as_json:
        print_json(dump(detail))
        return
    _show(detail)


def _decided(detail: BeliefDetail, as_json: bool, verb: str) -> None:
    if as_json:
        print_json(dump(detail))
        return
    console().print(f"{verb} “{escape(detail.belief.statement)}”", soft_wrap=True)


@group.command("accept")
@click.argument("belief_id")
@click.option("--reason", default=None, help="Why (kept in the belief's history).")
@click.option("--json", "as_json", is_flag=True, help="Print the belief as JSON.")
@click.pass_obj
def accept(ctx: Context, belief_id: str, reason: str | None, as_json: bool) -> None:
    """Keep a proposed belief: sadie never retires or contests it afterwards."""
    _decided(ctx.session().call(AcceptBelief(belief_id, reason=reason)), as_json, "accepted")


@group.command("reject")
@click.argument("belief_id")
@click.option("--reason", default=None, help="Why (kept in the belief's history).")
@click.option("--json", "as_json", is_flag=True, help="Print the belief as JSON.")
@click.pass_obj
def reject(ctx: Context, belief_id: str, reason: str | None, as_json: bool) -> None:
    """Reject a proposed belief: it is never proposed again."""
    _decided(ctx.session().call(RejectBelief(belief_id, reason=reason)), as_json, "rejected")


@group.command("edit")
@click.argument("belief_id")
@click.argument("statement", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the belief as JSON.")
@click.pass_obj
def edit(ctx: Context, belief_id: str, statement: str | None, as_json: bool) -> None:
    """Reword a proposed belief (STATEMENT, or in $EDITOR): the quotes stay, and it is yours."""
    session = ctx.session()
    if statement is None:
        current = session.call(ShowBelief(belief_id)).belief.statement
        edited = click.edit(current + "\n", require_save=True)
        if edited is None or not edited.strip() or edited.strip() == current:
            console().print("belief unchanged")
            return
        statement = edited.strip()
    _decided(session.call(EditBelief(belief_id, statement)), as_json, "now")
