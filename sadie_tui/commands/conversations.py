"""`sadie conversations …`: list, replay, pin, archive, rename, forget, export and import.

Ids may be shortened to any unique prefix of four characters or more (the list shows eight).
"""

from __future__ import annotations

import os
import stat
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click
from rich.markup import escape
from rich.table import Table

from ..display import safe, safe_line
from ..engine import conversations as conv
from ..engine.errors import UsageError
from ..engine.operations import (
    Archive,
    Export,
    ExportFormat,
    Forget,
    ImportConversation,
    ListConversations,
    Pin,
    Rename,
    ShowConversation,
    Unarchive,
    Unpin,
)
from ..engine.privacy.unlock import is_encrypted
from ..paths import write_private
from .context import Context

if TYPE_CHECKING:
    from ..engine.session import SessionProtocol
from .output import console, err_console, error_line, print_json

ROLE_NAMES = {"user": "You", "assistant": "sadie", "system": "system"}
PIN_MARK = "★"


def ago(when: datetime | None, now: datetime | None = None) -> str:
    """A short, human time: "just now", "5 min ago", "yesterday", "12 Mar", "2024-03-12"."""
    if when is None:
        return ""
    now = now or datetime.now()
    seconds = (now - when).total_seconds()
    if seconds < 0:
        return when.strftime("%Y-%m-%d %H:%M")
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    days = (now.date() - when.date()).days
    if days <= 1:
        return "yesterday"
    if days < 7:
        return f"{days} days ago"
    if when.year == now.year:
        return f"{when.day} {when:%b}"
    return when.strftime("%Y-%m-%d")


def _session(ctx: Context) -> SessionProtocol:
    return ctx.session()


def _interactive() -> bool:
    """Whether a person can answer a question (tests replace this)."""
    return sys.stdin.isatty()


@click.group("conversations")
def group() -> None:
    """Manage conversations: list, show, pin, archive, rename, forget, export."""


@group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list with every field.")
@click.option("--archived", is_flag=True, help="List only archived conversations.")
@click.option("--search", metavar="TEXT", help="Only those whose title or messages contain TEXT.")
@click.option("--limit", type=click.IntRange(1, 1_000_000), metavar="N", help="At most N.")
@click.pass_obj
def list_command(
    ctx: Context, as_json: bool, archived: bool, search: str | None, limit: int | None
) -> None:
    """List conversations: pinned first, then by last activity."""
    found = _session(ctx).call(ListConversations(archived=archived, search=search, limit=limit))
    if as_json:
        print_json([c.to_json() for c in found])
        return
    out = console()
    if not found:
        if search:
            out.print(f"no conversation matches “{escape(search)}”")
        else:
            out.print("no archived conversations" if archived else "no conversations yet")
        return
    table = Table(box=None, padding=(0, 1), header_style="bold")
    table.add_column("id", no_wrap=True, min_width=8)
    table.add_column("", no_wrap=True)
    table.add_column("title", min_width=16)
    table.add_column("feeling", no_wrap=True)
    table.add_column("msgs", justify="right", no_wrap=True)
    table.add_column("last active", no_wrap=True)
    for c in found:
        table.add_row(
            c.id[:8],
            PIN_MARK if c.pinned else "",
            escape(safe_line(c.title)),
            escape(c.emotion or ""),
            str(c.message_count),
            ago(c.updated_at),
        )
    out.print(table)


@group.command("show")
@click.argument("conversation_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help='Print {"conversation": …, "messages": …}.')
@click.pass_obj
def show(ctx: Context, conversation_id: str, as_json: bool) -> None:
    """Replay a conversation: every message with its time, feeling and citations."""
    session = _session(ctx)
    shown = session.call(ShowConversation(conversation_id))
    c, items, attached = shown.conversation, shown.messages, shown.chips
    if as_json:
        print_json(shown.as_json())
        return
    out = console()
    flags = [f"id {c.id}", f"started {c.created_at:%Y-%m-%d %H:%M}"]
    if c.emotion:
        flags.append(f"feeling {escape(c.emotion)}")
    if c.persona:
        flags.append(f"persona {escape(c.persona)}")
    if c.pinned:
        flags.append("pinned")
    if c.archived_at:
        flags.append(f"archived {c.archived_at:%Y-%m-%d}")
    out.print(f"[bold]{escape(safe_line(c.title))}[/]")
    out.print(f"[dim]{' · '.join(flags)}[/]")
    if c.summary:
        out.print(f"[italic]{escape(c.summary)}[/]")
    if attached:
        labels = ", ".join(f"{chip.kind} “{escape(chip.label)}”" for chip in attached)
        out.print(f"[dim]attached:[/] {labels}")
    if not items:
        out.print("\nno messages yet")
    for m in items:
        who = ROLE_NAMES.get(m.role, escape(m.role))
        head = f"[bold]{who}[/] [dim]{m.created_at:%Y-%m-%d %H:%M}"
        if m.emotion and m.role == "assistant":
            head += f" · {escape(m.emotion)}"
        if m.status != "complete":
            head += f" · {escape(m.status)}"
        out.print()
        out.print(head + "[/]")
        out.print(escape(m.content))
        for n, citation in enumerate(m.citations, start=1):
            out.print(f"  [dim]{escape(f'[{n}]')}[/] {escape(conv.citation_line(citation))}")


def _announce(verb: str, c: conv.Conversation) -> None:
    console().print(f"{verb} {c.id[:8]} “{escape(safe_line(c.title))}”", soft_wrap=True)


@group.command("pin")
@click.argument("conversation_id", metavar="ID")
@click.pass_obj
def pin(ctx: Context, conversation_id: str) -> None:
    """Keep a conversation at the top of the list."""
    _announce("pinned", _session(ctx).call(Pin(conversation_id)))


@group.command("unpin")
@click.argument("conversation_id", metavar="ID")
@click.pass_obj
def unpin(ctx: Context, conversation_id: str) -> None:
    """Let a pinned conversation fall back into place."""
    _announce("unpinned", _session(ctx).call(Unpin(conversation_id)))


@group.command("archive")
@click.argument("conversation_id", metavar="ID")
@click.pass_obj
def archive(ctx: Context, conversation_id: str) -> None:
    """Hide a conversation from the list (see it with `list --archived`)."""
    _announce("archived", _session(ctx).call(Archive(conversation_id)))


@group.command("unarchive")
@click.argument("conversation_id", metavar="ID")
@click.pass_obj
def unarchive(ctx: Context, conversation_id: str) -> None:
    """Bring an archived conversation back into the list."""
    _announce("unarchived", _session(ctx).call(Unarchive(conversation_id)))


@group.command("rename")
@click.argument("conversation_id", metavar="ID")
@click.argument("title")
@click.pass_obj
def rename(ctx: Context, conversation_id: str, title: str) -> None:
    """Give a conversation a new title."""
    if not title.strip():
        raise click.BadParameter("the title cannot be empty", param_hint="TITLE")
    _announce("renamed", _session(ctx).call(Rename(conversation_id, title)))


@group.command("forget")
@click.argument("conversation_id", metavar="ID")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_obj
def forget(ctx: Context, conversation_id: str, yes: bool) -> None:
    """Delete a conversation with its messages and chips, for good."""
    session = _session(ctx)
    c = session.call(ShowConversation(conversation_id)).conversation
    if not yes:
        if not _interactive():
            raise click.UsageError(
                "forget deletes for good: add --yes to confirm without a terminal"
            )
        click.confirm(
            f"Forget “{c.title}” and its {c.message_count} messages for good?", abort=True
        )
    session.call(Forget(c.id))
    _announce("forgot", c)


@group.command("export")
@click.argument("conversation_id", metavar="ID")
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Write to FILE instead of standard output.",
)
@click.pass_obj
def export(ctx: Context, conversation_id: str, fmt: str, output: Path | None) -> None:
    """Write a conversation out as Markdown or JSON (JSON can be imported again)."""
    text = _session(ctx).call(Export(conversation_id, cast(ExportFormat, fmt)))
    if is_encrypted(ctx.home):
        # The memory is encrypted at rest; this copy is not, wherever it goes.
        error_line("this export leaves the memory's encryption: it is written in plain text")
    if output is None:
        # The file as stored when redirected; made safe only when a terminal would show it.
        sys.stdout.write(safe(text) if sys.stdout.isatty() else text)
        sys.stdout.flush()
        return
    try:
        write_private(output, text)  # an export is the person's journal too: 0600
    except OSError as exc:
        raise click.FileError(str(output), hint=exc.strerror or str(exc)) from exc
    err_console().print(f"wrote {escape(str(output))}")


@group.command("import")
@click.argument("file", type=click.Path(dir_okay=True, allow_dash=True))
@click.pass_obj
def import_command(ctx: Context, file: str) -> None:
    """Read a JSON export back in, as a new conversation (FILE, or - for standard input)."""
    # Bytes, decoded by the engine: a file that is not UTF-8 is one line, not a traceback.
    text = conv.decode_export(_read_export(file), file if file != "-" else "standard input")
    c = _session(ctx).call(ImportConversation(text))
    _announce("imported", c)


def _read_export(name: str) -> bytes:
    """The bytes of the export at ``name`` (``-``: standard input), one more than the limit at
    most, so that a larger one is said to be too large. A regular file only: a device such as
    /dev/zero never ends, and a FIFO's open waits for ever for a writer."""
    limit = conv.MAX_EXPORT_BYTES
    if name == "-":
        return sys.stdin.buffer.read(limit + 1)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO's open returns at once
    except OSError as exc:
        raise UsageError(
            f"cannot read {safe_line(name)}: {(exc.strerror or str(exc)).lower()}", title="Import"
        ) from None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise UsageError(
                f"{safe_line(name)} is not a regular file: an export is a JSON file",
                title="Import",
            )
        if found.st_size > limit:
            raise conv.too_large(found.st_size)
        with os.fdopen(os.dup(fd), "rb") as source:
            return source.read(limit + 1)
    finally:
        os.close(fd)
