"""The package's import graph has no cycle, counting imports inside functions.

Every module of ``sadie_tui`` is parsed with :mod:`ast` (never imported); every ``import``
and ``from … import`` anywhere in it, relative ones resolved, becomes an edge to the
``sadie_tui`` module it names (``from pkg import name`` counts ``pkg.name`` when that is a
module, else ``pkg``), imports under ``if TYPE_CHECKING:`` included. A function-level
import hides a cycle from import-linter and from Python alike, so it counts here.

A function-level import is kept only where start-up time needs it, and says why in a
comment: on its line, or above it (one comment may head a run of imports).

The same graph keeps the engine's floors: no arrow from a lower layer to a higher one, nor
between independent siblings (``a | b``), by the layers contract import-linter checks,
read from ``pyproject.toml`` so the two cannot drift.
"""

from __future__ import annotations

import ast
import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path

import sadie_tui

ROOT = Path(sadie_tui.__file__).parent
PACKAGE = "sadie_tui"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, path: Path, modules: dict[str, Path]):
    """(target module, import node, inside a function) for each import of the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

    def walk(node: ast.AST, in_function: bool):
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, child, in_function
            elif isinstance(child, ast.ImportFrom):
                base = _absolute(module, path, child)
                for alias in child.names:
                    name = f"{base}.{alias.name}"
                    yield (name if name in modules else base), child, in_function
            yield from walk(child, nested)

    yield from walk(tree, False)


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The sadie_tui module an imported name lives in (longest known prefix)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for module, path in modules.items():
        for target, _node, _in_function in _imports(module, path, modules):
            if target.split(".")[0] != PACKAGE:
                continue
            owner = _owner(target, modules)
            if owner and owner != module:
                graph[module].add(owner)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_cycle() -> None:
    cycles = _cycles(_graph())
    report = "\n".join(" <-> ".join(component) for component in cycles)
    assert not cycles, f"import cycles (function-level imports included):\n{report}"


def test_the_graph_sees_function_level_and_relative_imports() -> None:
    graph = _graph()
    # cli.py imports the TUI lazily, inside a function, by a relative import.
    assert any(target.startswith("sadie_tui.tui") for target in graph["sadie_tui.cli"])
    # and imports under ``if TYPE_CHECKING:``: a cycle of types is a cycle of design.
    assert "sadie_tui.engine.memory" in graph["sadie_tui.engine.context"]


def test_a_cycle_is_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


_IMPORT_LINE = ("import ", "from ")


def _commented(lines: list[str], index: int) -> bool:
    """A comment on the import's line, or above it through a run of imports."""
    if "#" in lines[index]:
        return True
    j = index - 1
    while j >= 0:
        text = lines[j].strip()
        if text.startswith("#"):
            return True
        if text.startswith(_IMPORT_LINE):
            if "#" in text:
                return True
            j -= 1
            continue
        if text.endswith(",") or text == ")":  # inside a parenthesised import above
            j -= 1
            continue
        return False
    return False


def test_every_lazy_import_says_why() -> None:
    silent = []
    for module, path in _modules().items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for _target, node, in_function in _imports(module, path, _modules()):
            if in_function and not _commented(lines, node.lineno - 1):
                silent.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    assert not silent, "function-level imports with no comment saying why:\n" + "\n".join(
        sorted(set(silent))
    )


def test_the_lazy_import_check_sees_a_silent_one() -> None:
    lines = [
        "def f():",
        "    import json",
        "    # lazy: numpy is slow",
        "    import numpy",
        "    import scipy",
    ]
    assert not _commented(lines, 1)
    assert _commented(lines, 3) and _commented(lines, 4)


@dataclass(frozen=True)
class Layers:
    """A layers contract: each floor's modules (highest first), whether a floor's siblings
    are independent (``a | b``) or may import each other (``a : b``), and the arrows let be."""

    floors: list[list[str]]
    independent: list[bool]
    ignored: list[tuple[str, str]]

    def floor_of(self, module: str) -> tuple[int, str] | None:
        """(floor, the layer module holding ``module``), or None outside every floor."""
        for number, names in enumerate(self.floors):
            for name in names:
                if module == name or module.startswith(name + "."):
                    return number, name
        return None

    def let_be(self, source: str, target: str) -> bool:
        return any(
            fnmatch.fnmatchcase(source, a) and fnmatch.fnmatchcase(target, b)
            for a, b in self.ignored
        )


def _engine_layers() -> Layers:
    """The layers contract inside the engine (its container is ``sadie_tui.engine``)."""
    config = tomllib.loads((ROOT.parent / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["type"] == "layers" and c.get("containers") == [f"{PACKAGE}.engine"]
    ]
    floors, independent = [], []
    for layer in contract["layers"]:
        separator = ":" if ":" in layer else "|"
        floors.append([f"{PACKAGE}.engine.{n.strip()}" for n in layer.split(separator)])
        independent.append(separator == "|")
    ignored = []
    for line in contract.get("ignore_imports", []):
        source, target = (side.strip() for side in line.split("->"))
        ignored.append((source, target))
    return Layers(floors, independent, ignored)


def _upward(graph: dict[str, set[str]], layers: Layers) -> list[str]:
    """The arrows that reach a higher floor, or an independent sibling on the same floor."""
    found = []
    for source in sorted(graph):
        here = layers.floor_of(source)
        if here is None:
            continue
        for target in sorted(graph[source]):
            there = layers.floor_of(target)
            if there is None or layers.let_be(source, target):
                continue
            up = there[0] < here[0]
            across = there[0] == here[0] and there[1] != here[1] and layers.independent[here[0]]
            if up or across:
                found.append(f"{source} -> {target}")
    return found


def test_no_arrow_runs_up_the_engines_layers() -> None:
    layers = _engine_layers()
    modules = _modules()
    missing = [name for floor in layers.floors for name in floor if name not in modules]
    assert not missing, f"the layers contract names modules that do not exist: {missing}"
    upward = _upward(_graph(), layers)
    assert not upward, "arrows up the engine's floors (function-level imports included):\n" + (
        "\n".join(upward)
    )


def test_an_arrow_up_or_across_is_found_and_one_let_be_is_not() -> None:
    e = f"{PACKAGE}.engine"
    layers = Layers(
        floors=[[f"{e}.session"], [f"{e}.reflect", f"{e}.conversations"], [f"{e}.store"]],
        independent=[True, True, True],
        ignored=[(f"{e}.store.old", f"{e}.session")],
    )
    graph = {
        f"{e}.store.db": {f"{e}.session"},  # up two floors
        f"{e}.store.old": {f"{e}.session"},  # let be
        f"{e}.reflect.run": {f"{e}.conversations.lifecycle", f"{e}.store.db"},  # across; down
        f"{e}.session": {f"{e}.store.db"},  # down
        f"{e}.wire": {f"{e}.session"},  # outside every floor
    }
    assert _upward(graph, layers) == [
        f"{e}.reflect.run -> {e}.conversations.lifecycle",
        f"{e}.store.db -> {e}.session",
    ]
    assert _upward(graph, Layers(layers.floors, [True, False, True], layers.ignored)) == [
        f"{e}.store.db -> {e}.session"
    ]
