"""Where a `$ref` points: JSON pointers, `$id` bases and anchors inside one document.

Only the schema's own document is reachable: a reference to anything else is a
GrammarError, since the compiler never fetches. Every subschema is known by its JSON path
(`$.definitions.a`) so that reports and errors can name it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from engine.errors import GrammarError
from engine.schema.pointer import child_path, pointer_tokens

# The base of a document without `$id`: any absolute URI works, refs only need one to join.
DEFAULT_BASE = "https://maskscope.invalid/schema.json"
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples", "example"})


@dataclass(frozen=True, slots=True)
class Part:
    """One subschema of a conjunction, with where it sits and the base its refs join."""

    schema: Any
    path: str
    base: str


def draft_of(schema: Any) -> int:
    """4, 6, 7, 2019 or 2020, from `$schema` (2020 when it names none)."""
    uri = schema.get("$schema", "") if isinstance(schema, dict) else ""
    for mark, draft in (("draft-03", 4), ("draft-04", 4), ("draft-06", 6), ("draft-07", 7)):
        if mark in uri:
            return draft
    return 2019 if "2019-09" in uri else 2020


class Resolver:
    """Resolves `$ref` strings against the bases and anchors the document declares."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.draft = draft_of(root)
        self._id_key = "id" if self.draft == 4 else "$id"
        self._documents: dict[str, tuple[Any, str]] = {}
        self._anchors: dict[str, tuple[Any, str, str]] = {}
        self._bases: dict[int, str] = {}
        self._documents.setdefault(urldefrag(DEFAULT_BASE).url, (root, "$"))
        self._index(root, "$", DEFAULT_BASE)
        self.root_part = Part(root, "$", self.base_of(root, DEFAULT_BASE))

    def resolve(self, ref: str, base: str, path: str) -> Part:
        """The subschema `ref` names, seen from a subschema whose base is `base`."""
        url, fragment = urldefrag(urljoin(base, ref))
        if ref.startswith("#") or not url:
            url = urldefrag(base).url
        found = self._documents.get(url)
        if found is None:
            raise GrammarError(f"remote references are not supported: {ref} (at {path})")
        document, doc_path = found
        fragment = unquote(fragment)
        if not fragment.startswith("/"):
            if not fragment:
                return Part(document, doc_path, url)
            anchor = self._anchors.get(f"{url}#{fragment}")
            if anchor is None:
                raise GrammarError(f"the reference {ref} names no anchor in the schema ({path})")
            return Part(*anchor)
        return self._follow(document, doc_path, url, fragment, ref, path)

    def _follow(self, node: Any, at: str, base: str, pointer: str, ref: str, path: str) -> Part:
        try:
            tokens = pointer_tokens(pointer)
        except ValueError:
            raise GrammarError(f"the reference {ref} is no JSON pointer ({path})") from None
        for token in tokens:
            if isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node, at = node[int(token)], child_path(at, int(token))
            elif isinstance(node, dict) and token in node:
                node, at = node[token], child_path(at, token)
            else:
                raise GrammarError(f"the reference {ref} points nowhere in the schema ({path})")
            base = self.base_of(node, base)
        return Part(node, at, base)

    def base_of(self, node: Any, base: str) -> str:
        """The base URI inside `node`: fixed by where it sits in the document, so asking
        twice is harmless; a subschema the compiler made up inherits `base`."""
        return self._bases.get(id(node), base)

    def _index(self, node: Any, path: str, base: str) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                self._index(item, child_path(path, i), base)
            return
        if not isinstance(node, dict):
            return
        ident = node.get(self._id_key)
        if isinstance(ident, str):
            joined = urljoin(base, ident)
            url, fragment = urldefrag(joined)
            if fragment:
                self._anchors.setdefault(f"{url}#{fragment}", (node, path, url))
            else:
                self._documents.setdefault(url, (node, path))
                base = url
        self._bases[id(node)] = base
        anchor = node.get("$anchor")
        if isinstance(anchor, str):
            self._anchors.setdefault(f"{urldefrag(base).url}#{anchor}", (node, path, base))
        for key, value in node.items():
            if key not in _DATA_KEYWORDS and isinstance(value, dict | list):
                self._index(value, child_path(path, key), base)
