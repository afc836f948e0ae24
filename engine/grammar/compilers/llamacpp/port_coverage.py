"""Which schema keywords llama-cpp-python's Python port of the converter does not enforce.

The `llamacpp` compiler runs this port only where llama.cpp's own C++ converter is not built
(coverage.py has that one's report). The port reads a schema through one chain of if/elif
branches: at each subschema the first matching branch wins and the other keywords there are
skipped without a word. This module walks the schema the same way and names what was
skipped, so the user learns it before a run, not from a bad output.
"""

from __future__ import annotations

import re
from typing import Any

from engine.grammar.report import Unenforced
from engine.schema.keywords import ANNOTATIONS

# Why a keyword of a kind the converter handles is still missing from its grammar.
_SKIPPED = "llama-cpp-python's port of llama.cpp's converter skips it without a word"
# Keywords that describe rather than constrain; the grammar has nothing to enforce.
_ANNOTATIONS = ANNOTATIONS
_FORMATS = frozenset({"date", "time", "date-time"})
_UUID = re.compile(r"^uuid[1-5]?$")


def unenforced_keywords(schema: Any) -> list[Unenforced]:
    found: list[Unenforced] = []
    _walk(schema, "$", found)
    if isinstance(schema, dict):
        for key in ("$defs", "definitions"):
            for name, sub in (schema.get(key) or {}).items():
                _walk(sub, f"$.{key}.{name}", found)
    return found


def _used_keywords(schema: dict[str, Any]) -> tuple[set[str], str]:
    """The keywords the converter's branch uses here, and a word on why others are not."""
    kind = schema.get("type")
    fmt = schema.get("format") or ""
    if "$ref" in schema:
        return {"$ref"}, "a $ref replaces its sibling keywords in the grammar"
    if "oneOf" in schema or "anyOf" in schema:
        return {"oneOf", "anyOf"}, "the grammar only uses the alternatives here"
    if isinstance(kind, list):
        return {"type"}, "a list of types becomes plain alternatives"
    if "const" in schema:
        return {"const"}, "const alone decides the grammar"
    if "enum" in schema:
        return {"enum", "type"}, "enum alone decides the grammar"
    is_object = kind in (None, "object")
    extra = schema.get("additionalProperties")
    if is_object and (
        "properties" in schema or ("additionalProperties" in schema and extra is not True)
    ):
        return {"type", "properties", "required", "additionalProperties"}, _SKIPPED
    if is_object and "allOf" in schema:
        return {"type", "allOf"}, "allOf only merges its members' properties"
    if kind in (None, "array") and ("items" in schema or "prefixItems" in schema):
        return {"type", "items", "prefixItems", "minItems", "maxItems"}, _SKIPPED
    if kind in (None, "string") and "pattern" in schema:
        return {"type", "pattern"}, "a pattern alone decides the grammar"
    if kind in (None, "string") and (_UUID.match(fmt) or fmt in _FORMATS):
        return {"type", "format"}, "a format alone decides the grammar"
    if kind == "string" and ("minLength" in schema or "maxLength" in schema):
        return {"type", "minLength", "maxLength"}, _SKIPPED
    return {"type"}, _SKIPPED


def _walk(schema: Any, path: str, found: list[Unenforced]) -> None:
    if not isinstance(schema, dict):
        return
    used, note = _used_keywords(schema)
    for key in schema:
        if key in used or key in _ANNOTATIONS:
            continue
        found.append(Unenforced(path, key, note))
    if "oneOf" in schema and "oneOf" in used:
        found.append(Unenforced(path, "oneOf", "treated as anyOf: exactly-one is not checked"))
    for key in ("oneOf", "anyOf", "prefixItems"):
        if key in used and isinstance(schema.get(key), list):
            for i, sub in enumerate(schema[key]):
                _walk(sub, f"{path}.{key}[{i}]", found)
    if "allOf" in used:
        for i, member in enumerate(schema.get("allOf") or []):
            _walk_all_of_member(member, f"{path}.allOf[{i}]", found)
    if "properties" in used:
        for name, sub in (schema.get("properties") or {}).items():
            _walk(sub, f"{path}.properties.{name}", found)
        if isinstance(schema.get("additionalProperties"), dict):
            _walk(schema["additionalProperties"], f"{path}.additionalProperties", found)
    if "items" in used and isinstance(schema.get("items"), dict):
        _walk(schema["items"], f"{path}.items", found)


def _walk_all_of_member(member: Any, path: str, found: list[Unenforced]) -> None:
    """allOf members only contribute their properties (all of them made required)."""
    if not isinstance(member, dict):
        return
    for key in member:
        if key not in {"properties", "$ref", "anyOf", "type", "required"} | _ANNOTATIONS:
            found.append(Unenforced(path, key, "allOf only merges its members' properties"))
    for name, sub in (member.get("properties") or {}).items():
        _walk(sub, f"{path}.properties.{name}", found)
    for j, alt in enumerate(member.get("anyOf") or []):
        _walk_all_of_member(alt, f"{path}.anyOf[{j}]", found)
