"""Command-palette entries (ctrl+p): every keyed action of the screen underneath (with its
key), plus one entry per persona and per theme."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.app import SystemCommand
from textual.screen import Screen

if TYPE_CHECKING:
    from .host import SadieHost

# Friendlier palette titles for some binding ids: id -> (title, help).
TITLES = {
    "new-conversation": ("New conversation", "Start a fresh conversation"),
    "browser": ("Conversations", "Browse, search, pin, archive, rename, forget, export"),
    "attach-chip": (
        "Attach context",
        "Attach a wiki entry, note, brief, person, Today card or record",
    ),
    "remove-last-chip": ("Remove last chip", "Detach the most recently attached context"),
    "attach-record": (
        "Attach the offered record",
        "Attach the record that matches your message but that the persona leaves out",
    ),
    "toggle-sidebar": ("Toggle sources", "Show or hide the citation sidebar"),
    "stop-reply": ("Stop the reply", "Stop streaming; what was shown is kept"),
    "copy": ("Copy last reply", "Copy the last reply (or the focused message) to the clipboard"),
    "help": ("Help", "Keys, sigils and citation labels"),
    "switch-persona": ("Switch persona…", "Choose the lens sadie replies through"),
    "switch-theme": ("Switch theme…", "Choose a colour theme (remembered)"),
    "beliefs": (
        "What sadie has learned",
        "The beliefs sadie drew from your notes, with their quotes: accept, reject, edit",
    ),
    "choose-model": (
        "Choose model…",
        "Pick one of the models the server has pulled, or change the server's address",
    ),
    "regenerate": ("Regenerate the last reply", "Answer your last message again (or retry it)"),
    "edit-last": ("Edit the last message", "Change your last message and resend it"),
    "scroll-up": ("Scroll up", "Scroll the conversation up a page"),
    "scroll-down": ("Scroll down", "Scroll the conversation down a page"),
    "scroll-start": ("Scroll to the start", "Jump to the first message"),
    "scroll-end": ("Scroll to the end", "Jump to the newest message"),
    "quit": ("Quit", "Quit sadie"),
}
# Keys that make no sense from the palette.
SKIP = {"command-palette", "send", "newline"}


def system_commands(app: SadieHost, screen: Screen) -> Iterator[SystemCommand]:
    seen: set[str] = set()
    for active in screen.active_bindings.values():
        binding = active.binding
        if not binding.id or binding.id in SKIP or binding.id in seen:
            continue
        seen.add(binding.id)
        title, help_text = TITLES.get(binding.id, (binding.description, binding.description))
        yield SystemCommand(
            title,
            f"{help_text} ({app.get_key_display(binding)})",
            partial(app.run_action, binding.action, active.node),
        )
    yield SystemCommand(
        "Model server address…",
        "Where sadie finds the model server: used at once, saved to config.toml",
        partial(app.choose_model, address=True),
    )
    for name, description in app.personas().items():
        yield SystemCommand(
            f"Persona: {name}",
            description or f"Reply as the {name}",
            partial(app.preferences.set_persona, name),
        )
    for name in app.sadie_themes:
        yield SystemCommand(
            f"Theme: {name}", "Use this theme (remembered)", partial(app.set_theme, name)
        )
