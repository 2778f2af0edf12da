"""`sadie mcp`: this memory as Model Context Protocol tools, over stdin/stdout, for desktop
assistants, editors and agents (see ``mcp_server``). stdout carries the protocol only:
everything else sadie says goes to stderr."""

from __future__ import annotations

import click

from .context import Context


@click.command("mcp")
@click.pass_obj
def command(ctx: Context) -> None:
    """Serve the memory to another assistant over MCP (stdio) until it hangs up: search,
    ask (with checked citations), conversations and episodes; add_note too when config.toml
    says mcp_write = true. Register it as the command `sadie mcp`."""
    # lazy:  loads only when command runs, off the start-up path
    from .. import signals
    from ..mcp_server import run_stdio

    ctx.prewarm_embedder()
    # Held here and shared on the memory's socket, as the app does: the person's own sadie
    # keeps working while an assistant has this one open; or a client of the one holding it.
    session = ctx.session(hold=True)
    signals.run(run_stdio(session, write=ctx.settings.mcp_write))
