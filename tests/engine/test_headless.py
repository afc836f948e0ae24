"""engine/ never imports Qt: the CLI, the benchmark and the tests use it headless."""

from __future__ import annotations

import subprocess
import sys


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
