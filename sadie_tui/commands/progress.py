"""The CLI's progress bar for building a memory (``sadie ingest``, the demo's first build).

Below both commands, so the demo builder does not import the ingest command, which imports
the command context, which builds the demo."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from .output import err_console

STAGES = {
    "reading": "Reading files",
    "embedding": "Embedding chunks",
    "storing": "Storing",
    "reflecting": "Reading notes",
    "done": "Done",
}


@contextmanager
def progress_bar(title: str) -> Iterator[Callable[[str, int, int], None]]:
    """A transient progress bar on stderr; yields the ingest's ``progress`` callback."""
    err = err_console()
    err.print(f"[bold]{escape(title)}[/]")
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task("Reading files", total=1)

        def progress(stage: str, done: int, total: int) -> None:
            bar.update(
                task, description=STAGES.get(stage, stage), completed=done, total=max(total, 1)
            )

        yield progress
