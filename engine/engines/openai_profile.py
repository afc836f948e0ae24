"""OpenAI Structured Outputs in strict mode, as a documented profile: no engine runs here.

OpenAI compiles a strict schema on its own servers, so Maskscope cannot run it. What it can
do is hold the schema against what OpenAI documents: the keywords strict mode supports, the
rules it refuses a schema for, and its size limits. Source, "Supported schemas":

    https://platform.openai.com/docs/guides/structured-outputs#supported-schemas

OpenAI's page carries no date of its own; the tables below follow it as of February 2026
(DOCS_DATE), the version that jsonschemaprofiles.unitvectorylabs.com/schemas/openai
transcribes (OpenAI's page itself could not be read from where this was written). When
OpenAI changes the page, change the tables and DOCS_DATE together.

Each broken rule is a lint (`ProfileLint`): the API would refuse the schema. Two have a
one-click fix, an edit of the schema text as the workbench's lints make them: list every
property in `required`, and write `additionalProperties: false`. A keyword outside the
documented subset is reported as unenforced: the page does not say whether the API refuses
it or ignores it, and neither enforces it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.grammar.report import Unenforced
from engine.schema.pointer import path_text
from engine.workbench.edits import add_member, replace_value
from engine.workbench.entries import Fix
from engine.workbench.locate import Path, Spans
from engine.workbench.walk import subschemas

DOCS_URL = "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"
DOCS_DATE = "2026-02"

# "Supported properties", by type, and what every subschema may carry (types, enum, const,
# anyOf, definitions and references, annotations).
_ANY = frozenset(
    {
        "type", "enum", "const", "anyOf", "$ref", "$defs", "definitions",
        "title", "description", "$schema", "$id", "$comment", "examples", "default",
    }
)  # fmt: skip
SUPPORTED: dict[str, frozenset[str]] = {
    "any": _ANY,
    "string": frozenset({"pattern", "format"}),
    "number": frozenset(
        {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"}
    ),
    "array": frozenset({"items", "minItems", "maxItems"}),
    "object": frozenset({"properties", "required", "additionalProperties"}),
}
SUPPORTED_KEYWORDS = frozenset().union(*SUPPORTED.values())
# "Some type-specific keywords are not yet supported": composition keywords.
REFUSED = frozenset({"allOf", "not", "dependentRequired", "dependentSchemas", "if", "then", "else"})
FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
LIMITS: dict[str, int] = {
    "object_properties": 5000,  # object properties in the whole schema
    "nesting_depth": 10,  # levels of nested objects
    "string_chars": 120_000,  # property and definition names, enum and const values
    "enum_values": 1000,  # enum values in the whole schema
    "large_enum_values": 250,  # a string enum with more values than this ...
    "large_enum_chars": 15_000,  # ... may hold this many characters in all
}
LINT_NOTES = {
    "root": "the root schema must be an object, not {what}",
    "anyOf-root": "the root schema must not be `anyOf`: wrap the choice in a property",
    "required": "every property must be listed in `required`: {names} {verb} not; make an "
    'optional field nullable instead ("type": [..., "null"])',
    "additionalProperties": "`additionalProperties: false` must be set on every object",
    "refused": "strict mode does not support `{keyword}`: the API refuses the schema",
    "object_properties": "{count} object properties; strict mode allows {limit} in all",
    "nesting_depth": "objects nested {count} levels deep; strict mode allows {limit}",
    "string_chars": "{count} characters of property names, definition names, enum and "
    "const values; strict mode allows {limit} in all",
    "enum_values": "{count} enum values; strict mode allows {limit} in the whole schema",
    "large_enum": "a string enum of {count} values holds {chars} characters; past "
    "{values} values strict mode allows {limit}",
}


@dataclass(frozen=True, slots=True)
class ProfileLint:
    """A rule of the profile that the schema breaks: the API would refuse the schema."""

    path: str
    keyword: str
    note: str
    fix: Fix | None = None


@dataclass(frozen=True, slots=True)
class ProfileCheck:
    lints: tuple[ProfileLint, ...]
    unenforced: tuple[Unenforced, ...]

    @property
    def accepted(self) -> bool:
        """No documented rule would make the API refuse the schema."""
        return not self.lints


def check_openai(schema: Any, spans: Spans) -> ProfileCheck:
    """`schema` (already parsed from `spans.text`) against the strict-mode profile."""
    if not isinstance(schema, dict):
        what = "`true`" if schema is True else "`false`"
        return ProfileCheck((ProfileLint("$", "type", LINT_NOTES["root"].format(what=what)),), ())
    lints: list[ProfileLint] = _root(schema)
    unenforced: list[Unenforced] = []
    objects: set[Path] = set()
    for parts, node in subschemas(schema):
        if _is_object(node):
            objects.add(parts)
            lints += _object_rules(spans, parts, node)
        for key in node:
            if key in REFUSED:
                note = LINT_NOTES["refused"].format(keyword=key)
                lints.append(ProfileLint(path_text(parts), key, note))
            elif key not in SUPPORTED_KEYWORDS:
                note = "not among the keywords OpenAI documents for strict mode"
                unenforced.append(Unenforced(path_text(parts), key, note))
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt not in FORMATS:
            note = f"strict mode documents no format {fmt!r}"
            unenforced.append(Unenforced(path_text(parts), "format", note))
    lints += _limits(schema, objects)
    return ProfileCheck(tuple(lints), tuple(unenforced))


def _root(schema: dict[str, Any]) -> list[ProfileLint]:
    out = []
    if "anyOf" in schema:
        out.append(ProfileLint("$", "anyOf", LINT_NOTES["anyOf-root"]))
    kind = schema.get("type")
    if kind != "object":
        what = "untyped" if kind is None else f"of type {kind}"
        out.append(ProfileLint("$", "type", LINT_NOTES["root"].format(what=what)))
    return out


def _is_object(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return "object" in kinds or isinstance(node.get("properties"), dict)


def _object_rules(spans: Spans, parts: Path, node: dict[str, Any]) -> list[ProfileLint]:
    out = []
    where = path_text(parts)
    props = node.get("properties")
    names = list(props) if isinstance(props, dict) else []
    required = node.get("required")
    listed = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    missing = [n for n in names if n not in listed]
    if missing:
        shown = ", ".join(f'"{n}"' for n in missing)
        note = LINT_NOTES["required"].format(names=shown, verb="is" if len(missing) == 1 else "are")
        if isinstance(required, list):
            edit = replace_value(spans, (*parts, "required"), [*required, *missing])
        else:
            edit = add_member(spans, parts, "required", names, after="properties")
        fix = Fix('List every property in "required"', (edit,))
        out.append(ProfileLint(where, "required", note, fix))
    if node.get("additionalProperties") is not False:
        # Only where the object names its keys: on a bare object, or one whose `required`
        # names keys it does not define, false would change what it means or allow nothing.
        fix = None
        if names and set(listed) <= set(names):
            if "additionalProperties" in node:
                edit = replace_value(spans, (*parts, "additionalProperties"), False)
            else:
                edit = add_member(spans, parts, "additionalProperties", False, after="properties")
            fix = Fix('Set "additionalProperties": false', (edit,))
        note = LINT_NOTES["additionalProperties"]
        out.append(ProfileLint(where, "additionalProperties", note, fix))
    return out


def _limits(schema: dict[str, Any], objects: set[Path]) -> list[ProfileLint]:
    out = []
    properties = chars = enum_values = 0
    deepest: tuple[int, Path] = (0, ())
    for parts, node in subschemas(schema):
        if parts in objects:
            depth = sum(1 for i in range(len(parts) + 1) if parts[:i] in objects)
            deepest = max(deepest, (depth, parts))
        props = node.get("properties")
        if isinstance(props, dict):
            properties += len(props)
            chars += sum(len(name) for name in props)
        for key in ("$defs", "definitions"):
            if isinstance(node.get(key), dict):
                chars += sum(len(name) for name in node[key])
        if isinstance(node.get("const"), str):
            chars += len(node["const"])
        enum = node.get("enum")
        if isinstance(enum, list):
            enum_values += len(enum)
            strings = [v for v in enum if isinstance(v, str)]
            length = sum(len(v) for v in strings)
            chars += length
            big, most = LIMITS["large_enum_values"], LIMITS["large_enum_chars"]
            if len(strings) > big and length > most:
                note = LINT_NOTES["large_enum"].format(
                    count=len(strings), chars=length, values=big, limit=most
                )
                out.append(ProfileLint(path_text(parts), "enum", note))
    counts = {
        "object_properties": (properties, "$", "properties"),
        "nesting_depth": (deepest[0], path_text(deepest[1]), "properties"),
        "string_chars": (chars, "$", "properties"),
        "enum_values": (enum_values, "$", "enum"),
    }
    for name, (count, where, keyword) in counts.items():
        if count > LIMITS[name]:
            note = LINT_NOTES[name].format(count=count, limit=LIMITS[name])
            out.append(ProfileLint(where, keyword, note))
    return out
