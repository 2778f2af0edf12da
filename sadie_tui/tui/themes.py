"""Themes: Textual ``Theme`` objects read from TOML files in ``themes/`` (shipped) and the
user's ``<config>/themes/`` folder, plus the app's semantic variables and their defaults.

A theme file holds Textual's colour fields at top level and sadie's own variables under
``[variables]``; any variable a file leaves out falls back to ``VARIABLE_DEFAULTS``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path

from textual.theme import Theme

from ..paths import config_dir, shipped_themes

DEFAULT_THEME = "sadie-dark"

# Every variable app.tcss uses beyond Textual's own; a theme may override any of them.
VARIABLE_DEFAULTS: dict[str, str] = {
    "sadie-user": "$secondary",
    "sadie-assistant": "$primary",
    "sadie-verbatim": "$success",
    "sadie-paraphrase": "$warning",
    "sadie-inference": "$secondary",
    "sadie-quote-background": "$warning 30%",
    "sadie-chip-background": "$panel",
    "sadie-muted": "$foreground 60%",
}

_COLOUR_FIELDS = (
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)


class ThemeFileError(ValueError):
    """A theme file that cannot be read; the app skips it and says which."""


def theme_from_toml(text: str, fallback_name: str) -> Theme:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ThemeFileError(str(exc)) from exc
    if not isinstance(data.get("primary"), str):
        raise ThemeFileError("a theme needs at least `primary`")
    variables = data.get("variables") or {}
    if not isinstance(variables, dict):
        raise ThemeFileError("[variables] must be a table")
    fields: dict[str, object] = {k: data[k] for k in _COLOUR_FIELDS if isinstance(data.get(k), str)}
    for key in ("luminosity_spread", "text_alpha"):
        if isinstance(data.get(key), int | float):
            fields[key] = float(data[key])
    return Theme(
        name=str(data.get("name") or fallback_name),
        dark=bool(data.get("dark", True)),
        variables={str(k): str(v) for k, v in variables.items()},
        **fields,  # type: ignore[arg-type]
    )


def resolve_defaults(colours: dict[str, str]) -> dict[str, str]:
    """``VARIABLE_DEFAULTS`` with ``$name`` references replaced by the theme's own colours
    (Textual does not expand variables inside variable values)."""
    resolved: dict[str, str] = {}
    for key, value in VARIABLE_DEFAULTS.items():
        head, _, rest = value.partition(" ")
        if head.startswith("$") and head[1:] in colours:
            value = f"{colours[head[1:]]} {rest}".strip()
        resolved[key] = value
    return resolved


def theme_folders() -> list[Path]:
    return [shipped_themes(), config_dir() / "themes"]


def load_themes(folders: Iterable[Path] | None = None) -> tuple[list[Theme], list[str]]:
    """All readable themes (later folders override earlier ones by name) and the problems."""
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for folder in folders if folders is not None else theme_folders():
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = theme_from_toml(path.read_text(encoding="utf-8"), path.stem)
            except (OSError, UnicodeDecodeError, ThemeFileError) as exc:
                problems.append(f"{path.name}: {exc}")
                continue
            themes[theme.name] = theme
    return list(themes.values()), problems
