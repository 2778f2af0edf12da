"""No class in ``sadie_tui`` has more than 30 methods: a class that big owns several concerns,
and the app shows how to split one (``tui/app.py`` composes ``keeper.py``,
``model_control.py``, ``preferences.py`` …). Counted on the source (parsed, never imported):
each ``def`` / ``async def`` directly in the class body, properties included."""

from __future__ import annotations

import ast
from pathlib import Path

import sadie_tui

PACKAGE = Path(sadie_tui.__file__).parent
LIMIT = 30

def methods(source: str) -> dict[str, int]:
    """Each class in ``source`` (nested ones too) and how many methods its body defines."""
    return {
        node.name: sum(isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef) for b in node.body)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ClassDef)
    }


def counts() -> dict[tuple[str, str], int]:
    """(file relative to the package, class) → methods, over every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for name, n in methods(path.read_text(encoding="utf-8")).items():
            found[(where, name)] = n
    return found


def test_no_class_over_30_methods() -> None:
    over = [
        f"{name} in sadie_tui/{where}: {n} methods"
        for (where, name), n in counts().items()
        if n > LIMIT
    ]
    assert not over, f"classes over {LIMIT} methods (split them by concern):\n" + "\n".join(over)


def test_the_count_sees_methods_properties_and_async_ones_only() -> None:
    source = """
class Outer:
    x = 1

    def a(self): ...

    @property
    def b(self): ...

    async def c(self):
        def inner(): ...

    class Inner:
        def d(self): ...
"""
    assert methods(source) == {"Outer": 3, "Inner": 1}
