"""Where sadie keeps things: the memory home, the config folder, the shipped assets; and
keeping a memory private (a home sadie makes is 0700, its own files 0600).

Everything is resolved on call (never at import), so tests can point ``SADIE_HOME``
at a temporary folder.
"""

from __future__ import annotations

import importlib.util
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

APP_NAME = "sadie"
DB_NAME = "sadie.duckdb"
#: Group and other permission bits: a memory is a person's journal, none of them are set.
OTHERS = 0o077


def project_root() -> Path:
    """The checkout's root, which holds ``personas/``, ``themes/`` and ``data/``."""
    return Path(__file__).resolve().parent.parent


def _asset(name: str, checkout: str) -> Path:
    """A shipped asset folder: the wheel's ``sadie_tui.assets.<name>`` (package data with no
    ``__init__``, so found through its import spec), else the checkout's own folder."""

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
    # lazy: platformdirs loads only when a folder is first asked for
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def config_dir() -> Path:
    env = os.environ.get("SADIE_CONFIG")
    if env:
        return Path(env).expanduser()
    # lazy: as in user_data_root
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


# --------------------------------------------------------------------------- private files


def is_sadies_own(folder: Path) -> bool:
    """Whether ``folder`` lies in sadie's platform data folder (sadie made it), not in one
    the person chose with ``SADIE_HOME``."""
    try:
        return Path(folder).resolve().is_relative_to(user_data_root().resolve())
    except (OSError, RuntimeError):
        return False


def make_private_folder(folder: Path) -> None:
    """Create ``folder`` (missing parents as usual) for its owner only. A folder that exists
    keeps its mode unless sadie made it: the person chose the others."""
    folder = Path(folder)
    if folder.is_dir():
        if is_sadies_own(folder):
            keep_private(folder)
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)  # mkdir's mode goes through the umask


def write_private(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``. A file this creates is its owner's only (0600)
    whatever the umask, like the memory it came from; one that exists keeps the mode its
    owner gave it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w", encoding="utf-8") as out:
        out.write(text)


def keep_private(path: Path) -> None:
    """Take the group and other permissions off one of sadie's files or folders, if it
    exists and has any (best effort: a file sadie may not change stays as it is)."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        if mode & OTHERS:
            os.chmod(path, mode & ~OTHERS)
    except OSError:
        pass


@contextmanager
def private_umask() -> Iterator[None]:
    """Files and folders created meanwhile are born for their owner only. The umask is the
    whole process's: keep the block short (one ``duckdb.connect``)."""
    old = os.umask(OTHERS)
    try:
        yield
    finally:
        os.umask(old)
