"""The bundle's schema.promptfoo.json: schema.json made ready for promptfoo's `is-json`.

promptfoo (0.121, src/assertions/json.ts and its getAjv) checks `is-json` with one shared
`new Ajv({strictSchema: true})` plus ajv-formats: Ajv's default class, which is draft-07 with
`$defs`, in strict mode. Measured with that Ajv (8.20) on the pinned promptfoo, it refuses:

- `$schema` naming draft 2020-12 ("no schema with key or ref"): it knows only draft-07's;
- keywords it does not know, 2020-12's among them (prefixItems, dependentRequired,
  dependentSchemas, unevaluatedProperties/Items, minContains/maxContains, $anchor,
  $dynamicRef, $dynamicAnchor) and any extension keyword ("strict mode: unknown keyword");
- a `format` ajv-formats does not define (idn-email, iri, ...: "unknown format");
- the same `$id` compiled twice ("already exists"): promptfoo compiles the file once per test.

So the copy drops `$schema` and the root `$id`, writes prefixItems/items as draft-07's
items/additionalItems and dependentRequired/dependentSchemas as `dependencies` (the same
language), and drops what draft-07 cannot say, each named in `notes` so the bundle's README
tells how much looser promptfoo's check is than the tested schema. Subschemas are found by
keyword, so a property that happens to be named `$schema` or `format` is left alone.
"""

from __future__ import annotations

import copy
from typing import Any

PROMPTFOO_SCHEMA_FILE = "schema.promptfoo.json"

# Keywords Ajv's default (draft-07) class knows: core, validation, applicator, format,
# metadata and content vocabularies (ajv/lib/vocabularies/draft7.ts).
_AJV_KEYWORDS = frozenset({
    "$id", "$schema", "$ref", "$defs", "definitions", "$comment", "$vocabulary", "type",
    "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
    "uniqueItems", "maxProperties", "minProperties", "required", "additionalItems", "items",
    "contains", "dependencies", "propertyNames", "additionalProperties", "properties",
    "patternProperties", "not", "anyOf", "oneOf", "allOf", "if", "then", "else", "format",
    "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
    "contentMediaType", "contentEncoding", "contentSchema",
})  # fmt: skip
# ajv-formats' full set (ajv-formats/src/formats.ts).
_AJV_FORMATS = frozenset({
    "date", "time", "date-time", "iso-time", "iso-date-time", "duration", "uri",
    "uri-reference", "uri-template", "url", "email", "hostname", "ipv4", "ipv6", "regex",
    "uuid", "json-pointer", "json-pointer-uri-fragment", "relative-json-pointer", "byte",
    "int32", "int64", "float", "double", "password", "binary",
})  # fmt: skip
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_ONE = (
    "additionalProperties", "propertyNames", "items", "additionalItems", "contains", "not",
    "if", "then", "else", "unevaluatedProperties", "unevaluatedItems", "contentSchema",
)  # fmt: skip


def promptfoo_schema(schema: Any) -> tuple[Any, tuple[str, ...]]:
    """The copy Ajv takes, and what it changed, one line per keyword, in words."""
    found: dict[str, list[str]] = {}
    ready = copy.deepcopy(schema)
    if isinstance(ready, dict) and "$id" in ready:
        del ready["$id"]
        found.setdefault("$id removed: promptfoo compiles the schema once per test", []).append("$")
    _walk(ready, "$", found)
    notes = tuple(f"{what} (at {', '.join(paths)})" for what, paths in found.items())
    return ready, notes


def _walk(node: Any, path: str, found: dict[str, list[str]]) -> None:
    if not isinstance(node, dict):
        return
    _translate(node, path, found)
    for key in [k for k in node if k not in _AJV_KEYWORDS]:
        why = "unknown to Ajv's draft-07 mode, so promptfoo does not check it"
        found.setdefault(f"`{key}` dropped: {why}", []).append(path)
        del node[key]
    if isinstance(node.get("format"), str) and node["format"] not in _AJV_FORMATS:
        found.setdefault(f"format `{node['format']}` dropped: ajv-formats has none", []).append(
            path
        )
        del node["format"]
    for key in (*_SCHEMA_MAPS, "dependencies"):
        if isinstance(node.get(key), dict):
            for name, sub in node[key].items():
                _walk(sub, f"{path}.{key}.{name}", found)
    for key in (*_SCHEMA_LISTS, "items"):
        if isinstance(node.get(key), list):
            for i, sub in enumerate(node[key]):
                _walk(sub, f"{path}.{key}[{i}]", found)
    for key in _SCHEMA_ONE:
        _walk(node.get(key), f"{path}.{key}", found)


def _translate(node: dict[str, Any], path: str, found: dict[str, list[str]]) -> None:
    """2020-12's keywords that draft-07 says otherwise, said the draft-07 way; `$schema`
    goes (Ajv's default class has draft-07's meta-schema only)."""
    if "$schema" in node:
        del node["$schema"]
        found.setdefault("$schema removed: Ajv's default class knows draft-07 only", []).append(
            path
        )
    if isinstance(node.get("prefixItems"), list):
        rest = node.pop("items", None)
        node["items"] = node.pop("prefixItems")
        if rest is not None:
            node["additionalItems"] = rest
        found.setdefault("prefixItems written as draft-07's items", []).append(path)
    required = node.pop("dependentRequired", None)
    schemas = node.pop("dependentSchemas", None)
    if isinstance(required, dict) or isinstance(schemas, dict):
        merged = dict(node.get("dependencies") or {})
        for name, sub in (schemas or {}).items():
            # Both on one name: the names must be there and the subschema hold.
            needs = (required or {}).get(name)
            merged[name] = {"allOf": [sub, {"required": needs}]} if needs else sub
        for name, needs in (required or {}).items():
            merged.setdefault(name, needs)
        node["dependencies"] = merged
        found.setdefault("dependentRequired/dependentSchemas written as dependencies", []).append(
            path
        )
