"""What a JSON Schema allows at one path of the output, in a short phrase.

Resolution follows what a reader of the schema would: properties, patternProperties,
additionalProperties, prefixItems and items, through local `$ref`s and into the branches
of allOf/anyOf/oneOf. It answers "unknown" (None) rather than guess where a schema is more
involved than that; the explanation then leaves the schema out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from engine.errors import PatternTimeoutError
from engine.schema import patterns
from engine.schema.pointer import local_target

_COMBINATORS = ("allOf", "anyOf", "oneOf")
_NOUNS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "object": "an object",
    "array": "an array",
    "boolean": "true or false",
    "null": "null",
}
_KIND_BY_KEYWORD = {
    "properties": "object",
    "required": "object",
    "additionalProperties": "object",
    "items": "array",
    "prefixItems": "array",
    "pattern": "string",
    "format": "string",
    "minLength": "string",
    "maxLength": "string",
    "minimum": "number",
    "maximum": "number",
}
SHOWN = 6  # enum members and keys named before "… (n more)"


def load_schema(schema: object) -> object | None:
    """A schema given as parsed JSON or as its text; None when the text is not JSON."""
    if isinstance(schema, str):
        try:
            return json.loads(schema)
        except json.JSONDecodeError:
            return None
    return schema


def resolve(node: Any, root: Any, depth: int = 0) -> Any:
    """`node` with a local `$ref` followed (only `#` and `#/...` pointers)."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and depth < 20:
        target = local_target(root, node["$ref"])
        if target is None:
            return node
        node, depth = target, depth + 1
    return node


def schema_at(root: Any, path: Sequence[str | int]) -> Any:
    """The subschema for the value at `path`, or None when it cannot be told."""
    node = resolve(root, root)
    for part in path:
        node = member(node, root, part)
        if node is None:
            return None
    return node


def member(node: Any, root: Any, part: str | int) -> Any:
    node = resolve(node, root)
    if node is True or node == {}:
        return True
    if not isinstance(node, dict):
        return None
    found = _item(node, part) if isinstance(part, int) else _property(node, part)
    if found is not None:
        return resolve(found, root)
    # Each branch of allOf/anyOf/oneOf that says what goes there: one is the answer; more
    # are alternatives (two tools' `name` consts), as far as an explanation needs.
    found_in = [f for b in _branches(node) if (f := member(b, root, part)) not in (None, True)]
    if any(f is not False for f in found_in):  # a branch that forbids the key is no help
        found_in = [f for f in found_in if f is not False]
    if len(found_in) > 1:
        return {"anyOf": found_in}
    return found_in[0] if found_in else None


def _property(node: dict, key: str) -> Any:
    if key in node.get("properties", {}):
        return node["properties"][key]
    for pattern, sub in node.get("patternProperties", {}).items():
        if _search(pattern, key):
            return sub
    extra = node.get("additionalProperties")
    return extra if extra is not None or "properties" not in node else True


def _item(node: dict, index: int) -> Any:
    prefix = node.get("prefixItems", [])
    if index < len(prefix):
        return prefix[index]
    return node.get("items")


def _branches(node: dict) -> list[Any]:
    return [b for key in _COMBINATORS for b in node.get(key, [])]


def _search(pattern: str, text: str) -> bool:
    try:
        return patterns.search(pattern, text)  # bounded in time, as validation is
    except (re.error, PatternTimeoutError):
        return False


def allowed_types(node: Any, root: Any) -> set[str] | None:
    """The JSON types `node` allows ("integer" kept apart); None when any may do."""
    node = resolve(node, root)
    if node is False:
        return set()
    if not isinstance(node, dict):
        return None
    if "const" in node:
        return {type_of(node["const"])}
    if isinstance(node.get("enum"), list):
        return {type_of(v) for v in node["enum"]}
    declared = node.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return set(declared)
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            kinds = [allowed_types(b, root) for b in node[key]]
            return None if any(k is None for k in kinds) else set().union(*kinds)
    implied = {kind for kw, kind in _KIND_BY_KEYWORD.items() if kw in node}
    return implied if len(implied) == 1 else None


def type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "string")


def string_choices(node: Any, root: Any) -> list[str] | None:
    """The strings an enum or const allows, or None when the value is not so restricted."""
    node = resolve(node, root)
    if not isinstance(node, dict):
        return None
    if "const" in node:
        return [node["const"]] if isinstance(node["const"], str) else []
    if isinstance(node.get("enum"), list):
        return [v for v in node["enum"] if isinstance(v, str)]
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            return _branch_choices(node[key], root)
    return None


def _branch_choices(branches: list[Any], root: Any) -> list[str] | None:
    """The strings that alternatives allow: None if any branch takes a free string."""
    choices: list[str] = []
    for branch in branches:
        found = string_choices(branch, root)
        if found is None:
            types = allowed_types(branch, root)
            if types is None or "string" in types:
                return None
            continue
        choices += [c for c in found if c not in choices]
    return choices


def object_keys(node: Any, root: Any, written: Sequence[str] = ()) -> tuple[list[str], bool]:
    """The keys an object's `properties` name, and whether it takes other keys too. Of
    anyOf/oneOf branches only those that take the keys `written` so far count."""
    node = resolve(node, root)
    if not isinstance(node, dict):
        return [], True
    names = list(node.get("properties", {}))
    closed = node.get("additionalProperties") is False and not node.get("patternProperties")
    for branch in node.get("allOf", []):
        more, branch_closed = object_keys(branch, root, written)
        names += [n for n in more if n not in names]
        closed = closed or branch_closed
    alternatives = _alternatives(node, root, written)
    for more, _ in alternatives:
        names += [n for n in more if n not in names]
    closed = closed or (bool(alternatives) and all(c for _, c in alternatives))
    return names, closed


def _alternatives(node: dict, root: Any, written: Sequence[str]) -> list[tuple[list[str], bool]]:
    """(keys, closed) of each anyOf/oneOf branch that can hold the keys written so far."""
    found = []
    for key in ("anyOf", "oneOf"):
        for branch in node.get(key, []):
            names, closed = object_keys(branch, root, written)
            if not closed or all(w in names for w in written):
                found.append((names, closed))
    return found


def required_keys(node: Any, root: Any, written: Sequence[str] = ()) -> list[str]:
    """The keys an object must have; of anyOf/oneOf branches, those that every branch that
    can hold the keys `written` so far requires."""
    node = resolve(node, root)
    if not isinstance(node, dict):
        return []
    required = [k for k in node.get("required", []) if isinstance(k, str)]
    for branch in node.get("allOf", []):
        required += [k for k in required_keys(branch, root, written) if k not in required]
    branches = [
        b
        for key in ("anyOf", "oneOf")
        for b in node.get(key, [])
        if (kc := object_keys(b, root, written)) and (not kc[1] or all(w in kc[0] for w in written))
    ]
    if branches:
        common = [set(required_keys(b, root, written)) for b in branches]
        shared = set.intersection(*common)
        required += [
            k
            for k in required_keys(branches[0], root, written)
            if k in shared and k not in required
        ]
    return required


def describe(node: Any, root: Any) -> str:
    """A short phrase for what `node` allows: `one of "USD", "EUR"`, `an integer from 1 to
    99`, `a string matching ^[A-Z]{2}$`."""
    node = resolve(node, root)
    if node is True or node == {}:
        return "any JSON value"
    if node is False:
        return "nothing at all (the schema is false here)"
    if not isinstance(node, dict):
        return "something this explanation cannot read"
    if "const" in node:
        return f"exactly {dump(node['const'])}"
    if isinstance(node.get("enum"), list):
        return f"one of {listed([dump(v) for v in node['enum']], 'or')}"
    branches = node.get("anyOf") or node.get("oneOf")
    if isinstance(branches, list) and branches and "type" not in node:
        phrases = list(dict.fromkeys(describe(b, root) for b in branches))
        return phrases[0] if len(phrases) == 1 else "either " + listed(phrases, "or")
    types = allowed_types(node, root)
    if types is None:
        return "any JSON value"
    noun = listed([_NOUNS.get(t, t) for t in sorted(types, key=list(_NOUNS).index)], "or")
    details = [d for d in (_string_details(node), _number_details(node)) if d]
    details += [d for d in (_array_details(node), _object_details(node, root)) if d]
    return " ".join([noun, *details])


def _string_details(node: dict) -> str:
    parts = []
    if isinstance(node.get("pattern"), str):
        parts.append(f"matching {node['pattern']}")
    if isinstance(node.get("format"), str):
        parts.append(f"in {node['format']} format")
    length = _range(node.get("minLength"), node.get("maxLength"), "characters")
    return ", ".join([*parts, length] if length else parts)


def _number_details(node: dict) -> str:
    low, high = node.get("minimum"), node.get("maximum")
    parts = [_range(low, high, "", from_to=True)] if low is not None or high is not None else []
    if node.get("exclusiveMinimum") is not None:
        parts.append(f"above {node['exclusiveMinimum']}")
    if node.get("exclusiveMaximum") is not None:
        parts.append(f"below {node['exclusiveMaximum']}")
    if node.get("multipleOf") is not None:
        parts.append(f"a multiple of {node['multipleOf']}")
    return ", ".join(p for p in parts if p)


def _array_details(node: dict) -> str:
    return _range(node.get("minItems"), node.get("maxItems"), "items")


def _object_details(node: dict, root: Any) -> str:
    names, closed = object_keys(node, root)
    if not names:
        return ""
    required = set(required_keys(node, root))
    keys = [f"{dump(n)}{' (required)' if n in required else ''}" for n in names]
    return f"with the keys {listed(keys, 'and')}{' and no others' if closed else ''}"


def _range(low: Any, high: Any, unit: str, from_to: bool = False) -> str:
    tail = f" {unit}" if unit else ""
    if low is not None and high is not None:
        return f"from {low} to {high}{tail}" if from_to or low != high else f"of {low}{tail}"
    if low is not None:
        return f"of at least {low}{tail}" if not from_to else f"of at least {low}"
    if high is not None:
        return f"of at most {high}{tail}" if not from_to else f"of at most {high}"
    return ""


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def listed(items: Sequence[str], last: str) -> str:
    """`a, b or c`, with at most SHOWN named and the rest counted."""
    shown = list(items[:SHOWN])
    if len(items) > SHOWN:
        shown.append(f"… ({len(items) - SHOWN} more)")
    if len(shown) <= 1:
        return "".join(shown)
    return f"{', '.join(shown[:-1])} {last} {shown[-1]}"
