"""Expectations that no output of the schema can meet: a key expected absent where the
schema requires it, all the way down from the root.

Decoding under the grammar gives outputs the schema accepts, so such a case fails on every
sample, whatever the model does. Only what the schema guarantees counts: every step of the
path an object (or array) that must be there, its key `required` (its index below
`minItems`), read from the schema's own keywords, local `$ref`s and `allOf`. Anything less
certain (`anyOf`, a type that allows null, a key an ancestor may leave out) says nothing.
"""

from __future__ import annotations

from typing import Any

from engine.schema.pointer import local_target
from engine.suite.format import Expectation, Suite
from engine.suite.jsonpath import parse_path

MAX_PARTS = 1024  # subschemas gathered at one step before giving up (a huge allOf, say)


def never_met_in(suite: Suite) -> list[tuple[str, str]]:
    """(case id, why) for each expectation of the suite's cases that no output of its
    schema can meet, in the cases' order."""
    try:
        schema = suite.schema
    except ValueError:  # not JSON: the suite cannot run, and says so elsewhere
        return []
    return [
        (case.id, why)
        for case in suite.cases
        for expectation in case.expected
        if (why := never_met(schema, expectation)) is not None
    ]


def never_met(schema: Any, expectation: Expectation) -> str | None:
    """Why `expectation` can never pass on an output of `schema`, or None."""
    if expectation.kind not in ("absent", "absent_or_null"):
        return None
    nodes = [schema]  # the subschemas that all apply at the current step
    for step in parse_path(expectation.path):
        parts = _applying(schema, nodes)
        if isinstance(step, str):
            present = _only(parts, "object") and any(
                step in _strings(p.get("required")) for p in parts
            )
            nodes = [p["properties"][step] for p in parts if step in _dict(p.get("properties"))]
        else:
            present = _only(parts, "array") and any(
                isinstance(p.get("minItems"), int) and step < p["minItems"] for p in parts
            )
            nodes = [_item(p, step) for p in parts]
            nodes = [n for n in nodes if n is not None]
        if not present:
            return None
    if expectation.kind == "absent":
        return f"{expectation.path} is expected absent, but the schema requires it"
    if _never_null(_applying(schema, nodes)):
        return (
            f"{expectation.path} is expected absent or null, but the schema requires it "
            "and does not allow null"
        )
    return None


def _applying(root: Any, nodes: list[Any]) -> list[dict[str, Any]]:
    """The object schemas among `nodes`, with what their local `$ref`s and `allOf`s bring:
    an instance meets them all."""
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    todo = list(nodes)
    while todo and len(seen) < MAX_PARTS:
        node = todo.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        if "$ref" in node:
            target = local_target(root, node["$ref"])
            if target is not None:
                todo.append(target)
        all_of = node.get("allOf")
        if isinstance(all_of, list):
            todo.extend(all_of)
    return out


def _only(parts: list[dict[str, Any]], kind: str) -> bool:
    """Whether some part allows no type but `kind`."""
    return any(p.get("type") in (kind, [kind]) for p in parts)


def _never_null(parts: list[dict[str, Any]]) -> bool:
    for p in parts:
        kind = p.get("type")
        if isinstance(kind, str) and kind != "null":
            return True
        if isinstance(kind, list) and all(isinstance(k, str) for k in kind) and "null" not in kind:
            return True
        if "const" in p and p["const"] is not None:
            return True
        if isinstance(p.get("enum"), list) and None not in p["enum"]:
            return True
    return False


def _item(schema: dict[str, Any], index: int) -> Any:
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list):
        return prefix[index] if index < len(prefix) else schema.get("items")
    items = schema.get("items")
    if isinstance(items, list):  # draft 7's tuple form
        return items[index] if index < len(items) else schema.get("additionalItems")
    return items


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
