"""`sadie soul`: show, edit and locate the soul summary, the person's own words about themselves.

The summary is ``soul.md`` in the home; when there is none, the one ingested into the memory's
``soul`` table is shown (and seeds the file on the first edit). Every chat briefing loads it.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from ..engine.operations import GetSoul, SaveSoul, SuggestSoul
from ..engine.privacy.unlock import is_encrypted
from .context import Context
from .output import console, err_console, print_json

TEMPLATE = """\
# Who I am

A few lines sadie reads before every conversation: what you do, who matters to you,
what you are working on, how you like to be spoken to.
"""


def soul_file(ctx: Context) -> Path:
    return ctx.home / "soul.md"


def _read_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip() if path.is_file() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise click.FileError(str(path), hint=str(exc)) from exc


def current_soul(ctx: Context) -> str:
    """The summary: the file if it has text, else the memory's ``soul`` table."""
    text = _read_file(soul_file(ctx))
    return text or ctx.session().call(GetSoul()).text


@click.group("soul", invoke_without_command=True)
@click.pass_context
def group(click_ctx: click.Context) -> None:
    """Show the soul summary (sadie reads it before every reply); `edit` to change it,
    `suggest` for a draft from what sadie has learned."""
    if click_ctx.invoked_subcommand is not None:
        return
    ctx: Context = click_ctx.obj
    text = current_soul(ctx)
    out = console()
    if not text:
        out.print("no soul summary yet: write one with `sadie soul edit`")
        return
    out.print(escape(text))


@group.command("edit")
@click.pass_obj
def edit(ctx: Context) -> None:
    """Open the soul summary in $EDITOR and save it to soul.md in the home."""
    path = soul_file(ctx)
    seed = current_soul(ctx) or TEMPLATE
    edited = click.edit(seed.rstrip() + "\n", extension=".md", require_save=True)
    if edited is None or (edited.strip() == seed.strip() and path.is_file()):
        err_console().print("soul summary unchanged")
        return
    if is_encrypted(ctx.home):
        ctx.session().call(SaveSoul(edited))  # sealed beside the encrypted memory, never plain
        err_console().print("saved the soul summary (sealed: the memory is encrypted)")
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(edited.rstrip() + "\n", encoding="utf-8")
    except OSError as exc:
        raise click.FileError(str(path), hint=exc.strerror or str(exc)) from exc
    err_console().print(f"saved {escape(str(path))}")


@group.command("path")
@click.pass_obj
def path(ctx: Context) -> None:
    """Print where the soul summary file is (it may not exist yet)."""
    click.echo(str(soul_file(ctx)))


@group.command("suggest")
@click.option("--yes", is_flag=True, help="Write the draft without asking (after showing it).")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the draft and its diff as JSON; write nothing."
)
@click.pass_obj
def suggest(ctx: Context, yes: bool, as_json: bool) -> None:
    """Draft an update of the soul summary from the beliefs you accepted, those sadie holds and
    your latest notes; show it as a diff, and write it only if you say so."""
    session = ctx.session()
    with err_console().status("drafting with the model…"):
        draft = session.call(SuggestSoul())
    if as_json:
        from ..engine.wire import dump  # lazy: pydantic loads for --json only

        print_json(dump(draft))
        return
    out = console()
    if draft.proposed.strip() == draft.current.strip():
        out.print("the draft is the summary you have: nothing to change")
        return
    for line in (draft.diff or "").splitlines():
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
        out.print(f"[{style}]{escape(line)}[/]", soft_wrap=True)
    if not yes and not click.confirm("Write this as your soul summary?", default=False):
        err_console().print("discarded: soul summary unchanged")
        return
    session.call(SaveSoul(draft.proposed))
    err_console().print(f"saved {escape(str(soul_file(ctx)))}")
