"""A fuzzer for the editor's pipeline: random schemas over the supported keywords (valid or
not, contradictions and odd values included) and random edits of the bundled examples, as a
user types them. Each text goes through parse_schema, the problems list (lints included)
under a compiler, and the llguidance backend where it compiled. Nothing may raise but a
MaskscopeError, and every refusal and problem carries a one-line message.

tests/engine/grammar/test_properties.py holds the other property: that random schemas
accept their valid instances.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from engine.errors import MaskscopeError
from engine.masking import make_backend
from engine.schema.parse import parse_schema
from engine.settings import COMPILERS, DEFAULT_COMPILER, backends_for
from engine.workbench.problems import collect

EXAMPLES = sorted(Path(__file__).resolve().parents[2].glob("resources/examples/*.schema.json"))
FUZZ = settings(
    max_examples=20,
    deadline=None,
    database=None,  # no .hypothesis/ folder in the work tree
    derandomize=True,  # the same examples on every run: CI does not flake
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- random schemas ----------------------------------------------------------------------
NAMES = st.sampled_from(["a", "b", "x y", "é", 'q"t', "", "$ref", "0"])
NUMBERS = st.sampled_from([0, 1, -1, 2.5, 1e-9, 1e308, -(10**20), 10**20]) | st.integers(-5, 9)
SIZES = st.sampled_from([0, 1, 3, 1000, 10**9, -1, 2.5])  # -1 and 2.5: meta-schema errors
REGEXES = st.sampled_from(["^[a-z]+$", "(", "a{2,1}", "\\", "[", "^(a|b)*$", "(?P<x>a)", ".*"])
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
DATA = st.recursive(
    st.none() | st.booleans() | NUMBERS | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(NAMES, inner, max_size=2),
    max_leaves=3,
)
REFS = st.sampled_from(["#", "#/$defs/d", "#/$defs/missing", "#/definitions/d", "#/x/0", "#a"])
FORMATS = st.sampled_from(["date", "date-time", "email", "uuid", "ipv4", "uri", "nonsense"])


def _keywords(inner: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    """Every keyword the compilers know, with values valid or not for the meta-schema."""
    return {
        "type": TYPES | st.lists(TYPES, max_size=3) | st.just("strin"),
        "enum": st.lists(DATA, max_size=3),
        "const": DATA,
        "minimum": NUMBERS,
        "maximum": NUMBERS,
        "exclusiveMinimum": NUMBERS,
        "exclusiveMaximum": NUMBERS | st.just(True),  # draft-04's boolean form
        "multipleOf": NUMBERS,
        "minLength": SIZES,
        "maxLength": SIZES,
        "pattern": REGEXES,
        "format": FORMATS,
        "properties": st.dictionaries(NAMES, inner, max_size=3),
        "patternProperties": st.dictionaries(REGEXES, inner, max_size=1),
        "additionalProperties": st.booleans() | inner,
        "required": st.lists(NAMES, max_size=3),
        "propertyNames": inner,
        "minProperties": SIZES,
        "maxProperties": SIZES,
        "dependentRequired": st.dictionaries(NAMES, st.lists(NAMES, max_size=2), max_size=1),
        "dependentSchemas": st.dictionaries(NAMES, inner, max_size=1),
        "items": st.booleans() | inner | st.lists(inner, max_size=2),
        "prefixItems": st.lists(inner, max_size=2),
        "contains": inner,
        "minContains": SIZES,
        "maxContains": SIZES,
        "minItems": SIZES,
        "maxItems": SIZES,
        "uniqueItems": st.booleans(),
        "anyOf": st.lists(inner, max_size=3),
        "oneOf": st.lists(inner, max_size=3),
        "allOf": st.lists(inner, max_size=2),
        "not": inner,
        "if": inner,
        "then": inner,
        "else": inner,
        "$ref": REFS,
        "unevaluatedProperties": st.booleans(),
        "description": st.text(max_size=5),
    }


def _node(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keywords = _keywords(inner)
    names = st.lists(st.sampled_from(sorted(keywords)), min_size=1, max_size=4, unique=True)
    return names.flatmap(lambda ks: st.fixed_dictionaries({k: keywords[k] for k in ks}))


SUBSCHEMAS = st.recursive(st.booleans() | st.just({}), _node, max_leaves=6)


@st.composite
def schema_texts(draw: st.DrawFn) -> str:
    root = draw(_node(SUBSCHEMAS))
    if draw(st.booleans()):
        root["$defs"] = {"d": draw(SUBSCHEMAS)}
    if draw(st.integers(0, 3)) == 0:
        root["$schema"] = draw(
            st.sampled_from(
                [
                    "https://json-schema.org/draft/2020-12/schema",
                    "http://json-schema.org/draft-07/schema#",
                    "http://json-schema.org/draft-04/schema#",
                ]
            )
        )
    return json.dumps(root, ensure_ascii=False)


# -- random edits -----------------------------------------------------------------------
ALPHABET = st.sampled_from([*'{}[]":,0123456789.-eE tfnrula\\\n', "true", "null", '""'])
VALUE_SWAPS = st.sampled_from(
    [
        ('"string"', '"integer"'),
        ('"object"', '"array"'),
        ("false", "true"),
        ('"required"', '"requird"'),
        ('"#/$defs/', '"#/$defs/x'),
        ("[", "[]"),
        ('"maxLength": ', '"maxLength": -'),
        ('"pattern": "', '"pattern": "('),
    ]
)


@st.composite
def edited_texts(draw: st.DrawFn) -> str:
    """One of the examples after a few keystrokes: deletes, inserts and replaces of a
    character, a keyword's value swapped, or the text cut short."""
    text = draw(st.sampled_from(EXAMPLES)).read_text(encoding="utf-8")
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["delete", "insert", "replace", "swap", "truncate"]))
        if action == "delete":
            text = text[:where] + text[where + 1 :]
        elif action == "insert":
            text = text[:where] + draw(ALPHABET) + text[where:]
        elif action == "replace":
            text = text[:where] + draw(ALPHABET) + text[where + 1 :]
        elif action == "swap":
            old, new = draw(VALUE_SWAPS)
            text = text.replace(old, new, 1)
        else:
            text = text[:where]
    return text


# -- the pipeline ------------------------------------------------------------------------


def _one_line(message: str) -> bool:
    return bool(message.strip()) and "\n" not in message


def _through_the_pipeline(model: Any, text: str, compiler: str, backend: str) -> None:
    note(f"{compiler} on {backend}: {text!r}")
    try:
        parse_schema(text)
    except MaskscopeError as exc:
        assert _one_line(str(exc)), repr(str(exc))
    report = collect(text, compiler, backend, prompt="Fill in the form.")  # never raises
    for problem in report.problems:
        assert _one_line(problem.message), problem
    event("runs" if report.runs else (report.problems[0].kind if report.problems else "none"))
    if not report.runs:
        return
    try:
        made = make_backend(backend, model, report.compiled)
    except MaskscopeError as exc:
        assert _one_line(str(exc)), repr(str(exc))
        return
    made.close()


@FUZZ
@given(text=schema_texts(), compiler=st.sampled_from(COMPILERS))
def test_random_schemas_raise_nothing_but_a_maskscope_error(model, text, compiler):
    _through_the_pipeline(model, text, compiler, "llguidance")


@settings(FUZZ, max_examples=40)
@given(
    text=edited_texts(),
    compiler=st.sampled_from(COMPILERS),
    # The GBNF backends: the outlines pair's index build (0.25-45 s a schema on the 262k
    # vocabulary) is too slow to fuzz; tests/engine/test_outlines.py runs it.
    backend=st.sampled_from(backends_for(DEFAULT_COMPILER)),
)
def test_random_edits_of_the_examples_raise_nothing_but_a_maskscope_error(
    model, text, compiler, backend
):
    _through_the_pipeline(model, text, compiler, backend)


@pytest.mark.soak
@settings(FUZZ, max_examples=1000)
@given(text=schema_texts() | edited_texts(), compiler=st.sampled_from(COMPILERS))
def test_the_pipeline_fuzzed_at_length(model, text, compiler):
    _through_the_pipeline(model, text, compiler, "llguidance")
