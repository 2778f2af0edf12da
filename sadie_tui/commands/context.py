"""What every CLI command gets: the ``Launch`` (home, settings, the session), with the demo
memory built behind the CLI's own progress bar."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..launch import DemoBuilder, Launch
from .demo import ensure_demo

if TYPE_CHECKING:
    from ..engine.session import SessionProtocol


def ask_on_terminal(prompt: str, new: bool) -> str | None:
    """An encrypted memory's passphrase, typed unseen on the terminal (twice when new)."""
    # lazy: click loads with the command anyway; kept here beside its one use
    import click

    answer = click.prompt(prompt, hide_input=True, confirmation_prompt=new, err=True)
    return str(answer) or None


@dataclass
class Context(Launch):
    def __post_init__(self) -> None:
        if self.ask is None and sys.stdin.isatty():
            self.ask = ask_on_terminal

    def session(
        self,
        *,
        read_only: bool = False,
        wait_for_embedder: bool = True,
        build_demo: DemoBuilder | None = ensure_demo,
        remote: bool = True,
        hold: bool = False,
    ) -> SessionProtocol:
        """As ``Launch.session``; a memory held by ``sadie serve`` is reached over its socket."""
        return super().session(
            read_only=read_only,
            wait_for_embedder=wait_for_embedder,
            build_demo=build_demo,
            remote=remote,
            hold=hold,
        )
