"""`sadie encrypt`, `sadie passphrase`, `sadie backup` and `sadie restore`: privacy at rest and
the memory whole in one file (``engine.privacy``)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from ..engine.errors import UsageError
from ..engine.operations import Backup
from ..engine.privacy import backup as backups
from ..engine.privacy import convert
from ..engine.privacy.unlock import is_encrypted, new_passphrase, unlock
from .context import Context
from .output import console, print_json
from .progress import progress_bar

STEPS = {step: step.capitalize() for step in convert.STEPS}


@click.command("encrypt")
@click.option("--no-keyring", is_flag=True, help="Do not keep the key in the OS keyring.")
@click.pass_obj
def encrypt(ctx: Context, no_keyring: bool) -> None:
    """Encrypt the memory at rest (asks a new passphrase; SADIE_PASSPHRASE for scripts)."""
    if is_encrypted(ctx.home):
        raise UsageError(
            f"the memory at {ctx.home} is already encrypted",
            fix="`sadie passphrase` changes its passphrase",
        )
    passphrase = new_passphrase(ctx.home, ctx.ask)
    with progress_bar("Encrypting the memory") as progress:
        counts = convert.encrypt(ctx.home, passphrase, progress=progress, keyring=not no_keyring)
    console().print(
        f"encrypted the memory at {escape(str(ctx.home))} ({sum(counts.values())} rows);"
        " keep the passphrase safe: without it the memory cannot be opened"
    )


@click.command("passphrase")
@click.option("--no-keyring", is_flag=True, help="Do not keep the new key in the OS keyring.")
@click.pass_obj
def passphrase(ctx: Context, no_keyring: bool) -> None:
    """Change an encrypted memory's passphrase (every block is re-encrypted)."""
    unlock(ctx.home, ctx.ask)
    new = new_passphrase(ctx.home, ctx.ask, "New passphrase")
    with progress_bar("Re-encrypting the memory") as progress:
        convert.change_passphrase(ctx.home, new, progress=progress, keyring=not no_keyring)
    console().print(f"changed the passphrase of the memory at {escape(str(ctx.home))}")


@click.command("backup")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def backup(ctx: Context, file: Path, as_json: bool) -> None:
    """Write the whole memory to FILE (through the sadie holding it, if one does)."""
    report = ctx.session().call(Backup(str(file.absolute())))
    if as_json:
        print_json(
            {
                "path": report.path,
                "made": report.made,
                "encrypted": report.encrypted,
                "bytes": report.bytes,
                "counts": report.counts,
            }
        )
        return
    how = "encrypted" if report.encrypted else "NOT encrypted (the memory is plain)"
    console().print(
        f"backed up {sum(report.counts.values())} rows to {escape(report.path)}"
        f" ({report.bytes / 1e6:.1f} MB, {how})"
    )


@click.command("restore")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--replace", is_flag=True, help="Replace the memory in this home (asks first).")
@click.option("--yes", is_flag=True, help="With --replace: do not ask.")
@click.pass_obj
def restore(ctx: Context, file: Path, replace: bool, yes: bool) -> None:
    """Restore a backup FILE into an empty home, or over this one with --replace."""
    if replace and backups.has_memory(ctx.home) and not yes:
        click.confirm(
            f"Replace the memory at {ctx.home} with {file}? What it holds now is lost",
            abort=True,
            err=True,
        )
    manifest = backups.restore(ctx.home, file, replace=replace, ask=ctx.ask)
    console().print(
        f"restored {sum(manifest.counts.values())} rows from {escape(str(file))}"
        f" (made {manifest.made}) into {escape(str(ctx.home))}"
    )
