"""JSON pointers (RFC 6901) into schema documents, read and written one way everywhere,
through the jsonpointer library: a local `$ref` (`#`, `#/$defs/a~1b`) followed from a
document's root, a pointer split into its tokens, and tokens joined into a reference."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

import jsonpointer


def local_target(root: Any, ref: Any) -> Any:
    """The subschema a `#` or `#/...` reference names from the document's root, or None
    (not a string, an anchor, a remote reference, or a pointer that leads nowhere). The
    fragment is percent-decoded first, as a URI's is."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    try:
        return jsonpointer.resolve_pointer(root, unquote(ref[1:]))
    except (jsonpointer.JsonPointerException, TypeError):
        return None


def pointer_tokens(pointer: str) -> list[str]:
    """ "/a~1b/0" -> ["a/b", "0"]; raises ValueError for text that is no JSON pointer."""
    try:
        return list(jsonpointer.JsonPointer(pointer).parts)
    except jsonpointer.JsonPointerException as exc:
        raise ValueError(str(exc)) from None


def local_ref(tokens: Iterable[str | int]) -> str:
    """("properties", "a/b") -> "#/properties/a~1b", a reference a reader can follow."""
    return "#" + jsonpointer.JsonPointer.from_parts([str(t) for t in tokens]).path
