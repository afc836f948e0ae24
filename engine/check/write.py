"""An instance written the way a compiler's grammar expects it: one line, `", "` and `": "`,
positional numbers, and object keys in the order that compiler's grammar wants.

Key order carries no meaning in JSON, so reordering keys is fair; values never change.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from engine.errors import MaskscopeError
from engine.schema.pointer import local_target

Arrange = Callable[[Any, Any], Any]


def write(value: Any) -> str:
    """`value` as one line: `{"a": 1, "b": [1, 2]}`, keys in the dicts' own order."""
    if isinstance(value, dict):
        items = (f"{_string(str(k))}: {write(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(write(v) for v in value) + "]"
    if isinstance(value, str):
        return _string(value)
    if value is True or value is False or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    raise MaskscopeError(f"a {type(value).__name__} is not a JSON value")


def _string(text: str) -> str:
    # Raw UTF-8 except what JSON must escape. A lone surrogate (JSON allows "\ud800") has no
    # UTF-8 form, so it stays escaped.
    written = json.dumps(text, ensure_ascii=False)
    if any("\ud800" <= c <= "\udfff" for c in written):
        written = "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in written)
    return written


def _number(value: float) -> str:
    """Positional, never an exponent: 1.0 -> 1, 1e-05 -> 0.00001, 1.5e+20 -> 15 and 19 zeros."""
    if not math.isfinite(value):
        raise MaskscopeError(f"{value} is not a JSON number")
    if value.is_integer():
        return str(int(value))
    return format(Decimal(repr(value)), "f")


def document_order(schema: Any, instance: Any) -> Any:
    """The instance as it was read: every object keeps its own key order."""
    return instance


def llamacpp_order(schema: Any, instance: Any) -> Any:
    """The order llama-cpp-python's converter (llama_grammar.py, 0.3.36) writes: at each
    object, the required properties, then the optional ones, each in `properties` order,
    then any others; `allOf` members' properties one member after the other."""
    return _Orderer(schema, required_first=True).arrange(schema, instance)


def properties_order(schema: Any, instance: Any) -> Any:
    """Keys in `properties` order, required or not, then any others."""
    return _Orderer(schema, required_first=False).arrange(schema, instance)


class _Orderer:
    """Walks schema and instance side by side; `$ref`, `allOf`, `anyOf`/`oneOf` and
    `if`/`then`/`else` are followed to find the properties that govern each object."""

    def __init__(self, root: Any, required_first: bool) -> None:
        self._root = root
        self._required_first = required_first

    def arrange(self, schema: Any, instance: Any, depth: int = 0) -> Any:
        if depth > 200:  # a $ref cycle that consumes no instance
            return instance
        if isinstance(instance, dict):
            return self._object(schema, instance, depth)
        if isinstance(instance, list):
            subs = self._items(schema, instance)
            return [self.arrange(s, v, depth + 1) for s, v in zip(subs, instance, strict=True)]
        return instance

    def _object(self, schema: Any, instance: dict[str, Any], depth: int) -> dict[str, Any]:
        props: dict[str, Any] = {}
        required: list[str] = []
        extra: Any = True
        for node in self._governing(schema, instance, depth):
            for name, sub in (node.get("properties") or {}).items():
                props.setdefault(name, sub)
            required += [r for r in node.get("required") or () if isinstance(r, str)]
            if "additionalProperties" in node:
                extra = node["additionalProperties"]
        names = [n for n in props if n in instance]
        if self._required_first:
            names = [n for n in names if n in required] + [n for n in names if n not in required]
        names += [n for n in instance if n not in props]
        return {n: self.arrange(props.get(n, extra), instance[n], depth + 1) for n in names}

    def _items(self, schema: Any, instance: list[Any]) -> list[Any]:
        nodes = self._governing(schema, instance, 0)
        for node in nodes:
            prefix = node.get("prefixItems")
            items = node.get("items")
            if isinstance(items, list):  # draft <= 2019-09: items as a list
                prefix, items = items, node.get("additionalItems", True)
            if prefix is not None or items is not None:
                prefix = list(prefix or [])
                rest = True if items is None else items
                return [prefix[i] if i < len(prefix) else rest for i in range(len(instance))]
        return [True] * len(instance)

    def _governing(self, schema: Any, instance: Any, depth: int) -> list[Mapping[str, Any]]:
        """The schema node and every node it pulls in for this instance, in document order."""
        if not isinstance(schema, dict) or depth > 200:
            return []
        found: list[Mapping[str, Any]] = [schema]
        ref = schema.get("$ref")
        if isinstance(ref, str):
            found += self._governing(self._resolve(ref), instance, depth + 1)
        for member in schema.get("allOf") or ():
            found += self._governing(member, instance, depth + 1)
        for key in ("anyOf", "oneOf"):
            branch = self._branch(schema.get(key), instance)
            if branch is not None:
                found += self._governing(branch, instance, depth + 1)
        return found

    def _branch(self, branches: Any, instance: Any) -> Any:
        """The first branch the instance satisfies, else the one naming most of its keys."""
        if not isinstance(branches, list) or not branches:
            return None
        from engine.schema.validate import validation_issues

        for branch in branches:
            try:
                if not validation_issues(instance, self._with_defs(branch)):
                    return branch
            except Exception:  # a branch jsonschema cannot read is not chosen
                continue
        if not isinstance(instance, dict):
            return branches[0]
        return max(branches, key=lambda b: len(set(self._names(b)) & set(instance)))

    def _names(self, branch: Any) -> list[str]:
        nodes = self._governing(branch, None, 0)
        return [n for node in nodes for n in node.get("properties") or {}]

    def _with_defs(self, branch: Any) -> Any:
        # A branch's $refs point into the root schema: judge it with the root's definitions.
        if not isinstance(self._root, dict) or not isinstance(branch, dict):
            return branch
        keep = {k: self._root[k] for k in ("$defs", "definitions", "$schema") if k in self._root}
        return {**keep, **branch}

    def _resolve(self, ref: str) -> Any:
        return local_target(self._root, ref)
