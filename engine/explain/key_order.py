"""Keys in a fixed order: the grammar may take only the next key, though the schema takes any.

Maskscope's compiler, and llama.cpp's converter, write an object's keys in one order (the
schema's, or required ones first), so at `{"` the model may be refused `age` because `name`
comes first. The schema alone cannot say this; the step's valid tokens can: they spell the
key the grammar expects.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.explain.json_position import JsonScanner, Where
from engine.explain.schema_at import dump, listed, object_keys, schema_at
from engine.schema.pointer import path_text


def key_order_reason(scanner: JsonScanner, piece: str, root: Any, valid: Iterable[str]) -> str:
    """Why `piece` is refused as a key that the schema takes, or "" if that is not the
    reason; `valid` holds the texts of the step's valid tokens."""
    p = scanner.position()
    if p.frame is None or p.frame.kind != "object" or p.where not in (Where.KEY, Where.KEY_STRING):
        return ""
    wanted = _key_text(p.where, p.partial, piece)
    if not wanted:
        return ""
    names, _closed = object_keys(schema_at(root, p.path), root, p.frame.keys)
    left = [n for n in names if n not in p.frame.keys]
    fits = [n for n in left if n.startswith(wanted)]
    expected = {t for v in valid if (t := _key_text(p.where, p.partial, v))}
    following = [n for n in left if any(n.startswith(t) or t.startswith(n) for t in expected)]
    if not fits or not following or set(fits) & set(following):
        return ""
    return (
        f"the grammar writes the keys of the object at {path_text(p.path)} in a fixed order, "
        f"and {listed([dump(n) for n in following], 'or')} comes next, not {dump(fits[0])}"
    )


def _key_text(where: Where, partial: str, piece: str) -> str:
    """The key so far once `piece` is written: its text up to a closing quote."""
    if where is Where.KEY:
        text = piece.lstrip(" \t\n\r")
        if not text.startswith('"'):
            return ""
        piece, partial = text[1:], ""
    key = partial + piece.split('"', 1)[0]
    return key if key != partial or where is Where.KEY else ""
