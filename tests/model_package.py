"""Where this venv installed the default model's package, for tests that copy it elsewhere."""

from __future__ import annotations

import site
from pathlib import Path


def installed_folder(name: str) -> Path:
    for folder in site.getsitepackages():
        if (Path(folder) / name / "__init__.py").is_file():
            return Path(folder) / name
    raise AssertionError(f"{name} is not installed in this venv")
