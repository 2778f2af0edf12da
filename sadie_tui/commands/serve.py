"""`sadie serve`: the HTTP API over this memory, held for as long as the server runs."""

from __future__ import annotations

from pathlib import Path

import click

from .context import Context
from .output import error_line


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="0: any free."
)
@click.option(
    "--token",
    envvar="SADIE_API_TOKEN",
    default=None,
    help="Require `Authorization: Bearer TOKEN` (needed for any address but loopback).",
)
@click.option(
    "--socket",
    "unix_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="PATH",
    help="Serve on this Unix socket (mode 0600) instead of --host/--port.",
)
@click.pass_obj
def command(ctx: Context, host: str, port: int, token: str | None, unix_path: Path | None) -> None:
    """Serve the HTTP API (ask, chat as SSE or NDJSON, conversations, chips, search) until
    ctrl+c. The routes are described at /openapi.json and in the README. Other sadie
    commands on this memory reach it through <home>/sadie.sock meanwhile."""
    # lazy: uvicorn and starlette load only for `sadie serve`
    from ..serve.guard import check_bind
    from ..serve.server import serve

    token = check_bind(host, token)  # before opening the memory: refuse early
    serve(
        ctx.session(remote=False),
        host=host,
        port=port,
        token=token,
        announce=error_line,
        unix_path=unix_path,
    )
