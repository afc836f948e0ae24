"""A subschema as a conjunction of parts: `$ref` and `allOf` followed, keywords merged.

A node of the schema is compiled as the list of every subschema that applies to the same
value (the node itself, what its `$ref` points to, its `allOf` entries, and so on down),
in document order. Alternatives (`anyOf`, `oneOf`, `if`, `not`, dependencies) are left as
`Choice`s for the compiler to expand; scalar keywords are merged here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.errors import GrammarError, PatternTimeoutError
from engine.grammar.compilers.maskscope.resolve import Part, Resolver
from engine.grammar.compilers.maskscope.values import json_equal, unique_values
from engine.grammar.report import Unenforced
from engine.schema.parse import schema_validator
from engine.schema.pointer import child_path

ATOMS = frozenset({"null", "boolean", "object", "array", "string", "integer", "fraction"})
TYPE_ATOMS: dict[str, frozenset[str]] = {
    "null": frozenset({"null"}),
    "boolean": frozenset({"boolean"}),
    "object": frozenset({"object"}),
    "array": frozenset({"array"}),
    "string": frozenset({"string"}),
    "integer": frozenset({"integer"}),
    "number": frozenset({"integer", "fraction"}),
    "any": ATOMS,  # draft-03, which some schemas still name
}
# Keywords no grammar here enforces; reported wherever they appear.
UNSUPPORTED = ("unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef")


class Unsatisfiable(Exception):
    """No value satisfies the subschema at `path` (internal: becomes a GrammarError)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{reason} at {path}")
        self.path = path
        self.reason = reason


@dataclass
class Choice:
    """One of `alternatives` (each a list of parts) must hold as well."""

    keyword: str
    path: str
    alternatives: list[list[Part]]


@dataclass
class Context:
    """What every step of one compilation shares: refs, the report, a validator."""

    resolver: Resolver
    gaps: list[Unenforced] = field(default_factory=list)
    choices_of: Callable[[Context, Part], list[Choice]] | None = None

    def __post_init__(self) -> None:
        self._validator = schema_validator(self.resolver.root)

    @property
    def draft(self) -> int:
        return self.resolver.draft

    def report(self, path: str, keyword: str, note: str) -> None:
        self.gaps.append(Unenforced(path, keyword, note))

    def quiet(self) -> Context:
        """The same document with no choices expanded and nothing reported: for side
        questions such as whether oneOf's branches overlap."""
        return Context(self.resolver)

    def valid(self, schema: Any, value: Any) -> bool:
        """jsonschema's verdict for `value` against a subschema of this document. A verdict
        that cannot be had (a pattern past its time limit, a ref the validator cannot
        resolve) is a GrammarError saying the value was not checked: answering "valid"
        would put a value in the grammar that no check allowed."""
        try:
            return bool(self._validator.evolve(schema=schema).is_valid(value))
        except PatternTimeoutError as exc:
            raise GrammarError(f"not checked: {_shown(value)} against its schema: {exc}") from None
        except Exception as exc:
            raise GrammarError(
                f"not checked: {_shown(value)} against its schema, the validator failed "
                f"({type(exc).__name__}: {exc})"
            ) from None

    def valid_all(self, parts: Iterable[Part], value: Any) -> bool:
        return all(self.valid(p.schema, value) for p in parts)


def _shown(value: Any) -> str:
    """A value as a message shows it: JSON, cut short."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def flatten(ctx: Context, parts: Iterable[Part], done: set[int]) -> tuple[list[Part], list[Choice]]:
    """The parts that apply to one value, refs and allOf followed, and their choices.

    `done` holds the parts already taken (by id), which are skipped: A and A is A, and a
    recursive `allOf` ends.
    """
    flat: list[Part] = []
    choices: list[Choice] = []

    def visit(part: Part) -> None:
        schema = part.schema
        if id(schema) in done or schema is True:
            return
        done.add(id(schema))
        if not isinstance(schema, dict):
            flat.append(part)
            return
        part = Part(schema, part.path, ctx.resolver.base_of(schema, part.base))
        ref = schema.get("$ref")
        if isinstance(ref, str) and ctx.draft <= 7:
            visit(ctx.resolver.resolve(ref, part.base, part.path))  # siblings are ignored
            return
        flat.append(part)
        for key in UNSUPPORTED:
            if key in schema:
                ctx.report(part.path, key, "not supported by this compiler")
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                visit(ctx.resolver.resolve(value, part.base, part.path))
            elif key == "allOf" and isinstance(value, list):
                for i, sub in enumerate(value):
                    visit(Part(sub, child_path(child_path(part.path, "allOf"), i), part.base))
        if ctx.choices_of is not None:
            choices.extend(ctx.choices_of(ctx, part))

    for part in parts:
        visit(part)
    return flat, choices


def is_plain_not(schema: Any) -> bool:
    """`not` of one type, const, enum or pattern: merged here rather than expanded."""
    if not isinstance(schema, dict):
        return False
    keys = [k for k in schema if k in ASSERTIONS]
    return len(keys) == 1 and keys[0] in ("type", "const", "enum", "pattern")


@dataclass
class Merged:
    """The scalar keywords of a conjunction, merged."""

    types: frozenset[str]
    values: list[Any] | None  # const/enum: the values all parts allow, None when unbounded
    excluded: list[Any]  # from `not` const/enum
    number: dict[str, Any]
    string: dict[str, Any]
    path: str
    unmatched: list[str] = field(default_factory=list)  # patterns strings must not match
    # (path, pattern) of the patterns past string["pattern"] that strings must match too
    more_patterns: list[tuple[str, str]] = field(default_factory=list)


def merge(ctx: Context, flat: list[Part]) -> Merged:
    """Types intersected, bounds tightened, enums intersected; contradictions raise."""
    path = flat[0].path if flat else "$"
    types, values, excluded = set(ATOMS), None, []
    unmatched: list[str] = []
    more_patterns: list[tuple[str, str]] = []
    number: dict[str, Any] = {}
    string: dict[str, Any] = {}
    for part in flat:
        schema = part.schema
        if schema is False or not isinstance(schema, dict):
            raise Unsatisfiable(part.path, "the schema `false` allows nothing")
        types &= _types_of(schema)
        values = _values_of(schema, values)
        negated = schema.get("not")
        if is_plain_not(negated):
            types -= _negated_types(negated)
            excluded += _values_of(negated, None) or []
            if isinstance(negated.get("pattern"), str):
                unmatched.append(negated["pattern"])
        _merge_number(ctx, part, number)
        _merge_string(ctx, part, string, more_patterns)
    if values is not None and not values:
        raise Unsatisfiable(path, "the enum/const values of its parts have none in common")
    if not types:
        raise Unsatisfiable(path, "its `type` constraints have no type in common")
    types = _drop_contradicted(path, types, number, string)
    return Merged(
        frozenset(types), values, excluded, number, string, path, unmatched, more_patterns
    )


def _types_of(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type")
    if declared is None:
        return set(ATOMS)
    names = declared if isinstance(declared, list) else [declared]
    return {atom for name in names if isinstance(name, str) for atom in TYPE_ATOMS.get(name, ())}


def _negated_types(negated: dict[str, Any]) -> set[str]:
    if "type" not in negated:
        return set()
    return _types_of(negated)


def _values_of(schema: dict[str, Any], values: list[Any] | None) -> list[Any] | None:
    own = None
    if "const" in schema:
        own = [schema["const"]]
    elif isinstance(schema.get("enum"), list):
        own = unique_values(schema["enum"])
    if own is None:
        return values
    if values is None:
        return own
    return [v for v in values if any(json_equal(v, w) for w in own)]


_LOWER = ("minimum", "exclusiveMinimum")
_UPPER = ("maximum", "exclusiveMaximum")


def _merge_number(ctx: Context, part: Part, number: dict[str, Any]) -> None:
    schema = part.schema
    bounds = {k: schema[k] for k in _LOWER + _UPPER if _is_number(schema.get(k))}
    if ctx.draft == 4:  # boolean exclusive flags turn their sibling bound exclusive
        for flag, (plain, exclusive) in (
            ("exclusiveMinimum", _LOWER),
            ("exclusiveMaximum", _UPPER),
        ):
            bounds.pop(flag, None)
            if schema.get(flag) is True and plain in bounds:
                bounds[exclusive] = bounds.pop(plain)
    for key, value in bounds.items():
        tighter = max if key in _LOWER else min
        number[key] = tighter(number[key], value) if key in number else value
    step = schema.get("multipleOf")
    if _is_number(step) and step > 0:
        old = number.get("multipleOf")
        if old is None or old == step:
            number["multipleOf"] = step
        elif isinstance(old, int) and isinstance(step, int):
            number["multipleOf"] = math.lcm(old, step)
        else:
            ctx.report(part.path, "multipleOf", "only one multipleOf per value is enforced")


def _merge_string(
    ctx: Context, part: Part, string: dict[str, Any], more_patterns: list[tuple[str, str]]
) -> None:
    schema = part.schema
    for key, tighter in (("minLength", max), ("maxLength", min)):
        value = as_count(schema.get(key))
        if value is not None:
            string[key] = tighter(string[key], value) if key in string else value
    for key in ("pattern", "format"):
        value = schema.get(key)
        if not isinstance(value, str):
            continue
        if key not in string:
            string[key] = value
        elif string[key] == value:
            continue
        elif key == "pattern":  # the compiler intersects them where it can, or reports
            if value not in (p for _, p in more_patterns):
                more_patterns.append((part.path, value))
        else:
            ctx.report(part.path, key, f"only one {key} per string is enforced")


def _drop_contradicted(
    path: str, types: set[str], number: dict[str, Any], string: dict[str, Any]
) -> set[str]:
    """The types left once those whose bounds contradict are removed: a string keyword
    constrains only strings, so `{"type": ["string", "null"], "minLength": 5,
    "maxLength": 3}` still allows null. Unsatisfiable only when no type is left."""
    reasons: list[str] = []
    low, high = string.get("minLength", 0), string.get("maxLength")
    if high is not None and low > high and "string" in types:
        types = types - {"string"}
        reasons.append(f"minLength {low} is above maxLength {high}")
    gap = _number_gap(number)
    if gap is not None and types & {"integer", "fraction"}:
        types = types - {"integer", "fraction"}
        reasons.append(gap)
    if not types:
        raise Unsatisfiable(path, reasons[0] if reasons else "no type is left")
    return types


def _number_gap(number: dict[str, Any]) -> str | None:
    """Why no number meets the bounds, or None when some may."""
    lows = [(number[k], k == "exclusiveMinimum") for k in _LOWER if k in number]
    highs = [(number[k], k == "exclusiveMaximum") for k in _UPPER if k in number]
    for lo, lo_open in lows:
        for hi, hi_open in highs:
            if lo > hi or (lo == hi and (lo_open or hi_open)):
                return f"no number lies between {lo} and {hi}"
    return None


def as_count(value: Any) -> int | None:
    """A length or count bound as an int (2.0 counts as 2, as JSON Schema says); None when
    the value is no such bound."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return int(value) if float(value).is_integer() else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# Keywords that constrain a value (the rest are annotations or unknown, which JSON Schema
# ignores too).
ASSERTIONS = frozenset(
    {
        "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "maxItems",
        "minItems", "uniqueItems", "maxContains", "minContains", "contains", "items",
        "prefixItems", "additionalItems", "maxProperties", "minProperties", "required",
        "properties", "patternProperties", "additionalProperties", "propertyNames",
        "dependentRequired", "dependentSchemas", "dependencies", "allOf", "anyOf", "oneOf",
        "not", "if", "then", "else", "$ref", "unevaluatedProperties", "unevaluatedItems",
        "$dynamicRef", "$recursiveRef",
    }
)  # fmt: skip
