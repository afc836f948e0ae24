"""Lints: the schema mistakes the mission warns about, each with an id, a message a user
understands, a place, and a one-click fix where one is obvious."""

from __future__ import annotations

import difflib
import re
from typing import Any

from engine.grammar.compile import gaps_of
from engine.schema.pointer import local_target, path_text
from engine.workbench.edits import add_member, append_item, remove_item, replace_value
from engine.workbench.entries import Fix, Problem, TextEdit
from engine.workbench.locate import Path, Spans
from engine.workbench.walk import keywords_on, subschemas

LINT_IDS = (
    "no-unknown-exit",
    "unbounded",
    "enum-near-duplicates",
    "additional-properties-implicit",
    "required-missing",
    "description-unseen",
    "max-tokens-below-bound",
)
# Values with which a field says "the text does not tell".
_UNKNOWN_WORDS = frozenset(
    {
        "unknown",
        "n/a",
        "na",
        "none",
        "not found",
        "not_found",
        "not-found",
        "not specified",
        "not_specified",
        "unspecified",
        "undetermined",
        "unclear",
        "other",
        "null",
    }
)
# Formats whose values have a fixed or short length: no run-on risk, whatever maxLength says.
_SHORT_FORMATS = frozenset({"date", "time", "date-time", "uuid", "ipv4", "ipv6"})
# Subschemas that constrain but never generate: a condition, a negation, key names.
_NOT_WRITTEN = frozenset({"not", "if", "propertyNames"})
_OPEN_REPEAT = re.compile(r"(?<!\\)[*+]|\{\d*,\}")
_SUGGESTED_MAX_LENGTH = 100
_SUGGESTED_MAX_ITEMS = 10


def lint(schema: Any, spans: Spans, compiler: str, prompt: str) -> list[Problem]:
    """Every lint that fires on a schema that passed its meta-schema."""
    if not isinstance(schema, dict):
        return []
    found: list[Problem] = []
    for parts, node in subschemas(schema):
        written = not _NOT_WRITTEN.intersection(keywords_on(parts))
        if written:
            found += _no_unknown_exit(schema, spans, parts, node)
            found += _unbounded(spans, parts, node, compiler)
            found += _additional_implicit(spans, parts, node, compiler)
        found += _near_duplicates(spans, parts, node)
        found += _required_missing(spans, parts, node)
    found += _description_unseen(schema, spans, prompt)
    return found


def _lint(
    spans: Spans,
    lint_id: str,
    parts: Path,
    message: str,
    fix: Fix | None = None,
    at: int | None = None,
    severity: str = "warning",
) -> Problem:
    offset = spans.start_of(parts) if at is None else at
    line, column = spans.line_col(offset) if offset is not None else (None, None)
    return Problem(
        severity, "lint", message, path_text(parts), line, column, lint_id, fix, offset=offset
    )


def _key_at(spans: Spans, parts: Path, keyword: str) -> int | None:
    span = spans.key((*parts, keyword))
    return span[0] if span else None


# -- no-unknown-exit ------------------------------------------------------------------


def _no_unknown_exit(root: Any, spans: Spans, parts: Path, node: dict[str, Any]) -> list[Problem]:
    props = node.get("properties")
    if parts == () and not isinstance(props, dict):
        return _forced_enum(spans, node)
    required = node.get("required")
    if not isinstance(props, dict) or not props or not isinstance(required, list):
        return []
    if not set(props) <= set(required) or _type_set(node) - {"object"}:
        return []
    if any(name.casefold() == "status" for name in props):  # "found", "not_found", ...
        return []
    if any(_says_unknown(root, sub) for sub in props.values()):
        return []
    edits = tuple(
        _exit_edit(spans, (*parts, "properties", name), sub) for name, sub in props.items()
    )
    fix = Fix('Let each field say "unknown": null in its type, or an "UNKNOWN" enum member', edits)
    message = (
        'every field is required and none can say "unknown" (no null in a type, no '
        "UNKNOWN enum member, no status field): when the text does not tell, the grammar "
        "forces the model to invent a value"
    )
    return [_lint(spans, "no-unknown-exit", parts, message, fix, _key_at(spans, parts, "required"))]


def _forced_enum(spans: Spans, node: dict[str, Any]) -> list[Problem]:
    """The whole output is one enum member: there must be one for "unknown"."""
    enum = node.get("enum")
    if not _string_list(enum) or any(_unknown_value(v) for v in enum):
        return []
    fix = Fix('Add an "UNKNOWN" member', (append_item(spans, ("enum",), "UNKNOWN"),))
    message = (
        'the output must be one of the enum\'s values and none says "unknown": when the '
        "text names none, the grammar forces the model to pick one anyway"
    )
    return [_lint(spans, "no-unknown-exit", (), message, fix, _key_at(spans, (), "enum"))]


def _says_unknown(root: Any, sub: Any, depth: int = 0) -> bool:
    """Whether a value of `sub` can say "unknown": null, or an unknown-like member."""
    if not isinstance(sub, dict) or depth > 20:
        return sub is True
    if "const" in sub:
        return _unknown_value(sub["const"])
    if isinstance(sub.get("enum"), list):
        return any(_unknown_value(v) for v in sub["enum"])
    if "null" in _type_set(sub):
        return True
    branches = [b for key in ("anyOf", "oneOf") for b in sub.get(key) or []]
    if any(_says_unknown(root, b, depth + 1) for b in branches):
        return True
    if "$ref" in sub:
        return _says_unknown(root, local_target(root, sub["$ref"]), depth + 1)
    # No type, no choice: null is one of the values it allows.
    return "type" not in sub and not branches and "allOf" not in sub


def _unknown_value(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip().casefold() in _UNKNOWN_WORDS)


def _exit_edit(spans: Spans, at: Path, sub: Any) -> TextEdit:
    """The smallest edit that lets the field at `at` say "unknown"."""
    if isinstance(sub, dict):
        enum = sub.get("enum")
        if _string_list(enum) and enum:
            return append_item(spans, (*at, "enum"), "UNKNOWN")
        kind = sub.get("type")
        if "enum" not in sub and "const" not in sub:
            if isinstance(kind, str):
                return replace_value(spans, (*at, "type"), [kind, "null"])
            if isinstance(kind, list):
                return append_item(spans, (*at, "type"), "null")
            for key in ("anyOf", "oneOf"):
                if isinstance(sub.get(key), list) and "type" not in sub:
                    return append_item(spans, (*at, key), {"type": "null"})
    start, end = spans.value(at) or (0, 0)
    original = spans.text[start:end]
    return TextEdit(start, end, f'{{"anyOf": [{original}, {{"type": "null"}}]}}')


# -- unbounded ------------------------------------------------------------------------


def _unbounded(spans: Spans, parts: Path, node: dict[str, Any], compiler: str) -> list[Problem]:
    types = _type_set(node)
    out = []
    if "string" in types and _free_string(node):
        message = (
            "a string without `maxLength`: the model may write on until max_tokens cuts "
            "the output off, and a cut output is not valid JSON"
        )
        fix, message = _honoured_fix(spans, parts, node, compiler, message)
        out.append(_lint(spans, "unbounded", parts, message, fix, _key_at(spans, parts, "type")))
    if "array" in types and "maxItems" not in node and not _closed_tuple(node):
        message = (
            "an array without `maxItems`: the model may add items until max_tokens cuts "
            "the output off, and a cut output is not valid JSON"
        )
        fix = _bound_fix(spans, parts, "maxItems", _SUGGESTED_MAX_ITEMS)
        out.append(_lint(spans, "unbounded", parts, message, fix, _key_at(spans, parts, "type")))
    return out


def _honoured_fix(
    spans: Spans, parts: Path, node: dict[str, Any], compiler: str, message: str
) -> tuple[Fix | None, str]:
    """The maxLength fix, unless the chosen compiler would not enforce it (beside a
    `format` or `pattern` it cannot bound): offering it made a new problem. Then the
    message says so, and what bounds the string instead."""
    gaps = gaps_of({**node, "maxLength": _SUGGESTED_MAX_LENGTH}, compiler)
    lost = next((g for g in gaps or () if g.keyword == "maxLength"), None)
    if lost is None:
        return _bound_fix(spans, parts, "maxLength", _SUGGESTED_MAX_LENGTH), message
    return None, (
        f"{message}. The {compiler} compiler cannot add `maxLength` here ({lost.note}): "
        "only Max tokens bounds this string. Raise Max tokens to cover it, or pick a "
        "compiler that enforces both (the Engines pane compares them)"
    )


def _free_string(node: dict[str, Any]) -> bool:
    if "maxLength" in node or "enum" in node or "const" in node:
        return False
    if node.get("format") in _SHORT_FORMATS:
        return False
    pattern = node.get("pattern")
    return not (isinstance(pattern, str) and _bounded_pattern(pattern))


def _bounded_pattern(pattern: str) -> bool:
    """Anchored at both ends with no open repeat: its matches have a longest one."""
    return pattern.startswith("^") and pattern.endswith("$") and not _OPEN_REPEAT.search(pattern)


def _closed_tuple(node: dict[str, Any]) -> bool:
    if isinstance(node.get("prefixItems"), list) and node.get("items") is False:
        return True
    return isinstance(node.get("items"), list) and node.get("additionalItems") is False


def _bound_fix(spans: Spans, parts: Path, keyword: str, value: int) -> Fix:
    edit = add_member(spans, parts, keyword, value, after="type")
    return Fix(f'Add "{keyword}": {value} (a starting point: set what the data needs)', (edit,))


# -- enum-near-duplicates ---------------------------------------------------------------


def _near_duplicates(spans: Spans, parts: Path, node: dict[str, Any]) -> list[Problem]:
    enum = node.get("enum")
    if not isinstance(enum, list):
        return []
    first: dict[str, str] = {}
    out = []
    for i, value in enumerate(enum):
        if not isinstance(value, str):
            continue
        key = "".join(value.split()).casefold()
        if key not in first:
            first[key] = value
            continue
        if first[key] == value:
            continue  # the same value twice: harmless
        message = (
            f"enum values {_show(first[key])} and {_show(value)} differ only in case or "
            "whitespace: the model may write either, and whatever reads the output must "
            "handle both"
        )
        fix = Fix(f"Remove {_show(value)}", (remove_item(spans, (*parts, "enum"), i),))
        span = spans.value((*parts, "enum", i))
        at = span[0] if span else None
        out.append(_lint(spans, "enum-near-duplicates", (*parts, "enum", i), message, fix, at))
    return out


def _show(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- additional-properties-implicit ------------------------------------------------------

_EFFECT = {
    "maskscope": "Maskscope's compiler lets the model add keys of its own, as JSON Schema "
    "allows, and a small model may go on adding them until max_tokens",
    "llguidance": "llguidance's compiler lets the model add keys of its own, as JSON Schema "
    "allows, and a small model may go on adding them until max_tokens",
    "llamacpp": "llama.cpp's converter forbids keys this object does not list, while a "
    "validator allows them, so the schema says more than the grammar does",
}
_MERGED = frozenset({"allOf", "$ref", "patternProperties", "unevaluatedProperties"})


def _additional_implicit(
    spans: Spans, parts: Path, node: dict[str, Any], compiler: str
) -> list[Problem]:
    if not isinstance(node.get("properties"), dict) or "additionalProperties" in node:
        return []
    # Other parts add keys here (allOf, $ref) or cover them: false would refuse those keys.
    if _MERGED.intersection(node) or (len(parts) >= 2 and parts[-2] == "allOf"):
        return []
    effect = _EFFECT.get(compiler, _EFFECT["maskscope"])
    message = f"`additionalProperties` is left out: {effect}. Write false for a fixed record"
    edit = add_member(spans, parts, "additionalProperties", False, after="properties")
    fix = Fix('Add "additionalProperties": false', (edit,))
    at = _key_at(spans, parts, "properties")
    return [_lint(spans, "additional-properties-implicit", parts, message, fix, at)]


# -- required-missing -------------------------------------------------------------------

_DEFINES_ELSEWHERE = frozenset(
    {"allOf", "anyOf", "oneOf", "$ref", "patternProperties", "dependentSchemas", "if", "then"}
)


def _required_missing(spans: Spans, parts: Path, node: dict[str, Any]) -> list[Problem]:
    props, required = node.get("properties"), node.get("required")
    if not isinstance(props, dict) or not isinstance(required, list):
        return []
    if _DEFINES_ELSEWHERE.intersection(node) or _part_of_another(parts):
        return []
    out = []
    for i, name in enumerate(required):
        if not isinstance(name, str) or name in props:
            continue
        if node.get("additionalProperties") is False:
            effect = "and additionalProperties false forbids it, so no value is valid"
        else:
            effect = "so the model must write it, with any value at all"
        message = f"`required` names {_show(name)}, which `properties` does not define, {effect}"
        close = difflib.get_close_matches(name, [p for p in props if p not in required], 1, 0.7)
        fix = None
        if close:
            edit = replace_value(spans, (*parts, "required", i), close[0])
            fix = Fix(f"Change it to {_show(close[0])}", (edit,))
        span = spans.value((*parts, "required", i))
        at = span[0] if span else None
        out.append(_lint(spans, "required-missing", (*parts, "required", i), message, fix, at))
    return out


def _part_of_another(parts: Path) -> bool:
    """A branch or condition of a bigger subschema, whose properties may be named there."""
    return parts[-2:-1] in (("allOf",), ("anyOf",), ("oneOf",)) or parts[-1:] in (
        ("if",),
        ("then",),
        ("else",),
        ("not",),
    )


# -- description-unseen ------------------------------------------------------------------


def _description_unseen(root: dict[str, Any], spans: Spans, prompt: str) -> list[Problem]:
    unseen: list[tuple[int, Path]] = []
    for parts, node in subschemas(root):
        for key in ("title", "description"):
            value = node.get(key)
            if isinstance(value, str) and value.strip() and value.strip() not in prompt:
                span = spans.key((*parts, key))
                unseen.append((span[0] if span else 0, (*parts, key)))
    if not unseen:
        return []
    at, parts = min(unseen)
    count = len(unseen)
    what = "a description or title" if count == 1 else f"{count} descriptions and titles"
    message = (
        f"{what} the model never sees: masking only removes tokens, and the model reads "
        "nothing but the prompt. Put the schema in the prompt for it to follow them"
    )
    head = "\n\n" if prompt.strip() else ""
    insert = f"{head}Answer with JSON that follows this schema:\n{spans.text.strip()}\n"
    fix = Fix(
        "Append the schema to the prompt", (TextEdit(len(prompt), len(prompt), insert),), "prompt"
    )
    return [_lint(spans, "description-unseen", parts, message, fix, at, "info")]


# -- shared ---------------------------------------------------------------------------


def _type_set(node: dict[str, Any]) -> set[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def _string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
