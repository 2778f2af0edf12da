"""`sadie reflect`: read the notes not yet reflected on, ask what they raise about you, and
answer from your whole memory with beliefs, each with checked quotes; a progress bar, a
summary, `--json` for scripts.

Safe to stop at any moment (ctrl+c, a kill, the end of `--budget`): every finished batch is
committed, and the next run starts with the rest.
"""

from __future__ import annotations

from datetime import date, datetime

import click
from rich.table import Table

from ..engine.requests import ReflectJob
from .context import Context
from .output import console, print_json
from .progress import progress_bar


def _date(value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return datetime.strptime(value.strip(), "%Y-%m-%d").date()
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date like 2026-03-14") from None


@click.command("reflect")
@click.option("--all", "everything", is_flag=True, help="Read every note again, not only new ones.")
@click.option("--since", metavar="DATE", help="Read every note dated DATE (YYYY-MM-DD) or later.")
@click.option(
    "--budget",
    "minutes",
    type=click.FloatRange(min=0.1),
    default=None,
    metavar="MINUTES",
    help="Start no batch that would end after this many minutes.",
)
@click.option("--json", "as_json", is_flag=True, help="Print what the run did as JSON.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.pass_obj
def command(
    ctx: Context,
    everything: bool,
    since: str | None,
    minutes: float | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Propose beliefs about you from your notes, each with quotes checked word for word.

    Review them with `sadie beliefs list`, then accept, reject or edit each."""
    if everything and since:
        raise click.UsageError("--all and --since cannot be combined")
    day = _date(since)
    session = ctx.session(hold=True)
    if quiet or as_json:
        report = session.reflect(
            ReflectJob(everything=everything, since=day, budget_minutes=minutes)
        )
    else:
        with progress_bar("Reflecting") as progress:
            report = session.reflect(
                ReflectJob(
                    everything=everything, since=day, budget_minutes=minutes, progress=progress
                )
            )
    data = report.as_dict()
    if as_json:
        print_json(data)
        return
    out = console()
    if not report.batches:
        out.print("Nothing to reflect on: every note has been read (`--all` reads them again).")
        return
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(justify="right")
    for label, value in (
        ("notes read", report.episodes),
        ("questions asked", report.questions),
        ("  passages found for them in other notes", report.recalled),
        ("beliefs proposed", report.proposed),
        ("  new", report.new),
        ("  merged into one you have", report.merged),
        ("  already known", report.repeated),
        ("  dropped: no quote found in its note", report.dropped),
        ("  set aside: plans and one-day events", sum(report.not_beliefs.values())),
        ("  rejected before", report.rejected_before),
        ("contested", report.contested),
        ("retired (replaced)", report.retired),
        ("quotes dropped", sum(report.quotes_dropped.values())),
        ("notes still waiting", report.left),
        ("model", report.model),
        ("requests to the model", report.requests),
        ("tokens read / written", f"{report.prompt_tokens} / {report.eval_tokens}"),
        ("elapsed", f"{report.elapsed:.1f} s"),
    ):
        table.add_row(label, str(value))
    out.print(table)
    if report.stopped == "budget":
        out.print(f"Stopped at the budget; {report.left} notes wait for the next run.")
    elif report.stopped:
        out.print(f"Stopped; {report.left} notes wait for the next run.")
    if report.failed:
        out.print(f"{report.failed} request(s) timed out; their notes wait for the next run.")
    for why, count in report.unusable_why.items():
        answers = "answer" if count == 1 else "answers"
        out.print(f"{count} of the model's {answers} could not be read: {why}.")
    if report.new:
        out.print("Review them: `sadie beliefs list --status active`.")
