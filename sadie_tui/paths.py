"""Where sadie keeps things: the memory home, the config folder, the shipped assets.

Everything is resolved on call (never at import), so tests can point ``SADIE_HOME``
at a temporary folder.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "sadie"
DB_NAME = "sadie.duckdb"


def project_root() -> Path:
    """The checkout's root, which holds ``personas/``, ``themes/`` and ``data/``."""
    return Path(__file__).resolve().parent.parent


def _asset(name: str, checkout: str) -> Path:
    """A shipped asset folder: the wheel's ``sadie_tui.assets.<name>`` (package data with no
    ``__init__``, so found through its import spec), else the checkout's own folder."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(f"sadie_tui.assets.{name}")
    except ModuleNotFoundError:
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        if Path(location).is_dir():
            return Path(location)
    return project_root() / checkout


def demo_source() -> Path:
    return _asset("demo", "data/demo")


def shipped_personas() -> Path:
    return _asset("personas", "personas")


def shipped_themes() -> Path:
    return _asset("themes", "themes")


def user_data_root() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def config_dir() -> Path:
    env = os.environ.get("SADIE_CONFIG")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME, appauthor=False))


def resolve_home(*, demo: bool = False) -> Path:
    """The demo's own home for ``demo`` (never ``SADIE_HOME``: the demo must not pour into a
    person's memory); else ``SADIE_HOME``, else the person's home in the data folder."""
    root = user_data_root()
    if demo:
        return root / "demo"
    env = os.environ.get("SADIE_HOME")
    if env:
        return Path(env).expanduser()
    return root / "home"


def db_path(home: Path) -> Path:
    return home / DB_NAME
