"""Which schema keywords llama.cpp's converter does not enforce.

llama-server converts `json_schema` with the C++ converter: common/json-schema.cpp reads the
schema into typed nodes (`common_chat_schema_builder::build_node`), then
common/json-schema-to-grammar.cpp writes each node's grammar. At each subschema the reader
takes one branch, in this order: `$ref`; `oneOf` (else `anyOf`); a list of types (one
alternative per type, each with every sibling keyword); `const`; `enum`; then by `type`, or
without one by what is there (properties, allOf, items, string keywords). Each branch reads a
fixed set of keywords and drops the rest without a word. This module walks the schema the
same way and names what was dropped, so the user learns it before a run, not from a bad
output. Read from llama-cpp-python 0.3.36's sdist (the llama.cpp Maskscope and its
llama-server run); tests/engine/test_llamacpp_converter.py holds it to the real converter.

Where that converter is not built, the `llamacpp` compiler runs llama-cpp-python's old
Python port instead, and port_coverage.py reports for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.grammar.compilers.llamacpp.converter import converter_in_use
from engine.grammar.compilers.llamacpp.patterns import lets_quote_through, unsupported_reason
from engine.grammar.compilers.llamacpp.port_coverage import (
    unenforced_keywords as port_unenforced_keywords,
)
from engine.grammar.report import Unenforced
from engine.schema.keywords import ANNOTATIONS

_SKIPPED = "llama.cpp's converter skips it without a word"
_FORMATS = frozenset({"date", "time", "date-time", "uuid", *(f"uuid{n}" for n in range(1, 6))})
_ALL = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
# Keywords that only ever constrain values of some types; the rest (not, if, allOf, ...)
# constrain every value.
_KINDS_OF = {
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "array": ("items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems",
              "contains", "minContains", "maxContains", "unevaluatedItems"),
    "object": ("properties", "required", "additionalProperties", "patternProperties",
               "propertyNames", "minProperties", "maxProperties", "dependentRequired",
               "dependentSchemas", "dependencies", "unevaluatedProperties"),
}  # fmt: skip
_APPLIES_TO = {
    key: frozenset({kind, "integer"} if kind == "number" else {kind})
    for kind, keys in _KINDS_OF.items()
    for key in keys
}
_INT64 = 2**63


@dataclass(frozen=True)
class _Branch:
    """The reader's branch at one subschema: the keywords it reads, why the others are
    dropped, and the JSON types its grammar can produce."""

    kind: str
    used: frozenset[str]
    note: str
    produces: frozenset[str] = _ALL


def unenforced_keywords(schema: Any) -> list[Unenforced]:
    """What the converter the `llamacpp` compiler runs here does not enforce."""
    if not converter_in_use().native:
        return port_unenforced_keywords(schema)
    found: list[Unenforced] = []
    _walk(schema, "$", found)
    if isinstance(schema, dict):
        for key in ("$defs", "definitions"):
            defs = schema.get(key)
            for name, sub in (defs if isinstance(defs, dict) else {}).items():
                _walk(sub, f"$.{key}.{name}", found)
    unique: dict[tuple[str, str], Unenforced] = {}
    for gap in found:
        unique.setdefault((gap.path, gap.keyword), gap)
    return list(unique.values())


def _has_properties(schema: dict[str, Any]) -> bool:
    return "properties" in schema or (
        "additionalProperties" in schema and schema["additionalProperties"] is not True
    )


def _fits(value: Any, kind: str) -> bool:
    """Whether a JSON value is of a JSON Schema type (3.0 is an integer, true is not)."""
    if isinstance(value, bool):
        return kind == "boolean"
    if isinstance(value, int | float):
        whole = isinstance(value, int) or value.is_integer()
        return kind == "number" or (kind == "integer" and whole)
    types = {"null": type(None), "string": str, "array": list, "object": dict}
    return kind in types and isinstance(value, types[kind])


def _branch(schema: dict[str, Any]) -> _Branch:
    """build_node's choice at this subschema (common/json-schema.cpp)."""
    kind = schema.get("type")
    if "$ref" in schema:
        return _Branch("ref", frozenset({"$ref"}), "a $ref replaces its sibling keywords")
    if "oneOf" in schema or "anyOf" in schema:
        key = "oneOf" if "oneOf" in schema else "anyOf"
        note = f"the grammar only uses the alternatives of {key} here"
        return _Branch(key, frozenset({key}), note)
    if isinstance(kind, list) and not ("const" in schema or "enum" in schema):
        return _Branch("types", frozenset({"type"}), _SKIPPED)
    for key in ("const", "enum"):
        if key in schema:
            values = [schema[key]] if key == "const" else schema[key]
            values = values if isinstance(values, list) else []
            kinds = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
            # type is dropped too, which matters only where a value is not of that type
            fits = not kinds or all(any(_fits(v, k) for k in kinds) for v in values)
            used = {key, "type"} if fits else {key}
            return _Branch(key, frozenset(used), f"{key} alone decides the grammar")
    structural = {
        "object": ({"type", "properties", "required", "additionalProperties"}, {"object"}),
        "allOf": ({"type", "allOf"}, {"object"}),
        "array": ({"type", "items", "prefixItems", "minItems", "maxItems"}, {"array"}),
        "string": ({"type", "pattern", "format", "minLength", "maxLength"}, {"string"}),
    }
    if kind is None:
        if _has_properties(schema):
            chosen = "object"
        elif "allOf" in schema:
            chosen = "allOf"
        elif "items" in schema or "prefixItems" in schema:
            chosen = "array"
        elif {"pattern", "minLength", "maxLength"} & set(schema) or schema.get(
            "format"
        ) in _FORMATS:
            chosen = "string"
        else:
            note = (
                "with no type, nor properties, allOf, items or a string keyword, the "
                "grammar allows any JSON value"
            )
            return _Branch("any", frozenset(), note)
        used, produces = structural[chosen]
        return _Branch(chosen, frozenset(used), _SKIPPED, frozenset(produces))
    if kind == "object" and "allOf" in schema and not _has_properties(schema):
        used, produces = structural["allOf"]
        note = "allOf only merges its members' properties"
        return _Branch("allOf", frozenset(used), note, frozenset(produces))
    if kind == "string" and "allOf" in schema:
        note = (
            "with type string, the converter reads allOf as an object's members: its grammar "
            "is an object, and no string is accepted"
        )
        return _Branch("allOf", frozenset({"allOf"}), note, frozenset({"object"}))
    if kind in structural:
        used, produces = structural[kind]
        return _Branch(kind, frozenset(used), _SKIPPED, frozenset(produces))
    if kind == "integer":
        used = {"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
        return _Branch("integer", frozenset(used), _SKIPPED, frozenset({"integer"}))
    produces = {"number", "integer"} if kind == "number" else {kind}
    return _Branch(str(kind), frozenset({"type"}), _SKIPPED, frozenset(produces))


def _used_keywords(schema: dict[str, Any]) -> tuple[set[str], str]:
    """The keywords the converter's branch reads here, and a word on why others are not
    (engine/workbench/enforcement.py reads it for the objects the converter closes)."""
    branch = _branch(schema)
    used = set(branch.used)
    if "properties" not in schema:  # {"type": "object"} alone is any object: open
        used.discard("properties")
    return used, branch.note


def _applies(keyword: str, produces: frozenset[str]) -> bool:
    return bool(_APPLIES_TO.get(keyword, _ALL) & produces)


def _walk(schema: Any, path: str, found: list[Unenforced]) -> None:
    # A boolean subschema is refused by the converter ("schema must be an object"): no gap.
    if not isinstance(schema, dict):
        return
    branch = _branch(schema)
    if branch.kind == "types":
        _walk_type_list(schema, path, found)
        return
    for key in schema:
        if key in branch.used or key in ANNOTATIONS or not _applies(key, branch.produces):
            continue
        found.append(Unenforced(path, key, _note(branch, key)))
    _refine(schema, path, branch, found)
    _descend(schema, path, branch, found)


def _note(branch: _Branch, keyword: str) -> str:
    if branch.kind == "number" and keyword in _APPLIES_TO and "number" in _APPLIES_TO[keyword]:
        return "the converter bounds integers only"
    return branch.note


def _walk_type_list(schema: dict[str, Any], path: str, found: list[Unenforced]) -> None:
    """`{"type": [a, b], ...}` is read as `anyOf` of `{"type": a, ...}` and `{"type": b,
    ...}`: a keyword is dropped where an alternative it applies to drops it."""
    for kind in schema["type"]:
        _walk({**schema, "type": kind}, path, found)


def _refine(schema: dict[str, Any], path: str, branch: _Branch, found: list[Unenforced]) -> None:
    """Keywords a branch reads only in part."""
    if branch.kind == "oneOf":
        found.append(Unenforced(path, "oneOf", "treated as anyOf: exactly-one is not checked"))
    elif branch.kind == "object":
        _object_gaps(schema, path, found)
    elif branch.kind == "array":
        _array_gaps(schema, path, found)
    elif branch.kind == "string":
        _string_gaps(schema, path, found)
    elif branch.kind == "integer":
        _integer_gaps(schema, path, found)
    elif branch.kind == "allOf" and "allOf" in branch.used:
        _all_of_gaps(schema, path, found)


def _object_gaps(schema: dict[str, Any], path: str, found: list[Unenforced]) -> None:
    # build_object reads `required` for the names under `properties` only; another name is
    # refused when the object is closed (an over-constraint) and not asked for when it is open.
    props = schema.get("properties")
    listed = set(props) if isinstance(props, dict) else set()
    extra = schema.get("additionalProperties", "properties" not in schema)
    required = schema.get("required")
    unlisted = [n for n in required if n not in listed] if isinstance(required, list) else []
    if unlisted and extra is not False:
        note = f"only names under properties are made required; not {', '.join(map(str, unlisted))}"
        found.append(Unenforced(path, "required", note))


def _array_gaps(schema: dict[str, Any], path: str, found: list[Unenforced]) -> None:
    key = "items" if "items" in schema else "prefixItems"
    if "items" in schema and "prefixItems" in schema:
        found.append(
            Unenforced(path, "prefixItems", "items wins over prefixItems, which is dropped")
        )
    if isinstance(schema.get(key), list):  # a tuple of exactly those items
        for count in ("minItems", "maxItems"):
            if count in schema:
                note = (
                    f"a tuple ({key} as a list) has exactly its items' length; {count} is not read"
                )
                found.append(Unenforced(path, count, note))


def _string_gaps(schema: dict[str, Any], path: str, found: list[Unenforced]) -> None:
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and pattern:  # an empty pattern counts as none
        dropped, note = ("format", "minLength", "maxLength"), "a pattern alone decides the grammar"
        reason = unsupported_reason(pattern)
        if reason is not None:
            note = f"the converter cannot convert this pattern ({reason}) and accepts any string"
            found.append(Unenforced(path, "pattern", note))
            note = "a pattern, even one it cannot convert, decides the grammar"
        elif lets_quote_through(pattern):
            runaway = (
                "the converter writes this pattern's `.`, `[^…]` or quote so that a raw `\"` "
                "may enter the string: it can end early or run on past its closing quote, "
                "and the JSON around it goes unchecked"
            )
            found.append(Unenforced(path, "pattern", runaway))
    elif schema.get("format") in _FORMATS:
        dropped, note = ("minLength", "maxLength"), "a format alone decides the grammar"
    else:
        dropped, note = ("format",), "the converter has no grammar for this format"
    found.extend(Unenforced(path, key, note) for key in dropped if key in schema)


def _integer_gaps(schema: dict[str, Any], path: str, found: list[Unenforced]) -> None:
    # build_integer: `minimum` else `exclusiveMinimum`, and the same for the maximum; a bound
    # is read into a 64-bit integer (a fraction rounded inwards, which is exact).
    for inclusive, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        read = inclusive if inclusive in schema else exclusive
        if inclusive in schema and exclusive in schema:
            tighter = _number(schema[exclusive]) is None or _number(schema[inclusive]) is None
            if not tighter:
                low = inclusive == "minimum"
                a, b = _number(schema[exclusive]), _number(schema[inclusive])
                tighter = a >= b if low else a <= b
            if tighter:
                note = f"{inclusive} is read and {exclusive} is not"
                found.append(Unenforced(path, exclusive, note))
        bound = _number(schema.get(read))
        if bound is not None and abs(bound) >= _INT64:
            note = "a bound outside 64-bit integers overflows in the converter"
            found.append(Unenforced(path, read, note))


def _number(value: Any) -> float | int | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _all_of_gaps(schema: dict[str, Any], path: str, found: list[Unenforced]) -> None:
    members = schema.get("allOf")
    members = members if isinstance(members, list) else []
    # _visit_all_of: every member an enum gives their common values (when there are any)
    enums_only = bool(members) and all(isinstance(m, dict) and "enum" in m for m in members)
    for i, member in enumerate(members):
        _walk_all_of_member(member, f"{path}.allOf[{i}]", found, enums_only)


_MEMBER_READ = frozenset({"properties", "$ref", "anyOf", "oneOf", "type", "required"})


def _walk_all_of_member(member: Any, path: str, found: list[Unenforced], enums: bool) -> None:
    """allOf members only contribute their properties (each made required) or, when every
    member is an enum, their common values."""
    if not isinstance(member, dict):
        return
    note = "allOf only merges its members' properties"
    for key in member:
        if key in _MEMBER_READ | ANNOTATIONS or (key == "enum" and enums):
            continue
        found.append(Unenforced(path, key, note))
    props = member.get("properties")
    for name, sub in (props if isinstance(props, dict) else {}).items():
        _walk(sub, f"{path}.properties.{name}", found)
    key = "oneOf" if "oneOf" in member else "anyOf"
    alts = member.get(key)
    for j, alt in enumerate(alts if isinstance(alts, list) else []):
        _walk_all_of_member(alt, f"{path}.{key}[{j}]", found, False)


def _descend(schema: dict[str, Any], path: str, branch: _Branch, found: list[Unenforced]) -> None:
    if branch.kind in ("oneOf", "anyOf") and isinstance(schema.get(branch.kind), list):
        for i, sub in enumerate(schema[branch.kind]):
            _walk(sub, f"{path}.{branch.kind}[{i}]", found)
    elif branch.kind == "object":
        props = schema.get("properties")
        for name, sub in (props if isinstance(props, dict) else {}).items():
            _walk(sub, f"{path}.properties.{name}", found)
        if isinstance(schema.get("additionalProperties"), dict):
            _walk(schema["additionalProperties"], f"{path}.additionalProperties", found)
    elif branch.kind == "array":
        key = "items" if "items" in schema else "prefixItems"
        items = schema.get(key)
        if isinstance(items, list):
            for i, sub in enumerate(items):
                _walk(sub, f"{path}.{key}[{i}]", found)
        elif isinstance(items, dict):
            _walk(items, f"{path}.{key}", found)
