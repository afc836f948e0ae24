"""Instances in the key order the Maskscope grammar writes objects in.

Key order carries no meaning in JSON, so `maskscope check` may reorder keys before feeding
an instance; this walks the schema exactly as the compiler does (the same merge, the same
alternatives) so that each object's keys come in the grammar's order. For anyOf, oneOf and
the like it follows the first alternative the instance satisfies.
"""

from __future__ import annotations

from typing import Any

from engine.grammar.compilers.maskscope import arrays, objects
from engine.grammar.compilers.maskscope.combinators import choices_of, leaves, negation
from engine.grammar.compilers.maskscope.normalize import Choice, Context, flatten
from engine.grammar.compilers.maskscope.resolve import Part, Resolver
from engine.grammar.compilers.maskscope.values import json_equal

_MAX_DEPTH = 200


def arrange(schema: Any, instance: Any) -> Any:
    """The same value with every object's keys in the order our grammar writes them."""
    ctx = Context(Resolver(schema), choices_of=choices_of)
    return _arrange(ctx, [ctx.resolver.root_part], instance, 0)


def _arrange(ctx: Context, parts: list[Part], value: Any, depth: int) -> Any:
    if not isinstance(value, dict | list) or depth > _MAX_DEPTH:
        return value
    flat, choices = flatten(ctx, parts, set())
    leaf = next(leaves(ctx, flat, choices, pick=lambda c: [_first_valid(ctx, c, value)]), flat)
    written = _as_enumerated(leaf, value)
    if written is not None:
        return written[0]
    if isinstance(value, dict):
        shape = objects.shape_of(ctx, leaf)
        order = [n for n in shape.names if n in value] + [k for k in value if k not in shape.names]
        return {k: _arrange(ctx, shape.parts_for(ctx, k), value[k], depth + 1) for k in order}
    return _arrange_items(ctx, arrays.shape_of(ctx, leaf), value, depth)


def _arrange_items(
    ctx: Context, shape: arrays.ArrayShape, items: list[Any], depth: int
) -> list[Any]:
    """Each item with the parts the grammar gives it: with contains, a hit takes the
    contains schema too and (where maxContains is counted) a miss takes its negation."""
    rests = [rest for _, rest in shape.prefixes if rest is not None]
    contains = shape.contains[0] if shape.contains and not shape.prefix_len else None
    counted = contains is not None and contains[2] is not None
    counted = counted and negation(ctx.quiet(), contains[0]) is not None  # type: ignore[index]
    hits = 0
    out = []
    for index, item in enumerate(items):
        parts = shape.item_parts(index) if index < shape.prefix_len else list(rests)
        if contains is not None:
            part, need, _ = contains
            if (counted or hits < need) and ctx.valid(part.schema, item):
                parts.append(part)
                hits += 1
            elif counted:
                parts.append(Part({"not": part.schema}, part.path, part.base))
        out.append(_arrange(ctx, parts, item, depth + 1))
    return out


def _first_valid(ctx: Context, choice: Choice, value: Any) -> int:
    for index, alternative in enumerate(choice.alternatives):
        if ctx.valid_all(alternative, value):
            return index
    return 0


def _as_enumerated(leaf: list[Part], value: Any) -> tuple[Any] | None:
    """The const/enum entry equal to the value, as written in the schema (its key order)."""
    for part in leaf:
        schema = part.schema
        if not isinstance(schema, dict):
            continue
        options = [schema["const"]] if "const" in schema else schema.get("enum")
        if isinstance(options, list):
            for option in options:
                if json_equal(option, value):
                    return (option,)
    return None
