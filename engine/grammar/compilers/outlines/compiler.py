"""outlines-core's JSON Schema compiler: the regex that Outlines (and vLLM's `outlines`
guided-decoding backend) constrain a model with.

It is called as Outlines calls it: `build_regex_from_schema(schema)` with no whitespace
pattern (dottxt-ai/outlines, outlines/backends/outlines_core.py,
`get_json_schema_logits_processor`), so outlines-core's own `WHITESPACE`, `[ ]?`, applies;
it is passed here by name so that the choice shows.

outlines-core reads a subschema through one chain of branches (src/json_schema/parsing.rs,
`Parser::to_regex`): the first of `properties`, `allOf`, `anyOf`, `oneOf`, `prefixItems`,
`enum`, `const`, `$ref`, `type` present decides the regex, and the other keywords there are
skipped without a word. `_used` walks the schema the same way and names what was skipped.
Measured on outlines-core 0.2.14 by matching its regexes against instances that break one
keyword each (what `UNENFORCED` lists):

- never enforced: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
  `multipleOf`, `uniqueItems`, `contains`, `minContains`, `maxContains`, `minProperties`,
  `maxProperties` (only `maxProperties: 0` is), `propertyNames`, `dependentRequired`,
  `dependentSchemas`, `dependencies`, `not`, `if`/`then`/`else`, `required` on an object
  without `properties`;
- `format` `date-time`, `date`, `time` and `uri`: outlines-core's regexes for them
  (src/json_schema/types.rs) let through strings of other shapes (no time zone, February
  31st, a `<` in a URI's path); its `uuid` and `email` regexes hold;
- `oneOf` is written as `anyOf`: exactly-one is not checked;
- a keyword beside the branch that won (`type` beside `properties`, `maxLength` beside
  `$ref`, a `pattern` beside `minLength`) is skipped;
- `allOf` of more than one member writes its members one after another, so the output is
  not one JSON value.

It also restricts where the schema does not: objects with `properties` are closed, a
`pattern` is matched as the whole string, `$ref` recursion stops after 3 levels. Those cost
valid outputs, never soundness, and are not in the report. Schemas it refuses (boolean
subschemas, so `items: false` and `additionalProperties: false` without `properties`; an
unknown `format`, a lookaround in a pattern, a remote `$ref`) are a GrammarError with its message.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import outlines_core
from outlines_core.json_schema import WHITESPACE, build_regex_from_schema

from engine.errors import GrammarError
from engine.grammar.report import Unenforced
from engine.sandbox import run_isolated
from engine.schema.keywords import ANNOTATIONS
from engine.schema.parse import schema_validator
from engine.schema.pointer import local_target

# What Outlines uses when the caller names no whitespace pattern (see above): one optional
# space, no newline, so a small model cannot loop on whitespace.
OUTLINES_WHITESPACE = WHITESPACE

# Keywords that describe rather than constrain: the regex has nothing to enforce.
_ANNOTATIONS = ANNOTATIONS
# Outlines' own digit bounds, read by its number and integer branches.
_DIGITS = frozenset(
    {
        "minDigits", "maxDigits", "minDigitsInteger", "maxDigitsInteger",
        "minDigitsFraction", "maxDigitsFraction", "minDigitsExponent", "maxDigitsExponent",
    }
)  # fmt: skip
# The formats whose regex in outlines-core (src/json_schema/types.rs) lets through strings
# that are not of the format. Its `uuid` and `email` regexes allow only strings of the format
# (fewer than the format allows: lowercase uuids only).
_LOOSE_FORMATS = {
    "uri": "outlines-core's uri regex allows in a path, query or fragment characters that "
    'no URI holds (`"`, `<`, `{`, `\\`, non-ASCII)',
    "date-time": "outlines-core's date-time regex makes the time zone optional "
    "(`(Z)?`) and allows day 31 in every month",
    "date": "outlines-core's date regex allows day 31 in every month",
    "time": "outlines-core's time regex makes the time zone optional (`(Z)?`)",
}
# outlines-core writes an array's item regex twice (the first item, then the repeated ones),
# so the regex doubles with each nested array: 16 levels of `items` made 3.2 MB and took 10 s
# to check on 2 cores, 20 made 51 MB, 24 made 822 MB, and about 26 aborted the process asking
# for gigabytes (a Rust allocation failure, which no Python code can catch). Nested objects
# grow it by a constant, and `$ref` recursion stops after 3 levels.
MAX_ARRAY_NESTING = 16
COMPILE_LIMIT_S = 60.0  # the slowest dev-set schema that compiles takes about 11 s
_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_ARRAY_KEYWORDS = ("items", "prefixItems", "additionalItems", "contains", "unevaluatedItems")
_BRANCHES = ("properties", "allOf", "anyOf", "oneOf", "prefixItems", "enum", "const", "$ref")
_SKIPPED = "outlines-core skips it without a word"


def compile_outlines(schema: Any) -> tuple[str, tuple[Unenforced, ...]]:
    """outlines-core's regex for `schema` and the keywords that regex does not enforce.

    Raises GrammarError with outlines-core's own first line when it refuses the schema.
    """
    if (depth := _array_nesting(schema)) > MAX_ARRAY_NESTING:  # before a child is spent
        raise GrammarError(
            f"outlines-core's regex doubles with each nested array, and this schema nests "
            f"{depth} levels (more than {MAX_ARRAY_NESTING}): it would need gigabytes, "
            "so it is not built"
        )
    # outlines-core runs in a child with a time and memory limit: a `maxLength` of 1000 kept
    # its automaton busy for minutes, and deeper nesting aborted the process (engine/sandbox.py)
    regex = run_isolated(
        "engine.grammar.compilers.outlines.compiler", "regex_here", (schema,),
        what="outlines-core's compiler", limit_s=COMPILE_LIMIT_S,
    )  # fmt: skip
    return regex, tuple(outlines_unenforced(schema))


def regex_here(schema: Any) -> str:
    """outlines-core's regex for `schema`, checked, in this process (the sandbox's child)."""
    try:
        regex = build_regex_from_schema(json.dumps(schema), OUTLINES_WHITESPACE)
    except (ValueError, TypeError) as exc:
        raise GrammarError("outlines-core's compiler refused the schema", str(exc)) from None
    _check_regex(regex)
    return regex


def _array_nesting(schema: Any, root: Any = None, refs: frozenset[str] = frozenset()) -> int:
    """How many arrays deep an instance of `schema` can nest, by its keywords, following
    local `$ref`s (a ref already on the path is recursion, which outlines-core cuts)."""
    root = schema if root is None else root
    if isinstance(schema, list):
        return max((_array_nesting(s, root, refs) for s in schema), default=0)
    if not isinstance(schema, dict):
        return 0
    deepest = 0
    for key, value in schema.items():
        if key in ("enum", "const", "examples", "default"):
            continue
        if key in _NAMED and isinstance(value, dict):  # names, not keywords, map to schemas
            value = list(value.values())
        if key == "$ref" and isinstance(value, str) and value not in refs:
            value = local_target(root, value)
            inner = _array_nesting(value, root, refs | {schema["$ref"]})
        else:
            inner = _array_nesting(value, root, refs)
        deepest = max(deepest, inner + 1 if key in _ARRAY_KEYWORDS else inner)
    return deepest


def _check_regex(regex: str) -> None:
    """Build the regex's automaton over a vocabulary of the 256 single bytes: milliseconds
    where the model's vocabulary takes seconds, and the same regex engine, so a pattern it
    cannot hold (a lookaround) is refused here and not at the first run."""
    try:
        outlines_core.Index(regex, _byte_vocabulary())
    except ValueError as exc:
        if "incompatible with the regex" in str(exc):  # a byte vocabulary spells any text
            return
        raise GrammarError("outlines-core cannot build the schema's regex", str(exc)) from None


@cache
def _byte_vocabulary() -> outlines_core.Vocabulary:
    return outlines_core.Vocabulary(256, {bytes([b]): [b] for b in range(256)})


def outlines_unenforced(schema: Any) -> list[Unenforced]:
    """Every keyword in `schema` that outlines-core's regex skips, per subschema."""
    found: list[Unenforced] = []
    _walk(schema, "$", found)
    if isinstance(schema, dict):
        for key in ("$defs", "definitions"):
            defs = schema.get(key)
            if isinstance(defs, dict):
                for name, sub in defs.items():
                    _walk(sub, f"$.{key}.{name}", found)
    return found


def _branch(schema: dict[str, Any]) -> str | None:
    """The keyword whose branch outlines-core takes here; None for the type branch."""
    return next((key for key in _BRANCHES if key in schema), None)


def _used(schema: dict[str, Any]) -> tuple[set[str], str]:
    """The keywords outlines-core's branch reads here, and a word on why others are not."""
    branch = _branch(schema)
    if branch == "properties":
        # Closed always; `additionalProperties: false` is therefore held.
        used = {"properties", "required", "additionalProperties"}
        if schema.get("type") == "object":
            used.add("type")
        return used, "beside `properties` outlines-core reads only `required`"
    if branch is not None:
        return {branch}, f"`{branch}` alone decides the regex"
    kinds = schema.get("type")
    names = kinds if isinstance(kinds, list) else [kinds]
    used = {"type"}
    for name in names:
        used |= _type_keywords(name, schema)
    return used, _SKIPPED


def _type_keywords(kind: Any, schema: dict[str, Any]) -> set[str]:
    """What parse_type_string reads for one type name."""
    if kind == "string":
        if "minLength" in schema or "maxLength" in schema:
            return {"minLength", "maxLength"}
        return {"pattern"} if "pattern" in schema else {"format"}
    if kind in ("number", "integer"):
        return set(_DIGITS)
    if kind == "array":
        return {"items", "minItems", "maxItems"}
    if kind == "object":
        held = {"additionalProperties"}
        if schema.get("maxProperties") == 0:
            held.add("maxProperties")
        return held
    return set()


def _walk(schema: Any, path: str, found: list[Unenforced]) -> None:
    if not isinstance(schema, dict) or not schema:
        return
    used, note = _used(schema)
    branch = _branch(schema)
    if branch in ("enum", "const") and _values_fit(schema, branch):
        return  # every listed value passes the whole schema: nothing beside it can break
    for key in schema:
        if key not in used and key not in _ANNOTATIONS:
            found.append(Unenforced(path, key, note))
    if "format" in used and schema.get("format") in _LOOSE_FORMATS:
        found.append(Unenforced(path, "format", _LOOSE_FORMATS[schema["format"]]))
    if branch == "oneOf":
        found.append(Unenforced(path, "oneOf", "written as anyOf: exactly-one is not checked"))
    if branch == "allOf" and isinstance(schema["allOf"], list) and len(schema["allOf"]) > 1:
        found.append(
            Unenforced(path, "allOf", "its members are written one after another, not merged")
        )
    _walk_children(schema, used, path, found)


def _walk_children(
    schema: dict[str, Any], used: set[str], path: str, found: list[Unenforced]
) -> None:
    """Into the subschemas outlines-core itself reads from here."""
    for key in ("allOf", "anyOf", "oneOf", "prefixItems"):
        if key in used and isinstance(schema.get(key), list):
            for i, sub in enumerate(schema[key]):
                _walk(sub, f"{path}.{key}[{i}]", found)
    if "properties" in used and isinstance(schema.get("properties"), dict):
        for name, sub in schema["properties"].items():
            _walk(sub, f"{path}.properties.{name}", found)
    if "items" in used:
        _walk(schema.get("items"), f"{path}.items", found)
    if "properties" not in used and "additionalProperties" in used:
        _walk(schema.get("additionalProperties"), f"{path}.additionalProperties", found)


def _values_fit(schema: dict[str, Any], branch: str) -> bool:
    """True when each value the regex allows also passes the schema's other keywords."""
    values = schema[branch] if branch == "enum" else [schema[branch]]
    if not isinstance(values, list):
        return False
    try:
        validator = schema_validator(schema)
        return all(validator.is_valid(v) for v in values)
    except Exception:  # a subschema that cannot stand alone ($ref inside): report plainly
        return False
