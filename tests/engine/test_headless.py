"""engine/ never imports Qt: the CLI, the benchmark and the tests use it headless."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "engine"


@pytest.mark.slow
def test_engine_modules_load_without_qt():
    code = (
        "import sys, pkgutil, importlib, engine, engine.masking\n"
        "for m in pkgutil.walk_packages(engine.__path__, 'engine.'):\n"
        "    importlib.import_module(m.name)\n"
        "qt = sorted(n for n in sys.modules if n.startswith(('PySide6', 'pyqtgraph', 'app')))\n"
        "print(qt)\n"
        "sys.exit(1 if qt else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_engine_source_imports_qt_or_the_app():
    # Also catches imports inside functions, which loading the modules would not run.
    for path in ENGINE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for needle in ("import PySide6", "from PySide6", "import pyqtgraph", "from app"):
            assert needle not in text, f"{path.name} has {needle!r}"
