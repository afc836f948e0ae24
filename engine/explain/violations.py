"""What one character breaks: JSON's syntax, or the schema at the point it would go.

Both take the scanner's state before the character; `violation` also the state after it.
They return a clause ("a : must follow the key"), for engine.explain.forbidden to put after
the token it is reading.
"""

from __future__ import annotations

from typing import Any

from engine.explain.json_position import WHITESPACE, JsonPosition, JsonScanner, Where
from engine.explain.schema_at import (
    allowed_types,
    describe,
    dump,
    listed,
    object_keys,
    required_keys,
    resolve,
    schema_at,
    string_choices,
)
from engine.schema.pointer import path_text

_KINDS = {"{": "object", "[": "array", '"': "string", "t": "boolean", "f": "boolean", "n": "null"}
_NOUNS = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def syntax_reason(prev: JsonScanner, c: str) -> str:
    """Why JSON itself cannot take `c` where `prev` stands."""
    p = prev.settled().position()
    w = p.where
    if w is Where.VALUE:
        if c in "}]":
            return "a value must come here first"
        return 'no JSON value starts with that (a value starts with {, [, ", a digit, -, t, f or n)'
    if w is Where.KEY:
        if c == "}":
            return "after a comma another key must follow"
        return "a key must come here, and a key is a string in double quotes"
    if w is Where.COLON:
        return "a : must follow the key"
    if w is Where.AFTER:
        closes = "}" if p.frame is not None and p.frame.kind == "object" else "]"
        return f"after a value inside an {p.frame.kind if p.frame else 'array'} comes , or {closes}"
    if w is Where.DONE:
        return "the JSON value is already complete, and only whitespace may follow it"
    if w in (Where.STRING, Where.KEY_STRING):
        if ord(c) < 0x20:
            return "a string cannot hold a raw control character; JSON writes it escaped (\\n)"
        return 'that is not a JSON escape (\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX)'
    if w is Where.NUMBER:
        return f"the number {p.partial} cannot go on with it"
    if w is Where.LITERAL:
        return f"{p.partial}… can only go on as true, false or null"
    return "the output before it is already not JSON"


def violation(prev: JsonScanner, state: JsonScanner, c: str, root: Any) -> str | None:
    """What in the schema `c` breaks, going from `prev` to `state`; None if nothing known."""
    before, after = prev.settled().position(), state.position()
    if after.where is Where.NUMBER:
        before = prev.position()  # the number goes on
    checks = (_value_start, _string_text, _string_end, _key_text, _key_end, _comma, _close)
    for check in (*checks, _number):
        why = check(before, after, c, root)
        if why:
            return why
    return None


def _value_start(before: JsonPosition, after: JsonPosition, c: str, root: Any) -> str | None:
    if before.where is not Where.VALUE or c in WHITESPACE or c == "]":
        return None
    node = schema_at(root, before.path)
    at = before.path_text
    if node is False:
        return f"the schema allows no value at {at}"
    types = allowed_types(node, root)
    kind = _KINDS.get(c, "number")
    fits = kind in types or (kind == "number" and "integer" in types) if types else True
    if fits:
        return None
    return f"that starts {_NOUNS[kind]}, and {at} must be {describe(node, root)}"


def _string_text(before: JsonPosition, after: JsonPosition, c: str, root: Any) -> str | None:
    if after.where is not Where.STRING:
        return None
    node = resolve(schema_at(root, after.path), root)
    text, at = after.partial, after.path_text
    choices = string_choices(node, root)
    if choices is not None and not any(s.startswith(text) for s in choices):
        return f"{at} must be {describe(node, root)}, and none starts with {dump(text)}"
    longest = node.get("maxLength") if isinstance(node, dict) else None
    if isinstance(longest, int) and len(text) > longest:
        return f"{at} holds at most {longest} characters"
    return None


def _string_end(before: JsonPosition, after: JsonPosition, c: str, root: Any) -> str | None:
    if before.where is not Where.STRING or c != '"':
        return None
    node = resolve(schema_at(root, before.path), root)
    text, at = before.partial, before.path_text
    choices = string_choices(node, root)
    if choices is not None and text not in choices:
        return f"it would close {at} as {dump(text)}, which is not {describe(node, root)}"
    shortest = node.get("minLength") if isinstance(node, dict) else None
    if isinstance(shortest, int) and len(text) < shortest:
        return f"it would close {at} after {len(text)} characters; it needs at least {shortest}"
    return None


def _key_text(before: JsonPosition, after: JsonPosition, c: str, root: Any) -> str | None:
    if after.where is not Where.KEY_STRING or after.frame is None:
        return None
    names, closed = object_keys(schema_at(root, after.path), root, after.frame.keys)
    left = [n for n in names if n not in after.frame.keys]
    if not closed or any(n.startswith(after.partial) for n in left):
        return None
    at = path_text(after.path)
    if not left:
        return f"the object at {at} takes no more keys"
    return (
        f"the object at {at} takes only {listed([dump(n) for n in left], 'or')} now, "
        f"and none starts with {dump(after.partial)}"
    )


def _key_end(before: JsonPosition, after: JsonPosition, c: str, root: Any) -> str | None:
    if before.where is not Where.KEY_STRING or after.where is not Where.COLON or not after.frame:
        return None
    key, at = after.frame.keys[-1], path_text(after.path)
    if before.frame is not None and key in before.frame.keys:
        return f"the object at {at} already has the key {dump(key)}"
    written = before.frame.keys if before.frame is not None else []
    names, closed = object_keys(schema_at(root, after.path), root, written)
    if closed and key not in names:
        return f"it would end the key as {dump(key)}, which the object at {at} does not take"
    return None


def _comma(before: JsonPosition, after: JsonPosition, c: str, root: Any) -> str | None:
    if before.where is not Where.AFTER or c != "," or before.frame is None:
        return None
    container = before.path[:-1]
    node, at = resolve(schema_at(root, container), root), path_text(container)
    frame = before.frame
    if frame.kind == "object":
        names, closed = object_keys(node, root, frame.keys)
        if closed and all(n in frame.keys for n in names):
            return f"a comma starts another key, and the object at {at} takes no more keys"
        return None
    most = _max_items(node)
    if most is not None and frame.index + 1 >= most:
        return f"a comma starts another item, and the array at {at} holds at most {most}"
    return None


def _max_items(node: Any) -> int | None:
    if not isinstance(node, dict):
        return None
    most = node.get("maxItems")
    if node.get("items") is False and isinstance(node.get("prefixItems"), list):
        fixed = len(node["prefixItems"])
        most = fixed if not isinstance(most, int) else min(most, fixed)
    return most if isinstance(most, int) else None


def _close(before: JsonPosition, after: JsonPosition, c: str, root: Any) -> str | None:
    frame = before.frame
    if c not in "}]" or frame is None or before.where not in (Where.KEY, Where.VALUE, Where.AFTER):
        return None
    container = before.path[:-1] if before.where is not Where.KEY else before.path
    node, at = resolve(schema_at(root, container), root), path_text(container)
    if c == "}":
        missing = [k for k in required_keys(node, root, frame.keys) if k not in frame.keys]
        if missing:
            return f"it would close the object at {at}, which still needs {_keys(missing)}"
        return None
    count = 0 if frame.empty else frame.index + 1
    least = node.get("minItems") if isinstance(node, dict) else None
    if isinstance(least, int) and count < least:
        return f"it would close the array at {at} with {count} items; it needs at least {least}"
    return None


def _keys(names: list[str]) -> str:
    return ("the key " if len(names) == 1 else "the keys ") + listed(
        [dump(n) for n in names], "and"
    )


def _number(before: JsonPosition, after: JsonPosition, c: str, root: Any) -> str | None:
    if after.where is not Where.NUMBER:
        return None
    node = resolve(schema_at(root, after.path), root)
    types = allowed_types(node, root)
    at = after.path_text
    if types and "integer" in types and "number" not in types and c in ".eE":
        return f"{at} must be an integer, with no decimal point or exponent"
    if not isinstance(node, dict):
        return None
    low, high = _bound(node, "minimum"), _bound(node, "maximum")
    if c == "-":
        low = low if low is not None else _bound(node, "exclusiveMinimum")
        if low is not None and low >= 0:
            return f"{at} cannot be negative: it is {describe(node, root)}"
        return None
    return _out_of_range(after.partial, low, high, types, at)


def _bound(node: dict, key: str) -> float | None:
    value = node.get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _out_of_range(
    digits: str, low: float | None, high: float | None, types: set[str] | None, at: str
) -> str | None:
    """Whether no number that starts with `digits` (a plain integer part) can be in range:
    more digits only make it larger, and after a leading 0 no digit may come."""
    if not digits.isdigit():
        return None
    value = int(digits)
    if high is not None and value > high:
        return f"{at} would be {value} or more, above its maximum {high:g}"
    if low is None or value >= low:
        return None
    integer = types is not None and "number" not in types
    if value == 0 and (low >= 1 or integer):
        return f"{at} would be 0{'' if integer else ' or 0.…'}, below its minimum {low:g}"
    if high is not None and value * 10 > high:
        return (
            f"{at} would be {value}, below its minimum {low:g}, and one more digit passes {high:g}"
        )
    return None
