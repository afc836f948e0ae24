"""`maskscope --version`: one line a part, read without loading llama.cpp or Qt."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import llama_cpp

PROBE = """
import sys
from engine.cli.main import main
try:
    main(["--version"])
except SystemExit as exc:
    assert exc.code == 0, exc.code
loaded = [m for m in ("llama_cpp", "PySide6", "pyqtgraph") if m in sys.modules]
print("loaded:", loaded)
"""


def test_version_names_maskscope_llama_cpp_and_qt() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert out[0] == f"Maskscope {version('maskscope')}"
    assert out[1].startswith(f"llama.cpp: llama-cpp-python {llama_cpp.__version__}, ggml 0.")
    assert "“portable” build" in out[1]  # the flags `make setup` installed it with
    assert out[2] == f"Qt {version('PySide6')} (PySide6 {version('PySide6')})"
    assert out[3].startswith("Python 3.")
    assert out[-1] == "loaded: []"
