"""Headless answers for scripts: `sadie --ask` and `sadie chat`, with stable output and exit codes."""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

from .. import signals
from ..display import safe_line
from ..engine.errors import ErrorKind, ExitCode, UsageError, exit_code_for
from ..engine.requests import ChatTurn

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..engine.jsonvalue import JSONObject
    from ..engine.session import SessionProtocol
    from ..engine.turns.ask import Stage
    from .context import Context


def _session(ctx: Context) -> SessionProtocol:
    return ctx.session()


def ask(ctx: Context, question: str, *, persona: str | None, as_json: bool) -> None:
    # lazy: rich and the engine load only when --ask runs
    from .output import console, error_line, print_json

    if not question.strip():
        raise UsageError("the question is empty")
    result = signals.run(_session(ctx).ask(question, persona=persona))
    for notice in result.notices:
        error_line(notice)
    if as_json:
        print_json(result.as_json())
        return
    # lazy: rich.text loads only when ask runs, off the start-up path
    from rich.text import Text

    out = console()
    out.print(Text(result.answer))
    if result.opinion:
        out.print(Text("\nOpinion (beyond what the notes say): " + result.opinion, style="italic"))
    shown = [*result.citations, *result.found_by_sadie]
    if shown:
        out.print()
        for n, c in enumerate(shown, 1):
            line = Text(f"[{n}] ", style="bold")
            line.append(f"{c.date} {safe_line(c.title)}", style="cyan")
            line.append(f" — {c.label}: ", style="dim")
            line.append(f"“{c.quote}”")
            if c.doubt:
                line.append(f" (does not establish it: {c.doubt})", style="yellow")
            out.print(line)
    found = result.grounding.get("unsupported")
    spans = [s for s in found if isinstance(s, dict)] if isinstance(found, list) else []
    if spans and not result.abstained:
        out.print(Text(not_found_line(spans), style="yellow"))
    timing = stages_line(result.stages, result.latency_ms)
    if timing:
        out.print(Text(timing, style="dim"))


def stages_line(stages: Sequence[Stage], latency_ms: float) -> str:
    """ "took 97 s: draft 90 s, citation pass 7.2 s" — the stages a person waits on."""
    slow = [s for s in stages if s.ms >= 100]
    if latency_ms < 1000 or not slow:
        return ""
    parts = [f"{s.name.replace('_', ' ')} {s.ms / 1000:.1f} s" for s in slow]
    return f"took {latency_ms / 1000:.0f} s: " + ", ".join(parts)


def not_found_line(spans: Sequence[JSONObject]) -> str:
    """The line under a reply for the details no source holds (``events.not_found_line``)."""
    # lazy: engine.events loads only when a reply had such details, off the start-up path
    from ..engine.events import not_found_line as line

    return line([str(span.get("text", "")) for span in spans])


def chat(
    ctx: Context,
    message: str,
    *,
    conversation_id: str | None,
    persona: str | None,
    new: bool,
    ndjson: bool,
) -> int:
    """Stream one chat turn to stdout. Returns the exit code."""
    # lazy: as in ask
    from ..display import safe
    from ..engine.events import (
        Checking,
        CitationsEvent,
        ContextBudget,
        Done,
        ErrorEvent,
        Meta,
        Replace,
        Status,
        Thinking,
        Token,
        to_json,
    )
    from .output import error_line, print_ndjson, write_text

    session = _session(ctx)
    code = int(ExitCode.OK)
    reply_id: str | None = None
    ended = False  # the stream's done or error event is out
    in_tail = False  # the prose is complete: a stop keeps the reply (``WRITING_SOURCES``)

    async def run() -> None:
        nonlocal code, reply_id, ended, in_tail
        streamed_any = False
        thinking_shown = False
        chat_id = ""
        stream = session.chat(
            ChatTurn(message, conversation_id=conversation_id, persona=persona, new=new)
        )
        async for event in stream:
            if isinstance(event, Meta):
                reply_id = event.message_id
            ended = isinstance(event, Done | ErrorEvent)
            in_tail = in_tail or (isinstance(event, Status) and event.writing_sources)
            if ndjson:
                print_ndjson(to_json(event))
                if isinstance(event, ErrorEvent):
                    error_line(event.message + (f" ({event.fix})" if event.fix else ""))
                    code = int(exit_code_for(event.code))
                continue
            match event:
                case Meta(conversation_id=cid):
                    sys.stderr.write(f"conversation {safe(cid)}\n")
                    chat_id = cid
                case ContextBudget(offered=offered):
                    # Records the persona leaves out that match: offered, never briefed.
                    for offer in offered:
                        error_line(
                            f"a record matches: {safe(offer.line)} (attach it: sadie chips add"
                            f" {chat_id[:8]} record {offer.id[:8]})"
                        )
                case Status(value=value):
                    error_line(value)
                case Thinking(elapsed=elapsed):
                    if sys.stderr.isatty():
                        sys.stderr.write(f"\rthinking… {elapsed:.0f}s")
                        thinking_shown = True
                case Token(value=value):
                    if thinking_shown:
                        sys.stderr.write("\r\x1b[K")
                        thinking_shown = False
                    write_text(value)
                    sys.stdout.flush()
                    streamed_any = True
                case Checking(value=value, elapsed=elapsed):
                    if sys.stderr.isatty():
                        spent = f" {elapsed:.0f} s" if elapsed else ""
                        sys.stderr.write(f"\r{value}{spent}" if elapsed else f"\n{value}")
                case CitationsEvent(value=cites, found=found, unsupported=spans):
                    if streamed_any:
                        sys.stdout.write("\n")
                    for n, c in enumerate((*cites, *found), 1):
                        write_text(
                            f"[{n}] {c.date} {safe_line(c.title)} — {c.label}: “{c.quote}”\n"
                        )
                    if spans:
                        sys.stdout.write(not_found_line(list(spans)) + "\n")
                case Replace(value=value, reason=reason):
                    if reason != "citations list":
                        write_text(f"\n[{reason}] final text:\n{value}\n")
                case Done():
                    sys.stdout.flush()
                case ErrorEvent(message=msg, fix=fix, code=err_code):
                    if streamed_any:
                        sys.stdout.write("\n")
                    error_line(msg + (f" ({fix})" if fix else ""))
                    code = int(exit_code_for(err_code))

    def stopped(why: str) -> None:
        """Every NDJSON stream ends with ``done`` or ``error``: one stopped by ctrl+c or a
        signal too (its reply is kept as interrupted)."""
        if ndjson and not ended:
            kept = (
                "the reply is kept complete, with the sources that had arrived checked"
                if in_tail
                else "the reply so far is kept as interrupted"
            )
            with contextlib.suppress(OSError):  # a closed terminal (SIGHUP) takes no line
                event = ErrorEvent(
                    f"{why}: {kept}",
                    code=ErrorKind.INTERRUPTED,
                    message_id=reply_id,
                )
                print_ndjson(to_json(event))

    try:
        signals.run(run())
    except KeyboardInterrupt:  # ctrl+c (a signal's Terminated is no KeyboardInterrupt)
        stopped("interrupted")
        if in_tail:
            error_line("interrupted: the reply is kept, with the sources that had arrived checked")
        else:
            error_line("interrupted: the reply so far is kept and marked interrupted")
        return 130
    except signals.Terminated as exc:
        stopped(exc.one_line())
        raise
    return code
