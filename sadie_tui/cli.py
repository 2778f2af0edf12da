"""`sadie`: the click entry point. No arguments opens the TUI; `sadie "question"` opens it
already streaming the answer; `--ask` answers headless; subcommands manage the memory.

Command modules (and the TUI) are imported lazily, so `sadie --ask` never imports Textual.
"""

from __future__ import annotations

import difflib
import errno
import importlib
import importlib.util
import os
import sys
from typing import Any

import click

from . import __version__, signals
from .engine.errors import ExitCode, SadieError
from .paths import resolve_home

COMMANDS: dict[str, str] = {
    "ingest": "sadie_tui.commands.ingest:command",
    "doctor": "sadie_tui.commands.doctor:command",
    "stats": "sadie_tui.commands.stats:command",
    "compact": "sadie_tui.commands.stats:compact",
    "search": "sadie_tui.commands.search:command",
    "eval": "sadie_tui.commands.eval:group",
    "chat": "sadie_tui.commands.chat:command",
    "conversations": "sadie_tui.commands.conversations:group",
    "chips": "sadie_tui.commands.chips:group",
    "soul": "sadie_tui.commands.soul:group",
    "reflect": "sadie_tui.commands.reflect:command",
    "beliefs": "sadie_tui.commands.beliefs:group",
    "policies": "sadie_tui.commands.policies:command",
    "personas": "sadie_tui.commands.personas:command",
    "serve": "sadie_tui.commands.serve:command",
    "mcp": "sadie_tui.commands.mcp:command",
    "encrypt": "sadie_tui.commands.privacy:encrypt",
    "passphrase": "sadie_tui.commands.privacy:passphrase",
    "backup": "sadie_tui.commands.privacy:backup",
    "restore": "sadie_tui.commands.privacy:restore",
}


def _load(target: str) -> click.Command:
    module, _, attr = target.partition(":")
    return _text_only(getattr(importlib.import_module(module), attr))


def _is_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Text(click.ParamType):
    """A text argument (a message, a query, an id, a title): bytes that are not UTF-8, which
    Python carries as lone surrogates, are a usage error here, before a conversation is made
    or a database or tokenizer meets them. Paths (``click.Path``) keep such bytes: an ingest
    names and skips a file whose name holds them."""

    name = "text"

    # Any: click.ParamType.convert's own signature (a value of any type in, the type's out)
    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not _is_utf8(value):
            # lazy: display loads only when convert runs, off the start-up path
            from .display import safe

            self.fail(f"not UTF-8 text: {safe(value)}", param, ctx)
        return value


TEXT = Text()


def _text_only(command: click.Command) -> click.Command:
    """``command`` (and its subcommands) with every plain string parameter typed ``TEXT``."""
    for param in command.params:
        if param.type is click.STRING:
            param.type = TEXT
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _text_only(sub)
    return command


class SadieGroup(click.Group):
    """Lazy subcommands; a first argument that is not a command is a question for the TUI."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name, target in COMMANDS.items() if _available(target))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None or not _available(target):
            return None
        return _load(target)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and self.get_command(ctx, args[0]) is None and not args[0].startswith("-"):
            close = difflib.get_close_matches(args[0], self.list_commands(ctx), n=1, cutoff=0.75)
            if close and " " not in args[0]:
                # A typo of a command, not a question: say so instead of opening the app.
                raise click.UsageError(f"no such command {args[0]!r}; did you mean {close[0]!r}?")
            question = " ".join(args)
            if not _is_utf8(question):
                # lazy: display loads only when resolve_command runs, off the start-up path
                from .display import safe

                raise click.UsageError(f"the question is not UTF-8 text: {safe(question)}")
            ctx.meta["sadie.question"] = question
            return "open", _open_command, []
        return super().resolve_command(ctx, args)


def _available(target: str) -> bool:
    module = target.partition(":")[0]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@click.command("open", hidden=True)
@click.pass_context
def _open_command(ctx: click.Context) -> None:
    run_tui(ctx, ctx.meta.get("sadie.question"))


def run_tui(ctx: click.Context, question: str | None) -> None:
    # lazy: commands.context loads only when run_tui runs, off the start-up path
    from .commands.context import Context

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise click.UsageError(
            "the full-screen app needs a terminal; for scripts use --ask or `sadie chat`"
        )
    obj: Context = ctx.find_object(Context)  # type: ignore[assignment]
    # lazy: tui.run loads only when run_tui runs, off the start-up path
    from .tui.run import run as run_app

    run_app(obj, question=(question or "").strip() or None)


@click.group(
    cls=SadieGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--demo", is_flag=True, help="Use the demo memory (built on first use) instead of your own."
)
@click.option(
    "--ask",
    "question",
    type=TEXT,
    metavar="QUESTION",
    help="Answer one question headless and exit.",
)
@click.option(
    "--persona",
    type=TEXT,
    default=None,
    help="Persona for --ask (analyst, coach, friend, skeptic, …).",
)
@click.option("--json", "as_json", is_flag=True, help="With --ask: print one JSON object.")
@click.option(
    "--new", "new", is_flag=True, help="Open the app on a new conversation, not the last one."
)
@click.version_option(__version__, prog_name="sadie")
@click.pass_context
def main_group(
    ctx: click.Context,
    demo: bool,
    question: str | None,
    persona: str | None,
    as_json: bool,
    new: bool,
) -> None:
    """sadie: talk with your own memory, with citations you can check.

    Run with no arguments for the full-screen app, or `sadie "question"` to open it
    already answering.
    """
    # lazy: commands.context loads only when main_group runs, off the start-up path
    from .commands.context import Context

    if demo and os.environ.get("SADIE_HOME"):
        # lazy: commands.output loads only when main_group runs, off the start-up path
        from .commands.output import error_line

        error_line(f"--demo uses its own memory ({resolve_home(demo=True)}); SADIE_HOME is ignored")
    obj = Context.create(demo=demo)
    obj.new = new
    ctx.obj = obj
    ctx.call_on_close(obj.close)
    if question is not None:
        if ctx.invoked_subcommand is not None:
            raise click.UsageError("--ask cannot be combined with a subcommand")
        # lazy: headless loads only when main_group runs, off the start-up path
        from .commands.headless import ask

        ask(obj, question, persona=persona, as_json=as_json)
        return
    if ctx.invoked_subcommand is None:
        run_tui(ctx, None)


def _usage_line(exc: click.ClickException) -> str:
    """Click's usage error as one line, with where to look for help."""
    message = exc.format_message()
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        message += f" (see `{ctx.command_path} --help`)"
    return message


def _silence_stdout() -> None:
    """After a failed write to stdout, the interpreter's own flush at exit must not fail too."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> Any:  # Any: what click's Command.main returns
    # lazy: commands.output loads only when main runs, off the start-up path
    from .commands.output import error_line

    signals.install()
    try:
        return main_group.main(args=argv, prog_name="sadie", standalone_mode=False)
    except click.exceptions.Abort:
        error_line("aborted")
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        error_line(_usage_line(exc))
        sys.exit(int(ExitCode.USAGE) if isinstance(exc, click.UsageError) else exc.exit_code)
    except SadieError as exc:
        error_line(exc.one_line())
        sys.exit(int(exc.exit_code))
    except signals.Terminated as exc:
        error_line(exc.one_line())
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        error_line("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(0)
    except OSError as exc:
        if exc.errno is None or not _is_output_error(exc):
            raise
        _silence_stdout()
        error_line(f"cannot write the output: {exc.strerror or exc}")
        sys.exit(int(ExitCode.FAILURE))


def _is_output_error(exc: OSError) -> bool:
    """A write to stdout failed (a full disk, a closed pipe), not something sadie opened."""

    return exc.errno in (errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EDQUOT)


if __name__ == "__main__":
    main()
