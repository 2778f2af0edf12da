"""`sadie ingest PATH…`: read notes into the memory with a progress bar and a one-screen summary."""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table

from .. import signals
from ..display import safe_line
from ..engine.errors import ExitCode, UsageError
from ..engine.ingest.csvmap import MAP_HINT, CsvMap, parse_map
from ..engine.ingest.pipeline import IngestReport
from ..engine.requests import IngestJob
from ..engine.wire import dump
from .context import Context
from .output import console, print_json
from .progress import progress_bar

if TYPE_CHECKING:
    from ..engine.session import SessionProtocol


def run_ingest(
    session: SessionProtocol,
    paths: list[Path],
    *,
    quiet: bool = False,
    title: str = "Ingesting",
    csv_map: CsvMap | None = None,
) -> IngestReport:
    if quiet:
        return session.ingest(paths, IngestJob(csv_map=csv_map))
    with progress_bar(title) as progress:
        return session.ingest(paths, IngestJob(progress, csv_map))


def summary(report: IngestReport) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_row("added", str(report.added))
    table.add_row("updated", str(report.updated))
    table.add_row("unchanged", str(report.unchanged))
    table.add_row("skipped", str(len(report.skipped)))
    table.add_row("ignored", str(len(report.ignored)))
    table.add_row("chunks written", str(report.chunks))
    table.add_row("entities known", str(report.entities))
    for name, count in report.derived.items():
        if count:
            table.add_row(name.replace("_", " "), str(count))
    table.add_row("elapsed", f"{report.elapsed:.1f} s")
    return table


def _csv_map(_ctx: click.Context, _param: click.Parameter, spec: str | None) -> CsvMap | None:
    """``--map`` parsed, or click's usage error (exit 2) naming what is wrong with it."""
    try:
        return parse_map(spec) if spec is not None else None
    except UsageError as exc:
        raise click.BadParameter(exc.one_line()) from exc


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option(
    "--watch",
    is_flag=True,
    help="Then keep the memory (served to other sadies) and re-read what changes, until ctrl+c.",
)
@click.option(
    "--map",
    "csv_map",
    callback=_csv_map,
    metavar="date=COLUMN,text=COLUMN[,source=NAME]",
    help=f"Read CSV files by these columns, as observations ({MAP_HINT}).",
)
@click.pass_obj
def command(
    ctx: Context,
    paths: tuple[Path, ...],
    as_json: bool,
    quiet: bool,
    watch: bool,
    csv_map: CsvMap | None,
) -> None:
    """Read notes, journals, calendars, workouts, transcripts and records into the memory."""
    session = ctx.session(hold=True)
    report = run_ingest(session, list(paths), quiet=quiet or as_json, csv_map=csv_map)
    if as_json:
        print_json(dump(report.summary()))
    else:
        out = console()
        out.print(summary(report))
        if not report.changed and not report.skipped:
            out.print("Nothing changed: every file was already in the memory.")
        for skipped in report.skipped:
            # One line per file even when piped, so the names can be grepped.
            out.print(
                f"[yellow]skipped[/] {escape(safe_line(skipped.name))}: "
                f"{escape(safe_line(skipped.reason))}",
                soft_wrap=True,
            )
        for ignored in report.ignored:  # left out on purpose: named, so nothing is a mystery
            out.print(
                f"[dim]ignored[/] {escape(ignored.name)}: {escape(ignored.reason)}",
                soft_wrap=True,
            )
    if watch:
        said = [(s.name, s.reason) for s in report.skipped]
        keep_current(ctx, session, list(paths), said)
        return
    if report.skipped:
        raise SystemExit(int(ExitCode.PARTIAL))


def keep_current(
    ctx: Context,
    session: SessionProtocol,
    paths: list[Path],
    said: list[tuple[str, str]] | None = None,
) -> None:
    """`--watch`: re-read what changes under ``paths``, one quiet line a batch, until ctrl+c
    (exit 0; the socket is released when the context closes)."""
    # lazy: engine.ingest.watch loads only when keep_current runs, off the start-up path
    from ..engine.ingest.watch import watch_notes

    out = console()
    # Through a holder, each batch goes through it (its app shows a notice per batch).
    via = f"through {ctx.via}" if ctx.via else ctx.sharing
    where = f" ({escape(via)})" if via else ""
    count = f"{len(paths)} path{'s' if len(paths) != 1 else ''}"
    # watchfiles turns any signal its handler raises for into KeyboardInterrupt: remember
    # which one came, so SIGTERM and SIGHUP still end the way they do everywhere (128 + n).
    came: list[int] = []

    def record(signum: int, frame: FrameType | None) -> None:
        came.append(signum)
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, record) for sig in signals.signals()}
    try:
        watch_notes(
            session,
            paths,
            lambda batch: out.print(escape(safe_line(batch.line)), soft_wrap=True),
            on_ready=lambda: out.print(f"watching {count} (ctrl+c stops){where}"),
            skipped_before=said or (),
        )
    except KeyboardInterrupt:
        out.print("stopped watching")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if came:
        raise signals.Terminated(came[0])
