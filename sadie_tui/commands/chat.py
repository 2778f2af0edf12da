"""`sadie chat "message"`: one chat turn, streamed; `--ndjson` for scripts."""

from __future__ import annotations

import click

from .context import Context


@click.command("chat")
@click.argument("message")
@click.option(
    "--conversation",
    "conversation_id",
    default=None,
    help="Continue this conversation (id or prefix).",
)
@click.option(
    "--new", is_flag=True, help="Start a new conversation (the default without --conversation)."
)
@click.option("--persona", default=None, help="friend (default), analyst, coach, skeptic, …")
@click.option("--ndjson", is_flag=True, help="Print the events, one JSON object a line.")
@click.pass_obj
def command(
    ctx: Context,
    message: str,
    conversation_id: str | None,
    new: bool,
    persona: str | None,
    ndjson: bool,
) -> None:
    """Send one message and stream the reply (the conversation is kept)."""
    # lazy: the chat turn's modules load only when this command runs
    from .headless import chat

    if conversation_id and new:
        raise click.UsageError("--new and --conversation cannot be combined")
    code = chat(
        ctx, message, conversation_id=conversation_id, persona=persona, new=new, ndjson=ndjson
    )
    if code:
        raise SystemExit(code)
