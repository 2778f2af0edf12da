"""sadie works when installed from a wheel, outside the checkout: the personas, themes and
demo memory ship as package data. No network: the wheel is built from this tree without
build isolation and installed without dependencies (they are this environment's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_of_the_tree_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "sadie_tui").rglob("__init__.py")
    }
    assert found <= listed, f"add to pyproject's packages: {sorted(found - listed)}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out / "dist"), str(ROOT)],
        check=True, capture_output=True, timeout=600,
    )
    (wheel,) = (out / "dist").glob("sadie_tui-*.whl")
    target = out / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
         str(wheel)],
        check=True, capture_output=True, timeout=600,
    )
    return target


def sadie(installed: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": str(installed),
        "XDG_DATA_HOME": str(tmp / "data"),
        "SADIE_CONFIG": str(tmp / "config"),
        "SADIE_REASONER": "offline",
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    }
    env.pop("SADIE_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", *args],
        cwd=tmp,  # outside the checkout
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_the_wheel_runs_outside_the_checkout(installed: Path, tmp_path: Path):
    where = subprocess.run(
        [sys.executable, "-c", "import sadie_tui; print(sadie_tui.__file__)"],
        env={**os.environ, "PYTHONPATH": str(installed)},
        cwd=tmp_path, capture_output=True, text=True, check=True,
    ).stdout
    assert where.startswith(str(installed)), where

    personas = sadie(installed, tmp_path, "personas")
    assert personas.returncode == 0, personas.stderr
    for name in ("analyst", "coach", "friend", "skeptic"):
        assert name in personas.stdout

    stats = sadie(installed, tmp_path, "--demo", "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["counts"]["episodes"] > 300
    assert "Traceback" not in stats.stderr

    ask = sadie(installed, tmp_path, "--demo", "--ask", "When was my niece Ife born?", "--json")
    assert ask.returncode == 0, ask.stderr
    result = json.loads(ask.stdout)
    assert result["offline"] is True and result["persona"] == "analyst"
    assert result["citations"] and not result["abstained"]
