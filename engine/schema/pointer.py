"""Places in schema documents, written one way everywhere: JSON pointers (RFC 6901, through
the jsonpointer library: a local `$ref` followed from a document's root, a pointer split
into its tokens, tokens joined into a reference), and the JSON paths (`$.a['b c'][0]`) that
reports, Problems and compilers name places with."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

import jsonpointer

# A key a JSON path writes after a dot; any other is written in brackets.
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


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


def child_path(path: str, key: str | int) -> str:
    """`$.a` + `b` -> `$.a.b`; odd keys and indices in brackets."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENTIFIER.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{key!r}]"


def path_text(parts: Iterable[str | int]) -> str:
    """("properties", "a b", 0) -> `$.properties['a b'][0]`."""
    text = "$"
    for part in parts:
        text = child_path(text, part)
    return text
