"""The app's import layers (pyproject.toml's import-linter contracts) hold, and the contract
is no formality: a feature that imports the main window back, as seven modules once did
under TYPE_CHECKING, breaks it."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the packages and the config, to break without touching the checkout."""
    root = tmp_path_factory.mktemp("layers")
    for package in ("app", "engine"):
        shutil.copytree(
            ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", root)
    return root


def test_the_layers_hold(tree: Path) -> None:
    done = _lint(tree)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_a_feature_that_imports_the_window_breaks_them(tree: Path) -> None:
    plugin = tree / "app" / "demo" / "branching.py"
    text = plugin.read_text()
    plugin.write_text(
        text.replace(
            "if TYPE_CHECKING:\n",
            "if TYPE_CHECKING:\n    from app.main_window import MainWindow\n",
            1,
        )
    )
    try:
        done = _lint(tree)
    finally:
        plugin.write_text(text)
    assert done.returncode != 0
    assert "app.demo.branching -> app.main_window" in done.stdout
