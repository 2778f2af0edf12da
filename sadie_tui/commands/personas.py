"""`sadie personas`: the lenses ask and chat can look through, shipped and your own, as the
session offers them (a client of another sadie lists the holder's); a file that did not load
is named on stderr and the others are listed."""

from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from ..paths import config_dir
from .context import Context
from .output import console, error_line, print_json


@click.command("personas")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def command(ctx: Context, as_json: bool) -> None:
    """List the personas (add your own in the config folder's personas/)."""
    personas = ctx.session().personas()
    for problem in personas.problems:  # left out; the others are listed
        error_line(f"skipped {problem.reason}")
    defaults = {ctx.settings.chat_persona: "chat", ctx.settings.ask_persona: "ask"}
    if as_json:
        print_json(
            [
                {
                    "name": p.name,
                    "description": p.description,
                    "chunks": p.chunks,
                    "window_days": p.window_days,
                    "stages": list(p.stages),
                    "weights": dict(p.weights),
                    "graph": p.graph,
                    "beliefs": p.beliefs,
                    "contested": p.contested,
                    "observations": p.observations,
                    "source": p.source,
                    "default_for": [k for n, k in defaults.items() if n == p.name],
                }
                for p in personas.values()
            ]
        )
        return
    table = Table(box=None, padding=(0, 2))
    for column in ("persona", "chunks", "channels", "description"):
        table.add_column(column)
    for p in personas.values():
        channels = ["vector", "keyword"] + [
            name
            for name, on in (
                ("graph", p.graph),
                ("beliefs", p.beliefs),
                ("contested", p.contested),
                ("observations", p.observations),
            )
            if on
        ]
        mark = "".join(f" (default for {k})" for n, k in defaults.items() if n == p.name)
        table.add_row(
            escape(p.name + mark), str(p.chunks), ", ".join(channels), escape(p.description)
        )
    console().print(table)
    console().print(f"your own personas: {escape(str(config_dir() / 'personas'))}/NAME.toml")
