"""`sadie doctor`: explain what works and what to fix, one line each."""

from __future__ import annotations

import click
from rich.markup import escape

from ..engine.doctor import repair as repair_memory
from ..engine.doctor import run_checks
from ..engine.errors import KeyNeededError
from ..engine.privacy.unlock import unlock
from ..engine.wire import dump_each
from .context import Context
from .output import console, error_line, print_json

MARKS = {"ok": "[green]✓[/]", "warn": "[yellow]![/]", "fail": "[red]✗[/]"}


def _holder_answers(ctx: Context) -> bool:
    """Whether a sadie answers ``/v1/health`` on the home's socket (asked only when the memory
    is held)."""
    # lazy: httpx's client and the socket helpers load only when the memory is held
    from ..serve.remote import answers
    from ..serve.socket import socket_path

    return answers(socket_path(ctx.home))


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True)
@click.option("--quick", is_flag=True, help="Do not load the embedding model.")
@click.option(
    "--repair",
    is_flag=True,
    help="First mend what a crash can leave: a damaged write-ahead log (set aside), schema "
    "steps not applied, replies left streaming, a stale keyword index.",
)
@click.pass_obj
def command(ctx: Context, as_json: bool, quick: bool, repair: bool) -> None:
    """Check the home, database, vector index, embedding model and the model server (Ollama,
    or the OpenAI-compatible endpoint when reasoner = "openai")."""
    if repair:
        for line in repair_memory(ctx.home):
            if as_json:
                error_line(line)  # stdout stays one JSON document
            else:
                console().print(f"[bold]repair[/]: {escape(line)}", soft_wrap=True)
    try:
        unlock(ctx.home, ctx.ask)  # an encrypted memory: its database checks need the key
    except KeyNeededError:
        pass  # the database check says so, as a failed check
    checks = run_checks(
        ctx.home,
        ctx.settings.ollama_host,
        ctx.settings.model,
        load_model=not quick,
        settings=ctx.settings,
        holder=lambda: _holder_answers(ctx),
    )
    if as_json:
        print_json(dump_each(checks))
    else:
        out = console()
        for c in checks:
            fix = f" [dim]→ {escape(c.fix)}[/]" if c.fix else ""
            # soft_wrap: one line per check even when piped (scripts grep these lines).
            out.print(
                f"{MARKS[c.status]} [bold]{escape(c.name)}[/]: {escape(c.detail)}{fix}",
                soft_wrap=True,
            )
    if any(c.status == "fail" for c in checks):
        raise SystemExit(1)
