"""`sadie eval locomo PATH`: retrieval measured on the LoCoMo benchmark, in a scratch home.

Prints recall@5, recall@10 and nDCG@10 per channel (vector, keyword, graph, fused), overall and
by question category; ``--json`` prints ``{"questions", "overall", "by_category", …}``. The
person's own memory is never opened.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ..engine.wire import dump
from .context import Context
from .output import console, err_console, print_json

METRICS = ("recall@5", "recall@10", "ndcg@10")


@click.group("eval")
def group() -> None:
    """Measure retrieval on benchmarks."""


@group.command("locomo")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--conversations",
    default=None,
    metavar="IDS",
    help="Comma-separated conversation ids (default: all in PATH).",
)
@click.option(
    "-k",
    "k",
    type=click.IntRange(1, 100),
    default=10,
    show_default=True,
    help="Chunks retrieved per question.",
)
@click.option("--persona", default="analyst", show_default=True, help="Persona for `fused`.")
@click.option(
    "--one-memory",
    is_flag=True,
    help="Ingest every conversation into one memory (ids namespaced by conversation).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def locomo(
    ctx: Context | None,
    path: Path,
    conversations: str | None,
    k: int,
    persona: str,
    one_memory: bool,
    as_json: bool,
) -> None:
    """Run the LoCoMo retrieval benchmark on PATH (a json file or a folder of them)."""
    # lazy: eval.locomo loads only when locomo runs, off the start-up path
    from ..eval.locomo import run_locomo

    ids = [c for c in conversations.split(",")] if conversations else None
    err = err_console()
    report = run_locomo(
        path,
        conversations=ids,
        k=k,
        persona=persona,
        progress=lambda message: err.print(f"[dim]{escape(message)}[/]"),
        one_memory=one_memory,
    )
    result = report.result()
    if as_json:
        print_json(dump(result))
        return
    out = console()
    out.print(
        f"[bold]LoCoMo[/] {result.questions} questions, "
        f"{len(result.chunks)} conversations{' in one memory' if one_memory else ''}, "
        f"k={k}, persona {escape(persona)}"
    )
    out.print(_table("overall", result.overall))
    for category, block in result.by_category.items():
        out.print(_table(f"{category} ({block.questions})", block.by_channel()))


def _table(title: str, block: Mapping[str, Mapping[str, float]]) -> Table:
    table = Table(title=title, title_justify="left", box=None, padding=(0, 2), header_style="bold")
    table.add_column("channel")
    for metric in METRICS:
        table.add_column(metric, justify="right")
    for channel in ("vector", "keyword", "graph", "fused"):
        if channel in block:
            table.add_row(channel, *(f"{block[channel][m]:.3f}" for m in METRICS))
    return table


@group.command("demo")
@click.option(
    "--questions",
    "questions_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="PATH",
    help="Question file (default: the checkout's tests/data/demo_questions.jsonl).",
)
@click.option(
    "--persona", default=None, help="Persona whose rules apply (default: the ask persona)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (misses included).")
@click.option("-v", "--verbose", is_flag=True, help="List the questions that missed at 10.")
@click.pass_obj
def demo(
    ctx: Context | None,
    questions_path: Path | None,
    persona: str | None,
    as_json: bool,
    verbose: bool,
) -> None:
    """Recall@5 / recall@10 of retrieval on the demo memory's own questions."""
    # lazy: config loads only when demo runs, off the start-up path
    from ..config import load_settings
    from ..eval.demo import DEPTH, default_questions, load_questions, run_demo
    from ..paths import resolve_home
    from .demo import ensure_demo

    # The file first: a missing one fails in a line, before any demo build.
    questions = load_questions(questions_path or default_questions())
    settings = ctx.settings if ctx is not None else load_settings()
    home = resolve_home(demo=True)
    ensure_demo(home)
    result = run_demo(home, questions, persona=persona or settings.ask_persona).result()
    if as_json:
        print_json(dump(result))
        return
    out = console()
    out.print(
        f"[bold]Demo memory[/] {result.questions} questions, persona {escape(result.persona)},"
        f" now {result.now[:10]}"
    )
    table = Table(box=None, padding=(0, 2), header_style="bold")
    for name in ("kind", "questions", "recall@5", "recall@10"):
        table.add_column(name, justify="left" if name == "kind" else "right")
    for name, block in [("overall", result.overall), *result.by_kind.items()]:
        table.add_row(
            name, str(block.questions), f"{block.recall_at_5:.3f}", f"{block.recall_at_10:.3f}"
        )
    out.print(table)
    misses = result.misses
    if not verbose:
        if misses:
            out.print(f"[dim]{len(misses)} missed at {DEPTH} (--verbose lists them)[/]")
        return
    for miss in misses:
        out.print(
            f"[bold]miss[/] ({escape(miss.kind)}, recall@{DEPTH} {miss.recall:.2f})"
            f" {escape(miss.question)}\n  wanted {escape(', '.join(miss.missing))}"
            f"\n  got    {escape(', '.join(miss.retrieved))}"
        )


@group.command("reflect")
@click.option(
    "--per-belief",
    type=click.IntRange(1, 20),
    default=1,
    show_default=True,
    help="Evidence notes of each held-out belief to reflect on (the earliest).",
)
@click.option("--limit", type=click.IntRange(1, 10000), default=None, help="At most N episodes.")
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="HOME",
    help="Build the scratch memory here and keep it (inspect it with SADIE_HOME=HOME).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def reflect(
    ctx: Context | None, per_belief: int, limit: int | None, keep: Path | None, as_json: bool
) -> None:
    """Reflection on the demo memory with its hand-written beliefs held out: how many it
    recovers, how many quotes were word for word, contested beliefs found, time and tokens."""
    # lazy: config loads only when reflect runs, off the start-up path
    from ..config import load_settings
    from ..eval.reflect import run_reflect_eval

    settings = ctx.settings if ctx is not None else load_settings()
    err = err_console()
    result = run_reflect_eval(
        settings,
        per_belief=per_belief,
        limit=limit,
        keep=keep,
        progress=lambda message: err.print(f"[dim]{escape(message)}[/]"),
    )
    if as_json:
        print_json(dump(result))
        return
    out = console()
    out.print(
        f"[bold]Reflection[/] {escape(result.model)} on {result.episodes} demo episodes,"
        f" {result.held_out} hand-written beliefs held out"
    )
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_row("derived beliefs", str(result.derived))
    table.add_row("held-out beliefs recovered", f"{result.recovered} / {result.held_out}")
    table.add_row("  by embedding (for comparison)", str(result.recovered_by_embedding))
    table.add_row("derived with every quote verbatim", f"{result.all_verbatim} / {result.derived}")
    table.add_row("contested found", f"{result.contested_found} / {result.contested_held_out}")
    table.add_row("seconds per 100 episodes", f"{result.seconds_per_100_episodes:.0f}")
    tokens = result.tokens_per_100_episodes
    table.add_row("tokens per 100 episodes", f"{tokens['read']} read, {tokens['written']} written")
    out.print(table)
