"""Property tests of Maskscope's compiler: every valid instance is accepted.

Over-constraint (a grammar refusing a valid instance) is the compiler's worst outcome, so the
properties are about valid instances only: hypothesis-jsonschema generates them, jsonschema
confirms each one, and the instance is written as `maskscope check` writes it (one line, the
keys in the grammar's order) and fed token by token through llguidance. Three sources:
the MaskBench schemas in tests/data/maskbench/, random schemas over the keywords the compiler
enforces (a schema it refuses must have no valid instance), and recursive schemas.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, note, reject, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument, Unsatisfiable
from hypothesis.internal.conjecture import utils as conjecture_utils
from hypothesis_jsonschema import _from_schema, from_schema
from jsonschema.exceptions import SchemaError

from engine.check.feed import feed_text
from engine.check.write import write
from engine.errors import GrammarError
from engine.grammar.compile import compile_schema
from engine.grammar.compilers.maskscope.arrange import arrange
from engine.grammar.compilers.maskscope.rules import NUMBER_DIGITS
from engine.masking import make_backend
from engine.schema.validate import validation_issues

MASKBENCH = Path(__file__).resolve().parents[2] / "data" / "maskbench"
FEW = settings(
    max_examples=10,
    deadline=None,
    database=None,  # no .hypothesis/ folder in the work tree
    derandomize=True,  # the same examples on every run: CI does not flake
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)


class _StepByStep:
    """hypothesis-jsonschema 0.23 (the newest) draws an object's keys with Hypothesis's
    private `many(...).more()`, which Hypothesis 6.17x replaced by iteration in a with-block
    (AttributeError on every object schema). This drives the new form the old way."""

    def __init__(self, data: Any, **sizes: Any) -> None:
        self._many = conjecture_utils.many(data, **sizes)
        self._many.__enter__()
        self._steps = iter(self._many)

    def more(self) -> bool:
        if next(self._steps, self) is self:
            self._many.__exit__(None, None, None)
            return False
        return True

    def reject(self, why: str | None = None) -> None:
        self._many.reject(why)


if not hasattr(conjecture_utils.many, "more"):
    _from_schema.cu = SimpleNamespace(many=_StepByStep)  # its only use of the module


def _schema(name: str) -> Any:
    return json.loads((MASKBENCH / name).read_text(encoding="utf-8"))["schema"]


def _strategy(schema: Any) -> st.SearchStrategy[Any]:
    """hypothesis-jsonschema's instances; an example it fails to make (it refuses some
    schemas it rewrote itself, such as `items: []`, and asserts on others, such as an object
    with `minProperties` 1 whose names it rewrote to none) is dropped, never counted as
    passing."""
    strategy = from_schema(copy.deepcopy(schema))  # it rewrites the schema in place
    try:
        if strategy.is_empty:  # it found the schema unsatisfiable
            return strategy
    except InvalidArgument:  # it made an invalid strategy (minLength above maxLength)
        return st.nothing()

    @st.composite
    def tolerant(draw: st.DrawFn) -> Any:
        try:
            return draw(strategy)
        except (InvalidArgument, SchemaError, AssertionError) as exc:
            reject()
            raise AssertionError("unreachable") from exc

    return tolerant()


def _valid(value: Any, schema: Any) -> bool:
    try:
        return not validation_issues(value, schema)
    except Exception:  # a pattern Python's re cannot read: no verdict, so no evidence
        return False


def _refusal(model, backend, schema: Any, value: Any) -> str | None:
    """None when the grammar accepts `value` as check writes it, else what happened."""
    assume(_within_the_digit_cap(value))
    text = write(arrange(schema, value))
    note(f"written: {text}")
    try:
        fed = feed_text(model, backend, text)
    except GrammarError as exc:  # llguidance refusing a token its own mask allowed
        return f"{text}: backend error: {exc}"
    return None if fed.accepted else f"{text}: {fed.where}"


def _within_the_digit_cap(value: Any) -> bool:
    """Whether every number in `value` is written within the digits the compiler allows on
    purpose (rules.NUMBER_DIGITS, numbers.py): hypothesis likes 1e20, which has 21."""
    if isinstance(value, dict | list):
        return all(map(_within_the_digit_cap, value.values() if isinstance(value, dict) else value))
    if isinstance(value, bool) or not isinstance(value, int | float):
        return True
    whole, _, fraction = write(value).lstrip("-").partition(".")
    return len(whole) <= NUMBER_DIGITS and len(fraction) <= NUMBER_DIGITS


# Their instances run to thousands of tokens (a minute between them): `make soak` runs them.
HEAVY = {"Github_ultra---o41389.json", "JsonSchemaStore---bounded-context.json"}


@pytest.mark.slow  # about a minute: some instances run to hundreds of tokens
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.soak) if name in HEAVY else name
        for name in sorted(p.name for p in MASKBENCH.glob("*.json"))
    ],
)
def test_generated_instances_of_maskbench_schemas_are_accepted(model, name):
    schema = _schema(name)
    strategy = _strategy(schema)
    compiled = compile_schema(json.dumps(schema, ensure_ascii=False), "maskscope")
    backend = make_backend("llguidance", model, compiled)

    @settings(FEW, max_examples=3)  # 33 schemas: the random schemas below take more
    @given(strategy)
    def accepted(value: Any) -> None:
        assume(_valid(value, schema))  # hypothesis-jsonschema's rare invalid instance
        assert _refusal(model, backend, schema, value) is None

    try:
        accepted()
    except Unsatisfiable:
        pytest.skip("hypothesis-jsonschema generated no instance that jsonschema accepts")
    finally:
        backend.close()


# Random schemas over the keywords the compiler enforces. Patterns mean what Python's `re`
# finds (jsonschema's judge): \d \w \s are Unicode, `$` also matches before a final newline.
KEYS = st.sampled_from(["a", "b", "c", "x1", "k y", "é", 'q"t', "\\", "\n"])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-20, 20)
    | st.floats(-1000, 1000, allow_nan=False)
    # Written 1, 0, 0.0000001, 25 and 17 zeros (within the digit cap), 25 and 19 zeros.
    | st.sampled_from([1.0, -0.0, 1e-7, 2.5e18, 2.5e20])
    | st.text(alphabet='ab"\\\n\x00\x1f é\u2028😀', max_size=3)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(KEYS, inner, max_size=2),
    max_leaves=3,
)
PATTERNS = st.sampled_from(
    [
        *["^[a-z]+$", "^[0-9]{2,4}$", "ab", "^(foo|bar)", "[A-Z]", "^x?y+$", "^[^a]*$"],
        *["^(ab)*$", r"^\d+$", r"^\w{1,3}$", r"^.{2}$", r"^a\s?b", r"^[^\\/:*?\"<>|]+$"],
    ]
)
BOUNDS = st.integers(-30, 30) | st.sampled_from([-(10**12), 10**12 + 7])
FRACTIONS = st.sampled_from([-2.5, -0.125, 0.5, 3.75, 1e-5])
LENGTHS = st.integers(0, 6) | st.sampled_from([40, 999, 1001])  # llama.cpp's repeat cap: 1000


@st.composite
def integer_schemas(draw: st.DrawFn) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "integer"}
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if draw(st.integers(0, 3)) == 0:
            node[key] = draw(BOUNDS | FRACTIONS)
    if draw(st.booleans()):
        node["multipleOf"] = draw(st.integers(1, 12) | st.sampled_from([7919, 10**6, 2.0]))
    return node


@st.composite
def number_schemas(draw: st.DrawFn) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "number"}
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if draw(st.integers(0, 3)) == 0:
            node[key] = draw(BOUNDS | FRACTIONS)
    if draw(st.integers(0, 3)) == 0:
        node["multipleOf"] = draw(st.sampled_from([0.5, 0.25, 3, 0.1]))
    return node


@st.composite
def string_schemas(draw: st.DrawFn) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for key in ("minLength", "maxLength"):
        if draw(st.booleans()):
            node[key] = draw(LENGTHS)
    if draw(st.integers(0, 2)) == 0:
        node["pattern"] = draw(PATTERNS)
    return node


LEAVES = st.one_of(
    st.just({}),
    st.sampled_from([{"type": "boolean"}, {"type": "null"}]),
    integer_schemas(),
    number_schemas(),
    string_schemas(),
    st.builds(lambda v: {"const": v}, VALUES),
    st.builds(lambda vs: {"enum": vs}, st.lists(VALUES, min_size=1, max_size=4)),
    st.builds(
        lambda ts: {"type": ts},
        st.lists(
            st.sampled_from(["integer", "string", "null", "array"]),
            min_size=1,
            max_size=3,
            unique=True,
        ),
    ),
)


def _objects(inner: st.SearchStrategy[Any], wide: bool) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        props = draw(st.dictionaries(KEYS, inner, max_size=3))
        node: dict[str, Any] = {"type": "object", "properties": props}
        names = [*props, "zz"]  # a required name `properties` need not declare
        required = draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
        if required:
            node["required"] = required
        extra = draw(st.integers(0, 3))
        if extra < 3:
            node["additionalProperties"] = [False, True, draw(inner)][extra]
        if wide:
            node.update(draw(_object_extras(inner, names)))
        return node

    return build()


@st.composite
def _object_extras(draw: st.DrawFn, inner: st.SearchStrategy[Any], names: list[str]) -> Any:
    extras: dict[str, Any] = {}
    for key in ("minProperties", "maxProperties"):
        if draw(st.integers(0, 2)) == 0:
            extras[key] = draw(st.integers(0, 3))
    if draw(st.integers(0, 2)) == 0:
        extras["patternProperties"] = {"^x": draw(inner)}
    if draw(st.integers(0, 3)) == 0:
        extras["propertyNames"] = draw(st.sampled_from([{"pattern": "^[a-z]+$"}, {"maxLength": 1}]))
    if draw(st.integers(0, 2)) == 0:
        extras["dependentRequired"] = {
            draw(st.sampled_from(names)): draw(st.lists(KEYS, max_size=2, unique=True))
        }
    return extras


def _arrays(inner: st.SearchStrategy[Any], wide: bool) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        node: dict[str, Any] = {"type": "array"}
        if draw(st.booleans()):
            node["prefixItems"] = draw(st.lists(inner, min_size=1, max_size=2))
        shape = draw(st.integers(0, 2))
        if shape == 1:
            node["items"] = draw(inner)
        elif shape == 2 and "prefixItems" in node:
            node["items"] = False
        for key in ("minItems", "maxItems"):
            if draw(st.booleans()):
                node[key] = draw(st.integers(0, 3) | st.just(1001))
        if wide and draw(st.integers(0, 2)) == 0:
            node["contains"] = draw(inner)
            if draw(st.booleans()):
                node["minContains" if draw(st.booleans()) else "maxContains"] = draw(
                    st.integers(0, 2)
                )
        if wide and draw(st.integers(0, 3)) == 0:
            node["uniqueItems"] = True
        return node

    return build()


FORMATS = ["date", "time", "date-time", "email", "hostname", "ipv4", "ipv6", "uri"]
WIDE_LEAVES = st.one_of(
    st.builds(lambda f: {"type": "string", "format": f}, st.sampled_from(FORMATS)),
    st.builds(lambda s: {"not": s}, LEAVES),
)


def _schemas(refs: list[str], wide: bool) -> st.SearchStrategy[Any]:
    leaves = LEAVES | WIDE_LEAVES if wide else LEAVES
    if refs:
        leaves |= st.sampled_from([{"$ref": f"#/$defs/{r}"} for r in refs])

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        branches = st.lists(inner, min_size=1, max_size=3)
        nodes = [
            _objects(inner, wide),
            _arrays(inner, wide),
            st.builds(lambda bs: {"anyOf": bs}, branches),
            st.builds(lambda bs: {"allOf": bs}, st.lists(inner, min_size=1, max_size=2)),
        ]
        if wide:
            nodes += [
                st.builds(lambda bs: {"oneOf": bs}, branches),
                st.builds(lambda i, t, e: {"if": i, "then": t, "else": e}, inner, inner, inner),
            ]
        return st.one_of(nodes)

    return st.recursive(leaves, extend, max_leaves=6)


@st.composite
def random_schemas(draw: st.DrawFn, wide: bool = False) -> dict[str, Any]:
    """A 2020-12 schema; `$defs` may refer to earlier ones, the root to any (no recursion:
    hypothesis-jsonschema cannot generate for recursive references). `wide` adds the rest
    of the keywords the compiler enforces at least in part. One in three is written in
    draft-07's words instead (array-form `items`, `additionalItems`, `dependencies`)."""
    defs: dict[str, Any] = {}
    for name in draw(st.sampled_from([[], ["d0"], ["d0", "d1"]])):
        defs[name] = draw(_schemas(list(defs), wide))
    root = draw(_schemas(list(defs), wide))
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **root}
    if defs:
        schema["$defs"] = defs
    return draft7_form(schema) if draw(st.integers(0, 2)) == 0 else schema


def draft7_form(node: Any) -> Any:
    """The same schema in draft-07's words, which hypothesis-jsonschema reads: it does not
    know `prefixItems` or `dependentRequired`, and would otherwise generate instances that
    ignore them (`minContains`/`maxContains` have no draft-07 form: jsonschema filters)."""
    if isinstance(node, list):
        return [draft7_form(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: draft7_form(v) for k, v in node.items() if k not in ("const", "enum", "$schema")}
    for k in ("const", "enum"):
        if k in node:
            out[k] = node[k]
    if "prefixItems" in node:
        out["items"] = draft7_form(node["prefixItems"])
        out["additionalItems"] = draft7_form(node.get("items", True))
        del out["prefixItems"]
    if "dependentRequired" in node:
        out["dependencies"] = out.pop("dependentRequired")
    if "$schema" in node:
        out["$schema"] = "http://json-schema.org/draft-07/schema#"
    return out


def _instances(schema: Any) -> st.SearchStrategy[list[Any]]:
    """One to three instances hypothesis-jsonschema makes for the schema (none when it finds
    the schema unsatisfiable)."""
    strategy = _strategy(draft7_form(schema))
    return st.just([]) if strategy.is_empty else st.lists(strategy, min_size=1, max_size=3)


RANDOM = settings(FEW, max_examples=40)


def _compiles_and_accepts(model: Any, schema: Any, data: st.DataObject) -> None:
    text = json.dumps(schema, ensure_ascii=False)
    note(f"schema: {text}")
    instances = _instances(schema)
    try:
        compiled = compile_schema(text, "maskscope")
    except GrammarError as exc:
        # Only a real contradiction may refuse to compile: then no instance validates.
        found = [v for v in data.draw(instances) if _valid(v, schema)]
        assert not found, f"{exc}, yet {found[0]!r} is valid"
        event("a contradiction")
        return
    backend = make_backend("llguidance", model, compiled)
    try:
        fed = [v for v in data.draw(instances) if _valid(v, schema)]
        event(f"compiled, {len(fed)} instances fed")
        for value in fed:
            assert _refusal(model, backend, schema, value) is None
    finally:
        backend.close()


@RANDOM
@given(schema=random_schemas(), data=st.data())
def test_random_schemas_compile_and_accept_their_instances(model, schema, data):
    _compiles_and_accepts(model, schema, data)


@RANDOM
@given(schema=random_schemas(wide=True), data=st.data())
def test_random_schemas_with_every_keyword_accept_their_instances(model, schema, data):
    _compiles_and_accepts(model, schema, data)


# Recursive references, which hypothesis-jsonschema cannot generate for: instances are built
# by hand, and jsonschema still confirms each one.
NESTED_LISTS = {
    "$defs": {
        "t": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"$ref": "#/$defs/t"}]}}
    },
    "$ref": "#/$defs/t",
}
TREE = {
    "type": "object",
    "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#"}}},
    "required": ["v"],
    "additionalProperties": False,
}
RECURSIVE = [
    (
        NESTED_LISTS,
        st.recursive(
            st.lists(st.integers()), lambda inner: st.lists(st.integers() | inner), max_leaves=8
        ),
    ),
    (
        TREE,
        st.recursive(
            st.builds(lambda v: {"v": v}, st.integers()),
            lambda inner: st.builds(
                lambda v, k: {"kids": k, "v": v}, st.integers(), st.lists(inner, max_size=3)
            ),
            max_leaves=8,
        ),
    ),
]


@pytest.mark.parametrize(("schema", "instances"), RECURSIVE, ids=["nested lists", "tree"])
def test_recursive_schemas_accept_their_instances(model, schema, instances):
    compiled = compile_schema(json.dumps(schema), "maskscope")
    backend = make_backend("llguidance", model, compiled)

    @FEW
    @given(instances)
    def accepted(value: Any) -> None:
        assert _valid(value, schema)  # the premise: the strategy makes valid instances
        assert _refusal(model, backend, schema, value) is None

    try:
        accepted()
    finally:
        backend.close()
