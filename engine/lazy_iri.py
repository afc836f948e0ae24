"""jsonschema's `iri` and `iri-reference` formats come from rfc3987_syntax, which builds an
Earley parser for RFC 3987 when it is imported, and jsonschema imports it on its own import:
1.3 s of every process start (the window, each command, each check worker), for two formats
few schemas use. `defer_iri_parser` puts a stand-in for the package in its place whose
functions build the real parser on their first call."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

_NAME = "rfc3987_syntax"


def defer_iri_parser() -> None:
    """Install the stand-in, unless the real package is loaded already or not installed."""
    if _NAME in sys.modules:
        return
    spec = importlib.util.find_spec(_NAME)
    if spec is None or not spec.submodule_search_locations:
        return
    stand_in = types.ModuleType(_NAME, "rfc3987_syntax, its parser built on first use")
    stand_in.__path__ = list(spec.submodule_search_locations)  # its submodules load as usual
    stand_in.__spec__ = spec

    def helpers() -> types.ModuleType:
        return importlib.import_module(f"{_NAME}.syntax_helpers")  # what its __init__ re-exports

    def is_valid_syntax(term: str, value: str) -> Any:
        return helpers().is_valid_syntax(term, value)

    # jsonschema takes is_valid_syntax by name at import, so that one must exist up front;
    # anything else is looked up (PEP 562) when it is asked for.
    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    stand_in.__getattr__ = lambda attr: getattr(helpers(), attr)  # type: ignore[method-assign]
    sys.modules[_NAME] = stand_in
