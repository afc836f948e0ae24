"""Alternatives: anyOf, oneOf, if/then/else, not, dependencies, as choices among parts.

Each keyword becomes a `Choice`: one of its alternatives (lists of parts) must hold beside
the node's other parts. The compiler writes one grammar branch per combination; `arrange`
takes, for each choice, the first alternative the instance satisfies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from engine.grammar.compilers.maskscope.normalize import (
    ASSERTIONS,
    Choice,
    Context,
    Unsatisfiable,
    flatten,
    is_plain_not,
    merge,
)
from engine.grammar.compilers.maskscope.resolve import Part
from engine.grammar.compilers.maskscope.values import json_equal
from engine.schema.pointer import child_path

# Combinations one node may expand into; past that, further choices are dropped (reported).
MAX_LEAVES = 64
_MAX_NEGATED = 8  # alternatives `not` of one oneOf branch may expand into


def choices_of(ctx: Context, part: Part) -> list[Choice]:
    """The choices one part brings (its own keywords only, not its allOf/$ref targets)."""
    schema, path, base = part.schema, part.path, part.base
    out: list[Choice] = []
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            alts = [
                [Part(b, child_path(child_path(path, key), i), base)]
                for i, b in enumerate(branches)
            ]
            if key == "oneOf" and not _disjoint(ctx, alts):
                alts = _exactly_one(ctx, alts, path)
            out.append(Choice(key, path, alts))
    if "if" in schema and ("then" in schema or "else" in schema):
        cond = Part(schema["if"], child_path(path, "if"), base)
        then = Part(schema.get("then", True), child_path(path, "then"), base)
        other = Part(schema.get("else", True), child_path(path, "else"), base)
        negated = Part({"not": cond.schema}, cond.path, base)
        out.append(Choice("if", path, [[cond, then], [negated, other]]))
    negated = schema.get("not")
    if "not" in schema and not is_plain_not(negated):
        alts = negation(ctx, Part(negated, child_path(path, "not"), base))
        if alts is None:
            ctx.report(
                path, "not", "only not of type, const, enum, required and bounds is enforced"
            )
        else:
            out.append(Choice("not", path, alts))
    out += _dependencies(ctx, part)
    return out


def _exactly_one(ctx: Context, alts: list[list[Part]], path: str) -> list[list[Part]]:
    """oneOf's branches that may overlap: each branch and not the others, where `not` of
    every branch is small; else the branches as they are (anyOf), reported."""
    if len(alts) > 4 or not all(_small_negation(ctx, alt[0]) for alt in alts):
        ctx.report(path, "oneOf", "branches may overlap: enforced as anyOf")
        return alts
    return [
        alt
        + [
            Part({"not": other[0].schema}, other[0].path, other[0].base)
            for other in alts
            if other is not alt
        ]
        for alt in alts
    ]


def _small_negation(ctx: Context, part: Part) -> bool:
    """Whether `not` of the part is a few alternatives of plain keywords: negating a
    large subschema would expand into as many alternatives as it has properties, deeply."""
    found = negation(ctx.quiet(), part)
    if found is None or len(found) > _MAX_NEGATED:
        return False
    return all(
        is_plain_not(p.schema.get("not")) or "not" not in p.schema
        for alt in found
        for p in alt
        if isinstance(p.schema, dict)
    ) and all(_plain_properties(p.schema) for alt in found for p in alt)


def _plain_properties(schema: Any) -> bool:
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return True
    return all(
        not isinstance(v, dict) or "not" not in v or is_plain_not(v["not"]) for v in props.values()
    )


def _dependencies(ctx: Context, part: Part) -> list[Choice]:
    schema, path, base = part.schema, part.path, part.base
    deps: list[tuple[str, str, Any]] = []
    for key in ("dependentRequired", "dependentSchemas") + (
        ("dependencies",) if ctx.draft <= 7 else ()
    ):
        if isinstance(schema.get(key), dict):
            deps += [(key, name, need) for name, need in schema[key].items()]
    out = []
    for key, name, need in deps:
        at = child_path(child_path(path, key), name)
        absent = Part({"properties": {name: False}}, at, base)
        if isinstance(need, list):
            present = [Part({"required": [name, *need]}, at, base)]
        else:
            present = [Part({"required": [name]}, at, base), Part(need, at, base)]
        out.append(Choice(key, at, [[absent], present]))
    return out


def negation(ctx: Context, part: Part) -> list[list[Part]] | None:
    """Alternatives whose union is the complement of `part`, or None when not expressible."""
    schema, path, base = part.schema, part.path, part.base
    if isinstance(schema, bool):
        return [] if schema else [[]]
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("$ref"), str):
        target = ctx.resolver.resolve(schema["$ref"], ctx.resolver.base_of(schema, base), path)
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        if ctx.draft <= 7 or not any(k in ASSERTIONS for k in rest):
            return negation(ctx, target)
        left, right = negation(ctx, target), negation(ctx, Part(rest, path, base))
        return None if left is None or right is None else left + right
    alts: list[list[Part]] = []
    for key, value in schema.items():
        if key not in ASSERTIONS:
            continue
        found = _negate_keyword(ctx, key, value, schema, path, base)
        if found is None:
            return None
        alts += found
    return alts


def _negate_keyword(
    ctx: Context, key: str, value: Any, schema: dict[str, Any], path: str, base: str
) -> list[list[Part]] | None:
    def one(s: dict[str, Any], at: str = path) -> list[Part]:
        return [Part(s, at, base)]

    if key in ("type", "const", "enum"):
        return [one({"not": {key: value}})]
    if key == "not":  # not (not X) is X
        return [one(value, child_path(path, "not"))]
    if key == "pattern" and isinstance(value, str):
        return [one({"type": "string", "not": {"pattern": value}})]
    if key == "required" and isinstance(value, list):
        return [one({"type": "object", "properties": {name: False}}) for name in value]
    if key == "properties" and isinstance(value, dict):
        at = child_path(path, "properties")
        out = []
        for k, v in value.items():
            if v is True or (isinstance(v, dict) and not any(key in ASSERTIONS for key in v)):
                continue  # every value satisfies it: its negation adds no alternative
            negated = {"properties": {k: {"not": v}}} if v is not False else {}
            out.append(one({"type": "object", "required": [k], **negated}, child_path(at, k)))
        return out
    if key == "allOf" and isinstance(value, list):
        return [one({"not": v}, child_path(child_path(path, key), i)) for i, v in enumerate(value)]
    if key == "anyOf" and isinstance(value, list):
        return [
            [
                Part({"not": v}, child_path(child_path(path, key), i), base)
                for i, v in enumerate(value)
            ]
        ]
    flipped = _flip_bound(ctx, key, value, schema)
    return None if flipped is None else ([one(flipped)] if flipped else [])


_BOUNDS = {
    "minLength": ("string", "maxLength", -1),
    "maxLength": ("string", "minLength", 1),
    "minItems": ("array", "maxItems", -1),
    "maxItems": ("array", "minItems", 1),
    "minProperties": ("object", "maxProperties", -1),
    "maxProperties": ("object", "minProperties", 1),
    "minimum": ("number", "exclusiveMaximum", 0),
    "maximum": ("number", "exclusiveMinimum", 0),
    "exclusiveMinimum": ("number", "maximum", 0),
    "exclusiveMaximum": ("number", "minimum", 0),
}


def _flip_bound(
    ctx: Context, key: str, value: Any, schema: dict[str, Any]
) -> dict[str, Any] | None:
    """The bound that holds where `key: value` does not; {} when every value satisfies it."""
    if key not in _BOUNDS or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if (
        ctx.draft == 4
        and key.startswith(("minimum", "maximum"))
        and any(isinstance(schema.get(k), bool) for k in ("exclusiveMinimum", "exclusiveMaximum"))
    ):
        return None
    kind, other, shift = _BOUNDS[key]
    if shift == -1 and value <= 0:
        return {}
    return {"type": kind, other: value + shift}


def _disjoint(ctx: Context, alts: list[list[Part]]) -> bool:
    """Whether no value can satisfy two of the alternatives: told by types, values, or a
    required property whose allowed values differ."""
    sums = []
    for alt in alts:
        try:
            sums.append(_summary(ctx, alt))
        except (Unsatisfiable, Exception):
            return False
    return all(_apart(a, b) for i, a in enumerate(sums) for b in sums[i + 1 :])


def _summary(
    ctx: Context, alt: list[Part]
) -> tuple[frozenset[str], list[Any] | None, dict[str, Any]]:
    quiet = ctx.quiet()
    flat, _ = flatten(quiet, alt, set())
    merged = merge(quiet, flat)
    types = frozenset(_value_types(merged.values)) if merged.values is not None else merged.types
    required = {n for p in flat if isinstance(p.schema, dict) for n in p.schema.get("required", [])}
    keyed: dict[str, Any] = {}
    for p in flat:
        for name, sub in (
            (p.schema.get("properties") or {}).items() if isinstance(p.schema, dict) else []
        ):
            if name in required and isinstance(sub, dict):
                if "const" in sub:
                    keyed[name] = [sub["const"]]
                elif isinstance(sub.get("enum"), list):
                    keyed[name] = sub["enum"]
    return types, merged.values, keyed


def _apart(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    if not a[0] & b[0]:
        return True
    if a[1] is not None and b[1] is not None and not _overlap(a[1], b[1]):
        return True
    return any(not _overlap(a[2][k], b[2][k]) for k in a[2].keys() & b[2].keys())


def _overlap(xs: list[Any], ys: list[Any]) -> bool:
    return any(json_equal(x, y) for x in xs for y in ys)


def _value_types(values: list[Any]) -> set[str]:
    out = set()
    for v in values:
        if v is None:
            out.add("null")
        elif isinstance(v, bool):
            out.add("boolean")
        elif isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
            out.add("integer")
        elif isinstance(v, float):
            out.add("fraction")
        else:
            out.add({str: "string", dict: "object", list: "array"}[type(v)])
    return out


def leaves(
    ctx: Context,
    flat: list[Part],
    choices: list[Choice],
    pick: Callable[[Choice], list[int]] | None = None,
) -> Iterator[list[Part]]:
    """Every combination of one alternative per choice, as flat parts (choices found inside
    alternatives included). `pick` narrows a choice to the alternatives to follow."""
    yield from _walk(ctx, flat, choices, pick, 1)


def _walk(
    ctx: Context, flat: list[Part], todo: list[Choice], pick: Any, weight: int
) -> Iterator[list[Part]]:
    if not todo:
        yield flat
        return
    choice, rest = todo[0], todo[1:]
    if weight * max(1, len(choice.alternatives)) > MAX_LEAVES:
        ctx.report(choice.path, choice.keyword, "too many combinations to expand: not enforced")
        yield from _walk(ctx, flat, rest, pick, weight)
        return
    indices = pick(choice) if pick else range(len(choice.alternatives))
    for i in indices:
        done = {id(p.schema) for p in flat}
        more, found = flatten(ctx, choice.alternatives[i], done)
        yield from _walk(ctx, flat + more, rest + found, pick, weight * len(choice.alternatives))
