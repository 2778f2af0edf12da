"""``Any`` only where a library forces it: every ``Any`` in the covered folders carries a
``# Any: <why>`` comment on its line or the line above, in the whole package. JSON values use ``engine/jsonvalue.py``'s ``JSON`` instead."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "sadie_tui"

#: Globs under sadie_tui/ whose files are held to the rule.
SCOPE = ("**/*.py",)  # the whole package

REASON = "# Any:"


def _files() -> list[Path]:
    return sorted({path for pattern in SCOPE for path in PACKAGE.glob(pattern)})


def silent_anys(source: str) -> list[int]:
    """Line numbers of ``Any`` names (code, not strings or comments; imports aside) with no
    ``# Any:`` reason on their line or the line above."""
    lines = source.splitlines()
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.NAME or token.string != "Any":
            continue
        row = token.start[0]
        line = lines[row - 1]
        if line.lstrip().startswith(("from typing import", "import typing")):
            continue
        above = lines[row - 2] if row > 1 else ""
        if REASON not in line and not above.lstrip().startswith(REASON):
            found.append(row)
    return found


def test_every_any_says_why() -> None:
    assert _files(), "the scope names no file"
    silent = [
        f"{path.relative_to(PACKAGE.parent)}:{row}"
        for path in _files()
        for row in silent_anys(path.read_text(encoding="utf-8"))
    ]
    assert not silent, "Any with no `# Any: <why>` comment:\n" + "\n".join(silent)


def test_the_any_check_sees_a_silent_one() -> None:
    source = "\n".join(
        [
            "from typing import Any",
            '"""Any words in a docstring are fine."""',
            "def f(x: Any) -> None: ...  # the reason is missing",
            "def g(x: Any) -> None: ...  # Any: click's callback signature",
            "# Any: onnxruntime has no stubs",
            "session: Any = None",
            "names: list[Any] = []  # Any in a comment is not a name",
        ]
    )
    assert silent_anys(source) == [3, 7]
