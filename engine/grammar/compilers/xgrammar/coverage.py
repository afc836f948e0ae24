"""Which schema keywords XGrammar's JSON Schema compiler does not enforce.

Derived from XGrammar 0.2's converter (cpp/json_schema_converter.cc and its warnings: "pattern
combined with minLength/maxLength is not supported", "Lookahead assertion is not supported",
"oneOf with overlapping ... branches ... falling back to anyOf", "allOf with multiple options
is still ongoing"), from vLLM's list of what it will not hand XGrammar
(`has_xgrammar_unsupported_json_features` in vllm/v1/structured_output/backend_xgrammar.py),
and from running each keyword through XGrammar (tests/engine/test_xgrammar.py holds every rule
against the real engine). A rule is per keyword and subschema, never per file.

What XGrammar does, as the rules below report it:
- It picks one construct per subschema, in this order: a `$ref` (only a JSON pointer from the
  document's root: '#', '#/…'; anything else is any value), an `enum` or `const`, the first of
  anyOf, oneOf, allOf (several allOf members: any value). The keywords beside it are dropped.
- With no `type`, a schema with properties, additionalProperties or unevaluatedProperties is
  an object and one with items, prefixItems or unevaluatedItems an array; any other schema is
  any JSON value, its string, number, object and array keywords dropped.
- not, if/then/else, $dynamicRef, dependentRequired, dependentSchemas, uniqueItems, contains
  are ignored; multipleOf holds only as a whole number on an integer; a property that both
  `properties` and a patternProperties pattern cover passes on either schema alone.
- Some format grammars are looser than the format's rules (LOOSE_FORMATS).
Where jsonschema follows a `$ref` to a different subschema than XGrammar does (an anchor, an
`$id` base, the meta-schema), every keyword past it is reported as well.
"""

from __future__ import annotations

import json
import re
from typing import Any

from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012, specification_with

from engine.grammar.report import Unenforced
from engine.schema.keywords import ANNOTATIONS
from engine.schema.parse import META_SCHEMAS
from engine.schema.pointer import local_target

IGNORED = "XGrammar's JSON Schema compiler ignores it"
# Formats the converter writes a grammar for (vLLM names the same set).
FORMATS = frozenset(
    {
        "email",
        "date",
        "time",
        "date-time",
        "duration",
        "ipv4",
        "ipv6",
        "hostname",
        "uuid",
        "uri",
        "uri-reference",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
    }
)
# Formats whose grammar lets through strings the format's rules (jsonschema's checker) refuse.
LOOSE_FORMATS = {
    "date": "any day 01-31 in every month (2021-02-30)",
    "date-time": "any day 01-31 in every month, a leap second at any minute",
    "time": "a leap second at any minute (12:00:60Z)",
    "ipv4": "octets with leading zeros (01.2.3.4)",
    "ipv6": "an embedded IPv4 with leading zeros",
    "hostname": "labels over 63 characters, names over 253",
}
_ANNOTATIONS = ANNOTATIONS | {"contentSchema"}
_NEVER = ("not", "if", "then", "else", "$dynamicRef", "dependentRequired", "dependentSchemas")
_COMPOSITIONS = ("anyOf", "oneOf", "allOf")  # the first one here decides, the rest is dropped
# Keywords that apply to one JSON type only. Without `type`, XGrammar makes an object of a
# schema with one of _OBJECT_MARKS and an array of one with _ARRAY_MARKS; any other schema
# becomes "any JSON value" and these keywords are dropped.
_TYPED = (
    "minLength", "maxLength", "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "required", "patternProperties", "propertyNames", "minProperties", "maxProperties",
    "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
)  # fmt: skip
_OBJECT_MARKS = ("properties", "additionalProperties", "unevaluatedProperties")
_ARRAY_MARKS = ("items", "prefixItems", "unevaluatedItems")
_ARRAY_GAPS = ("uniqueItems", "contains", "minContains", "maxContains")
_LOOKAROUND = re.compile(r"\(\?<?[=!]")
# Keywords whose value is one subschema, or a map or list of them, for the walk below.
_ONE = ("additionalProperties", "items", "propertyNames", "unevaluatedProperties")
_MAP = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
_LIST = ("anyOf", "oneOf", "prefixItems")


def unenforced_keywords(schema: Any) -> list[Unenforced]:
    found: list[Unenforced] = []
    _walk(schema, "$", found)
    if isinstance(schema, dict):
        found += _ref_gaps(schema)
    return found


def _ref_gaps(root: dict[str, Any]) -> list[Unenforced]:
    """XGrammar follows a `$ref` only as a JSON pointer into the whole document ('#', '#/…');
    jsonschema follows anchors, `$id` bases and the meta-schemas too. Where the two land on
    different subschemas (or XGrammar on none: then any value passes), every keyword jsonschema
    would check there is unenforced on that route."""
    text = json.dumps(root)
    if '"$ref"' not in text and '"$dynamicRef"' not in text:
        return []
    dialect = root.get("$schema")
    spec = specification_with(dialect if isinstance(dialect, str) else "", default=DRAFT202012)
    resolver = META_SCHEMAS.resolver_with_root(spec.create_resource(root))
    paths: dict[int, str] = {}
    _index(root, "$", paths)
    found: list[Unenforced] = []
    seen: set[int] = set()
    for node, path, here in _nodes(root, "$", resolver, spec):
        for key in ("$ref", "$dynamicRef"):
            ref = node.get(key)
            if not isinstance(ref, str):
                continue
            try:
                resolved = here.lookup(ref)
            except Unresolvable:
                continue  # jsonschema cannot follow it either
            if key == "$ref" and local_target(root, ref) is resolved.contents:
                continue
            if key == "$ref" and ref.startswith("#/"):
                note = "XGrammar reads this pointer from the document's root, not the $id's"
                found.append(Unenforced(path, "$ref", note))
            note = f"checked by jsonschema past a {key} XGrammar does not follow ({ref})"
            for target, where in _reached(resolved.contents, resolved.resolver, spec, seen):
                at = paths.get(id(target), where)
                found += [
                    Unenforced(at, k, note)
                    for k in target
                    if k not in _ANNOTATIONS and k not in ("$id", "$ref", "$dynamicRef")
                ]
    return found


_SUBSCHEMA = (
    "additionalProperties",
    "items",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
)
_SUBSCHEMA_MAP = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
_SUBSCHEMA_LIST = ("anyOf", "oneOf", "allOf", "prefixItems", "items")


def _children(node: Any) -> list[tuple[str, Any]]:
    """The subschemas right under a schema, each with the step of its JSON path."""
    if not isinstance(node, dict):
        return []
    found = []
    for key, value in node.items():
        step = _step(key)
        if key in _SUBSCHEMA and isinstance(value, dict):
            found.append((step, value))
        elif key in _SUBSCHEMA_MAP and isinstance(value, dict):
            found += [(step + _step(k), v) for k, v in value.items() if isinstance(v, dict)]
        elif key in _SUBSCHEMA_LIST and isinstance(value, list):
            found += [(f"{step}[{i}]", v) for i, v in enumerate(value) if isinstance(v, dict)]
    return found


def _step(key: str) -> str:
    """`.key`, or `['key']` where the key holds a dot or a bracket (engine.check.verdict)."""
    if not re.search(r"[.\[]", key):
        return f".{key}"
    return f"['{key}']" if "'" not in key else f'["{key}"]'


def _index(node: Any, path: str, paths: dict[int, str]) -> None:
    paths.setdefault(id(node), path)
    for step, child in _children(node):
        _index(child, path + step, paths)


def _nodes(node: Any, path: str, resolver: Any, spec: Any):
    """Every object in the document, its path, and the resolver of its `$id` scope."""
    if not isinstance(node, dict):
        return  # a boolean schema
    if isinstance(node.get("$id"), str) and path != "$":
        resolver = resolver.in_subresource(spec.create_resource(node))
    yield node, path, resolver
    for step, child in _children(node):
        yield from _nodes(child, path + step, resolver, spec)


def _reached(node: Any, resolver: Any, spec: Any, seen: set[int]):
    """Every object under `node`, and under each `$ref` from there (once each), with a path
    for one outside the document (its base URI, which names no place in the schema)."""
    for target, _, here in _nodes(node, "$", resolver, spec):
        if id(target) in seen:
            continue
        seen.add(id(target))
        yield target, str(getattr(here, "_base_uri", "")) or "#"
        for key in ("$ref", "$dynamicRef"):
            if isinstance(target.get(key), str):
                try:
                    resolved = here.lookup(target[key])
                except Unresolvable:
                    continue
                yield from _reached(resolved.contents, resolved.resolver, spec, seen)


def _walk(schema: Any, path: str, found: list[Unenforced]) -> None:
    if not isinstance(schema, dict):
        return
    found.extend(Unenforced(path, key, note) for key, note in _gaps(schema))
    for key in _ONE:
        sub = schema.get(key)
        if key == "propertyNames" and isinstance(sub, dict) and "type" not in sub:
            sub = {**sub, "type": "string"}  # XGrammar checks a name as a string
        _walk(sub, f"{path}.{key}", found)
    for key in _MAP:
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                _walk(sub, f"{path}.{key}{_step(name)}", found)
    for key in _LIST:
        if isinstance(schema.get(key), list):
            for i, sub in enumerate(schema[key]):
                _walk(sub, f"{path}.{key}[{i}]", found)
    members = schema.get("allOf")
    if isinstance(members, list) and len(members) == 1:
        _walk(members[0], f"{path}.allOf[0]", found)


def _gaps(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """(keyword, why) for each keyword here that XGrammar's grammar leaves out."""
    found: dict[str, str] = {}
    for key, why in _all_gaps(schema):
        found.setdefault(key, why)
    return list(found.items())


def _all_gaps(schema: dict[str, Any]) -> list[tuple[str, str]]:
    if "$ref" in schema:
        gaps = [
            (k, "XGrammar follows the $ref and drops the keywords beside it")
            for k in schema
            if k != "$ref" and k not in _ANNOTATIONS
        ]
        ref = schema["$ref"]
        if not (isinstance(ref, str) and (ref == "#" or ref.startswith("#/"))):
            gaps.append(("$ref", "XGrammar resolves only '#/…' pointers; any value passes here"))
        return gaps
    if "enum" in schema or "const" in schema:
        return [
            (k, "an enum or const alone decides XGrammar's grammar")
            for k in schema
            if k not in ("enum", "const") and k not in _ANNOTATIONS
        ]
    composition = next((k for k in _COMPOSITIONS if k in schema), None)
    if composition is not None:
        return _composition_gaps(schema) + [
            (k, f"XGrammar follows the {composition} and drops the keywords beside it")
            for k in schema
            if k != composition and k not in _ANNOTATIONS
        ]
    gaps = [(k, IGNORED) for k in _NEVER if k in schema]
    # A `false` then/else: jsonschema's error names no keyword, so the gap says "false".
    gaps += [("false", IGNORED) for k in ("then", "else") if schema.get(k) is False][:1]
    if "type" not in schema and not any(k in schema for k in _OBJECT_MARKS + _ARRAY_MARKS):
        why = "XGrammar drops it where the schema names no type (any value passes)"
        gaps += [(k, why) for k in _TYPED if k in schema]
    gaps += _string_gaps(schema)
    gaps += [(k, IGNORED) for k in _ARRAY_GAPS if k in schema]
    step = schema.get("multipleOf")
    whole = (isinstance(step, int) and not isinstance(step, bool)) or (
        isinstance(step, float) and step.is_integer()
    )
    if "multipleOf" in schema and not (schema.get("type") == "integer" and whole):
        gaps.append(("multipleOf", "XGrammar enforces a whole multipleOf on integers only"))
    gaps += _pattern_property_gaps(schema)
    gaps += _required_gaps(schema)
    return gaps


def _composition_gaps(schema: dict[str, Any]) -> list[tuple[str, str]]:
    gaps = []
    if isinstance(schema.get("oneOf"), list) and len(schema["oneOf"]) > 1:
        gaps.append(("oneOf", "XGrammar checks oneOf as anyOf where the branches may overlap"))
    members = schema.get("allOf")
    if isinstance(members, list) and len(members) > 1:
        gaps.append(("allOf", "XGrammar does not intersect several allOf members"))
    return gaps


def _string_gaps(schema: dict[str, Any]) -> list[tuple[str, str]]:
    gaps = []
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt not in FORMATS:
        gaps.append(("format", f"XGrammar has no grammar for the format {fmt!r}"))
    elif fmt in LOOSE_FORMATS:
        gaps.append(("format", f"XGrammar's {fmt} grammar lets through {LOOSE_FORMATS[fmt]}"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and _LOOKAROUND.search(pattern):
        gaps.append(("pattern", "XGrammar drops the pattern's lookaround assertions"))
    if "pattern" in schema or fmt in FORMATS:
        gaps += [
            (k, "XGrammar drops a length bound beside a pattern or format")
            for k in ("minLength", "maxLength")
            if k in schema
        ]
    return gaps


def _pattern_property_gaps(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """A property that `properties` names and a patternProperties pattern matches: XGrammar
    lets its value pass on either schema alone, where jsonschema checks it against both."""
    named, patterns = schema.get("properties"), schema.get("patternProperties")
    if not (isinstance(named, dict) and isinstance(patterns, dict)):
        return []
    for pattern in patterns:
        try:
            if any(re.search(pattern, name) for name in named):
                why = "XGrammar checks a property both name and pattern cover on one of the two"
                return [("properties", why), ("patternProperties", why)]
        except re.error:
            continue
    return []


def _required_gaps(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """XGrammar writes a required property only where `properties` describes it."""
    required = schema.get("required")
    named = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    if isinstance(required, list) and any(name not in named for name in required):
        return [("required", "XGrammar enforces only the required names under properties")]
    return []
