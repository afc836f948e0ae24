"""Where a local `$ref` points in its schema document, for the compilers' reports."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import jsonpointer


def local_target(root: Any, ref: str) -> Any:
    """The subschema a `#` or `#/...` reference names from the document's root, or None
    (an anchor, a remote reference, or a pointer that leads nowhere)."""
    if not ref.startswith("#"):
        return None
    try:
        return jsonpointer.resolve_pointer(root, unquote(ref[1:]))
    except (jsonpointer.JsonPointerException, TypeError):
        return None
