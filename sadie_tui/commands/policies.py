"""`sadie policies`: the rules in ``policies.toml`` in the home, and anything wrong with them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ..engine.errors import ExitCode
from ..engine.policies import Policy, load_policies
from ..engine.policy_listing import PolicyListing
from ..engine.wire import dump
from .context import Context
from .output import console, print_json

EXAMPLE = r"""[[policy]]
name = "no-diagnoses"
action = "block"          # rewrite | block | warn
pattern = "(?i)you (have|suffer from) (depression|adhd)"
message = "sadie does not diagnose"

[[policy]]
name = "gentle-words"
action = "rewrite"
pattern = "(?i)\\blazy\\b"
replacement = "tired"
"""


def policies_file(ctx: Context) -> Path:
    return ctx.home / "policies.toml"


def _parses(path: Path) -> bool:
    """Whether the file is TOML at all (then its good rules apply, whatever else is wrong)."""
    try:
        tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return True


@click.command("policies")
@click.option("--json", "as_json", is_flag=True, help="Print the rules and errors as JSON.")
@click.pass_context
def command(click_ctx: click.Context, as_json: bool) -> None:
    """List the rules in policies.toml (rewrite, block, warn) and any problem with them.

    Exits 0 when the file is valid TOML, even if some rules are wrong (those are listed and
    skipped; the others apply); 2 when it cannot be read as TOML at all.
    """
    ctx: Context = click_ctx.obj
    path = policies_file(ctx)
    exists = path.is_file()
    loaded = load_policies(path)
    if as_json:
        print_json(dump(PolicyListing.of(path, exists, loaded)))
    else:
        _print(path, exists, loaded.policies, loaded.errors)
    if exists and not _parses(path):
        click_ctx.exit(int(ExitCode.USAGE))


def _print(path: Path, exists: bool, policies: tuple[Policy, ...], errors: tuple[str, ...]) -> None:
    out = console()
    if not exists:
        out.print(
            f"no policies: write your rules in {escape(str(path))}, for example:", soft_wrap=True
        )
        out.print()
        out.print(escape(EXAMPLE))
        return
    count = len(policies)
    out.print(
        f"{count} polic{'y' if count == 1 else 'ies'} from {escape(str(path))}", soft_wrap=True
    )
    if policies:
        table = Table(box=None, padding=(0, 1), header_style="bold")
        table.add_column("name", no_wrap=True)
        table.add_column("action", no_wrap=True)
        table.add_column("scope", no_wrap=True)
        table.add_column("pattern")
        table.add_column("message / replacement")
        for p in policies:
            said = p.message if p.action != "rewrite" else f"→ {p.replacement}"
            table.add_row(
                escape(p.name), p.action, escape(p.scope), escape(p.pattern.pattern), escape(said)
            )
        out.print(table)
    for error in errors:
        out.print(f"[red]error:[/] {escape(error)}", soft_wrap=True)
