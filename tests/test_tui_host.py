"""The app's surface for its screens and widgets is ``tui/host.py``'s ``SadieHost``: no module of
the TUI but ``app.py`` reads the app's private attributes (``self.app._x``, ``host._x``) or
reaches into the app or the session with ``getattr`` / ``hasattr``. Checked on the source
(parsed, never imported), with a guard that the check itself catches each form."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sadie_tui

TUI = Path(sadie_tui.__file__).parent / "tui"
# Names by which a screen, widget or controller holds the app, and the session behind it.
APP_NAMES = {"app", "host", "sadie"}
SESSION_NAMES = {"session"}


def _named(node: ast.AST, names: set[str]) -> bool:
    """``node`` is ``app`` / ``self.app`` / ``self.screen.app`` … for one of ``names``."""
    if isinstance(node, ast.Name):
        return node.id in names
    return isinstance(node, ast.Attribute) and node.attr in names


def reaches(source: str) -> list[str]:
    """Each place in ``source`` that reads a private attribute of the app, or uses
    ``getattr``/``hasattr`` on the app or a session, as ``line: code``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and _named(node.value, APP_NAMES):
            private = node.attr.startswith("_") and not node.attr.startswith("__")
            if private:
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and node.args
            and _named(node.args[0], APP_NAMES | SESSION_NAMES)
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def _modules() -> list[Path]:
    return [p for p in sorted(TUI.rglob("*.py")) if p.name != "app.py" or p.parent != TUI]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(TUI)))
def test_no_screen_or_widget_reaches_into_the_app(path: Path) -> None:
    found = reaches(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(TUI)} reaches past SadieHost:\n" + "\n".join(found)


def test_the_screens_and_widgets_are_all_checked() -> None:
    names = {str(p.relative_to(TUI)) for p in _modules()}
    assert {"screens/chat.py", "widgets/chip_bar.py", "turn_controller.py"} <= names
    assert "app.py" not in names


@pytest.mark.parametrize(
    "source",
    [
        "self.app._notifications",
        "self.app._check_model(fresh=True)",
        "app._too_small",
        "self.host._last_remembered",
        "self.screen.app._keymap",
        "getattr(self.app, 'keymap', {})",
        "hasattr(self.app, 'session')",
        "getattr(self.host.session, 'embedder_notice', None)",
        "getattr(session, 'warm')()",
    ],
)
def test_the_check_catches_each_form(source: str) -> None:
    assert len(reaches(source)) == 1, source


@pytest.mark.parametrize(
    "source",
    [
        "self.app.copy_to_clipboard(text)",
        "self.host.session.personas()",
        "self.app.__class__",
        "getattr(transcript, how)",
        "self._worker.cancel()",
    ],
)
def test_the_public_surface_passes(source: str) -> None:
    assert reaches(source) == []
