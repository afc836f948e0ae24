"""How the loaded llama.cpp was built, and which versions run: for About and saved runs."""

from __future__ import annotations

import importlib.metadata

from engine.llama_build.flags import CANDIDATES
from engine.llama_build.verdict import compiled_features, installed_flags


def package_version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def build_description() -> str:
    """Maskscope's build flags, and the instruction sets llama.cpp says it was compiled with.

    Loads llama.cpp: call it only once the build is proven (engine.llama_build.verdict)."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", errors="replace")
    features = ", ".join(compiled_features(info)) or "no vector extensions"
    flags = installed_flags()
    if flags is None:
        made = "a build Maskscope did not make"
    else:
        known = CANDIDATES.get(flags.name)
        made = f"“{flags.name}” build" + (f" ({known.description})" if known else "")
    return f"{made}; compiled with {features}"
