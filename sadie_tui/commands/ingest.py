"""`sadie ingest PATH…`: read notes into the memory with a progress bar and a one-screen summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from ..engine.errors import ExitCode, UsageError
from ..engine.ingest.csvmap import MAP_HINT, CsvMap, parse_map
from ..engine.ingest.pipeline import IngestReport
from .context import Context
from .output import console, print_json
from .progress import progress_bar


def run_ingest(
    session: Any,
    paths: list[Path],
    *,
    quiet: bool = False,
    title: str = "Ingesting",
    csv_map: CsvMap | None = None,
) -> IngestReport:
    if quiet:
        return session.ingest(paths, None, csv_map)
    with progress_bar(title) as progress:
        return session.ingest(paths, progress, csv_map)


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
    "--map",
    "csv_map",
    callback=_csv_map,
    metavar="date=COLUMN,text=COLUMN[,source=NAME]",
    help=f"Read CSV files by these columns, as observations ({MAP_HINT}).",
)
@click.pass_obj
def command(
    ctx: Context, paths: tuple[Path, ...], as_json: bool, quiet: bool, csv_map: CsvMap | None
) -> None:
    """Read notes, journals, calendars, workouts, transcripts and records into the memory."""
    report = run_ingest(
        ctx.session(hold=True), list(paths), quiet=quiet or as_json, csv_map=csv_map
    )
    if as_json:
        print_json(report.as_dict())
    else:
        out = console()
        out.print(summary(report))
        if not report.changed and not report.skipped:
            out.print("Nothing changed: every file was already in the memory.")
        for skipped in report.skipped:
            # One line per file even when piped, so the names can be grepped.
            out.print(
                f"[yellow]skipped[/] {escape(skipped.name)}: {escape(skipped.reason)}",
                soft_wrap=True,
            )
    if report.skipped:
        raise SystemExit(int(ExitCode.PARTIAL))
