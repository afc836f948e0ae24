"""`maskscope --version`: Maskscope's, llama.cpp's and Qt's versions, for a bug report.

Nothing here loads llama.cpp or Qt: a build that would crash this CPU must not crash
`--version`, and the engine never imports Qt. Both are read from what is installed instead:
llama.cpp's version from its library's file name, Qt's out of PySide6's package metadata
(PySide6 wheels carry the Qt of the same version).
"""

from __future__ import annotations

import platform
import re
import sys

from engine.llama_build.describe import package_version
from engine.llama_build.flags import CANDIDATES
from engine.llama_build.verdict import installed_flags, lib_dir

_GGML = re.compile(r"^libggml\.so\.(\d+\.\d+\.\d+)$|^libggml\.(\d+\.\d+\.\d+)\.dylib$")


def ggml_version() -> str | None:
    """The ggml version in the file name of the library llama-cpp-python loads."""
    folder = lib_dir()
    if folder is None or not folder.is_dir():
        return None
    for lib in folder.iterdir():
        if found := _GGML.match(lib.name):
            return found.group(1) or found.group(2)
    return None


def llama_cpp_line() -> str:
    ggml = ggml_version()
    text = f"llama-cpp-python {package_version('llama-cpp-python')}"
    text += f", ggml {ggml}" if ggml else ""
    flags = installed_flags()
    if flags is None:
        return f"{text} (a build Maskscope did not make)"
    known = CANDIDATES.get(flags.name)
    return f"{text} (“{flags.name}” build: {known.description if known else flags.name})"


def qt_line() -> str:
    for package in ("PySide6", "PySide6-Essentials"):
        version = package_version(package)
        if version != "not installed":
            return f"Qt {version} (PySide6 {version})"
    return "Qt: not installed (the window needs PySide6)"


def version_text() -> str:
    frozen = " (standalone app)" if getattr(sys, "frozen", False) else ""
    return "\n".join(
        [
            f"Maskscope {package_version('maskscope')}{frozen}",
            f"llama.cpp: {llama_cpp_line()}",
            qt_line(),
            f"Python {platform.python_version()} on {platform.platform(terse=True)}",
        ]
    )
