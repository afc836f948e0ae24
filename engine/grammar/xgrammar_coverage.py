"""Which schema keywords XGrammar's JSON Schema compiler does not enforce.

Derived from XGrammar 0.2's converter (cpp/json_schema_converter.cc and its warnings: "pattern
combined with minLength/maxLength is not supported", "Lookahead assertion is not supported",
"oneOf with overlapping ... branches ... falling back to anyOf", "allOf with multiple options
is still ongoing"), from vLLM's list of what it will not hand XGrammar
(`has_xgrammar_unsupported_json_features` in vllm/v1/structured_output/backend_xgrammar.py),
and from running each keyword through XGrammar (tests/engine/test_xgrammar.py holds every rule
against the real engine). A rule is per keyword and subschema, never per file.
"""

from __future__ import annotations

import re
from typing import Any

from engine.grammar.report import Unenforced

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
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$anchor",
        "$dynamicAnchor",
        "$vocabulary",
        "$defs",
        "definitions",
        "title",
        "description",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
    }
)
_NEVER = ("not", "if", "then", "else")
_ARRAY_GAPS = ("uniqueItems", "contains", "minContains", "maxContains")
_LOOKAROUND = re.compile(r"\(\?<?[=!]")
# Keywords whose value is one subschema, or a map or list of them, for the walk below.
_ONE = ("additionalProperties", "items", "propertyNames", "unevaluatedProperties")
_MAP = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
_LIST = ("anyOf", "oneOf", "prefixItems")


def unenforced_keywords(schema: Any) -> list[Unenforced]:
    found: list[Unenforced] = []
    _walk(schema, "$", found)
    return found


def _walk(schema: Any, path: str, found: list[Unenforced]) -> None:
    if not isinstance(schema, dict):
        return
    found.extend(Unenforced(path, key, note) for key, note in _gaps(schema))
    for key in _ONE:
        _walk(schema.get(key), f"{path}.{key}", found)
    for key in _MAP:
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                _walk(sub, f"{path}.{key}.{name}", found)
    for key in _LIST:
        if isinstance(schema.get(key), list):
            for i, sub in enumerate(schema[key]):
                _walk(sub, f"{path}.{key}[{i}]", found)
    members = schema.get("allOf")
    if isinstance(members, list) and len(members) == 1:
        _walk(members[0], f"{path}.allOf[0]", found)


def _gaps(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """(keyword, why) for each keyword here that XGrammar's grammar leaves out."""
    if "$ref" in schema:
        return [
            (k, "XGrammar follows the $ref and drops the keywords beside it")
            for k in schema
            if k != "$ref" and k not in _ANNOTATIONS
        ]
    if "enum" in schema or "const" in schema:
        return [
            (k, "an enum or const alone decides XGrammar's grammar")
            for k in schema
            if k not in ("enum", "const") and k not in _ANNOTATIONS
        ]
    gaps = [(k, IGNORED) for k in _NEVER if k in schema]
    gaps += _composition_gaps(schema)
    gaps += _string_gaps(schema)
    gaps += [(k, IGNORED) for k in _ARRAY_GAPS if k in schema]
    if "multipleOf" in schema and schema.get("type") != "integer":
        gaps.append(("multipleOf", "XGrammar enforces multipleOf on integers only"))
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


def _required_gaps(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """XGrammar writes a required property only where `properties` describes it."""
    required = schema.get("required")
    named = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    if isinstance(required, list) and any(name not in named for name in required):
        return [("required", "XGrammar enforces only the required names under properties")]
    return []
