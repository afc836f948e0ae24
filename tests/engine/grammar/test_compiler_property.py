"""Property test: random schemas over keywords the compiler enforces compile, and values
valid for them are accepted as `arrange` writes them.

Each schema comes with a strategy for its valid values (hypothesis-jsonschema 0.23 fails
on objects with this hypothesis version, "'many' object has no attribute 'more'"); jsonschema
confirms each value is valid, so the pairing cannot silently drift.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from engine.check.feed import grammar_accepts
from engine.grammar.compilers.maskscope.arrange import arrange
from engine.grammar.compilers.maskscope.compiler import compile_to_gbnf
from engine.grammar.compilers.maskscope.values import json_text

Pair = tuple[dict[str, Any], st.SearchStrategy[Any]]
_NAMES = ["a", "b", "id", "x-y", "name"]
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["", "s", "é"]))
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=4,
)
_TYPED = {
    "string": st.text(max_size=4),
    "integer": st.integers(-100, 100),
    "boolean": st.booleans(),
    "null": st.none(),
    "number": st.integers(-9, 9) | st.floats(-10, 10, allow_nan=False).map(lambda f: round(f, 2)),
}


def _leaves() -> st.SearchStrategy[Pair]:
    typed = st.sampled_from(sorted(_TYPED)).map(lambda t: ({"type": t}, _TYPED[t]))
    enums = st.lists(_SCALARS, min_size=1, max_size=4).map(
        lambda vs: ({"enum": vs}, st.sampled_from(vs))
    )
    return typed | enums | st.just(({}, _JSON))


def _composite(inner: st.SearchStrategy[Pair]) -> st.SearchStrategy[Pair]:
    return _objects(inner) | _arrays(inner) | st.lists(inner, min_size=2, max_size=3).map(_any_of)


def _objects(inner: st.SearchStrategy[Pair]) -> st.SearchStrategy[Pair]:
    @st.composite
    def build(draw: st.DrawFn) -> Pair:
        names = draw(st.lists(st.sampled_from(_NAMES), unique=True, max_size=3))
        props = {n: draw(inner) for n in names}
        required = [n for n in names if draw(st.booleans())]
        extra = draw(st.sampled_from(["absent", "false", "schema"]))
        schema = {
            "type": "object",
            "properties": {n: p[0] for n, p in props.items()},
            "required": required,
        }
        extras: st.SearchStrategy[dict[str, Any]] = st.just({})
        if extra == "false":
            schema["additionalProperties"] = False
        else:
            rest = draw(inner) if extra == "schema" else ({}, _JSON)
            if extra == "schema":
                schema["additionalProperties"] = rest[0]
            extras = st.dictionaries(st.sampled_from(["zz", "q", "é k"]), rest[1], max_size=2)
        optional = {n: p[1] for n, p in props.items() if n not in required}
        values = st.fixed_dictionaries({n: props[n][1] for n in required}, optional=optional)
        return schema, st.builds(lambda v, e: {**e, **v}, values, extras)

    return build()


def _arrays(inner: st.SearchStrategy[Pair]) -> st.SearchStrategy[Pair]:
    def make(item: Pair, low: int, more: int) -> Pair:
        schema = {"type": "array", "items": item[0], "minItems": low, "maxItems": low + more}
        return schema, st.lists(item[1], min_size=low, max_size=low + more)

    return st.builds(make, inner, st.integers(0, 2), st.integers(0, 2))


def _any_of(branches: list[Pair]) -> Pair:
    return {"anyOf": [b[0] for b in branches]}, st.one_of([b[1] for b in branches])


SCHEMAS = st.recursive(_leaves(), _composite, max_leaves=6)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), pair=SCHEMAS)
def test_valid_values_of_random_schemas_are_accepted(model, data, pair):
    schema, values = pair
    instance = data.draw(values)
    assert Draft202012Validator(schema).is_valid(instance)
    grammar = compile_to_gbnf(schema)
    assert grammar_accepts(model, grammar.gbnf, json_text(arrange(schema, instance)))
