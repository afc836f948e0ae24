"""The numeric GBNF means what its automaton means, to llama.cpp's parser and to llguidance."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.check.feed import feed_text, grammar_accepts
from engine.grammar.compile import CompiledSchema
from engine.grammar.compilers.maskscope.normalize import Unsatisfiable
from engine.grammar.compilers.maskscope.numbers import integer_rule, number_rule
from engine.grammar.compilers.maskscope.rules import Rules
from engine.grammar.judge.llama_parser import check_gbnf
from engine.grammar.report import Unenforced
from engine.masking import make_backend
from engine.masking.llguidance import gbnf_to_lark
from tests.engine.grammar.test_numbers_language import (
    bound_nodes,
    decimals,
    integers,
    meets,
    small,
    written,
)


def grammar(node: dict[str, object], fraction: bool) -> str:
    """The whole grammar for one number, which llama.cpp's own parser must take."""
    rules, gaps = Rules(), list[Unenforced]()
    body = (number_rule if fraction else integer_rule)(rules, node, "$", gaps)
    text = rules.gbnf(body)
    check_gbnf(text)
    return text


def grammar_says(model, node: dict[str, object], fraction: bool, text: str) -> bool:
    try:
        gbnf = grammar(node, fraction)
    except Unsatisfiable:
        return False
    return grammar_accepts(model, gbnf, text)


# Each grammar check builds a matcher and feeds a text through the real tokenizer (~ms).
few = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@few
@given(bound_nodes(integers), integers)
def test_integer_bounds(model, node: dict[str, object], value: int) -> None:
    assert grammar_says(model, node, False, str(value)) == meets(node, Fraction(value))


@few
@given(bound_nodes(decimals), decimals)
def test_number_bounds(model, node: dict[str, object], value: Fraction) -> None:
    assert grammar_says(model, node, True, written(value)) == meets(node, value)


@few
@given(st.integers(2, 30), small, bound_nodes(small))
def test_integer_multiples_with_bounds(model, step: int, value: int, bounds: dict) -> None:
    node = {"multipleOf": step, **bounds}
    assert grammar_says(model, node, False, str(value)) == meets(node, Fraction(value))


NODES = [
    ({"minimum": 0}, False),
    ({"minimum": -2, "maximum": 2147483647}, False),
    ({"minimum": 1.1}, True),
    ({"exclusiveMaximum": 3.0}, True),
    ({"minimum": 78.55, "maximum": 79.3333}, True),
    ({"minimum": 1, "maximum": 65535, "multipleOf": 7}, False),
    ({"multipleOf": 0.01}, True),
    ({"multipleOf": 1.5}, True),
    ({"minimum": 0, "maximum": 10**9, "multipleOf": 123456789}, False),
    ({"minimum": -2206368037000, "maximum": 4100000000000}, False),
]


@pytest.mark.parametrize(("node", "fraction"), NODES)
def test_both_engines_read_the_grammar(node: dict[str, object], fraction: bool) -> None:
    gbnf_to_lark(grammar(node, fraction))


@pytest.mark.parametrize(
    "node", [{"minimum": 5, "maximum": 3}, {"minimum": 1, "maximum": 6, "multipleOf": 7}]
)
def test_no_integer_in_range_is_unsatisfiable(node: dict[str, object]) -> None:
    with pytest.raises(Unsatisfiable, match="no integer meets"):
        grammar(node, False)


def test_written_values_from_the_test_suite(model) -> None:
    """The JSON-Schema-Test-Suite's own numeric cases, each written as `check` writes it."""
    cases = [
        ({"minimum": 1.1}, "2.6", True),
        ({"minimum": 1.1}, "1.1", True),
        ({"minimum": 1.1}, "0.6", False),
        ({"minimum": -2}, "-2", True),
        ({"minimum": -2}, "-2.0001", False),
        ({"maximum": 300}, "299.97", True),
        ({"maximum": 300}, "300.5", False),
        ({"exclusiveMinimum": 1.1}, "1.1", False),
        ({"exclusiveMaximum": 3.0}, "2.2", True),
        ({"multipleOf": 1.5}, "-4.5", True),
        ({"multipleOf": 1.5}, "35", False),
        ({"multipleOf": 0.0001}, "0.0075", True),
        ({"multipleOf": 0.0001}, "0.00751", False),
    ]
    for node, text, valid in cases:
        assert grammar_accepts(model, grammar(node, True), text) == valid, (node, text)


LLAMACPP_CASES = [
    ({"minimum": -2, "maximum": 2147483647}, False, ["-2", "2147483647", "-3", "2147483648"]),
    ({"minimum": 78.55, "maximum": 79.3333}, True, ["78.55", "79.3333", "78.5", "79.33331"]),
    ({"minimum": 1, "maximum": 65535, "multipleOf": 7}, False, ["7", "65534", "0", "65535"]),
]


@pytest.mark.parametrize(("node", "fraction", "texts"), LLAMACPP_CASES)
def test_llamacpp_reads_it_the_same(model, node: dict, fraction: bool, texts: list[str]) -> None:
    backend = make_backend(
        "llamacpp", model, CompiledSchema(schema=True, gbnf=grammar(node, fraction), text="")
    )
    try:
        verdicts = [feed_text(model, backend, t).accepted for t in texts]
    finally:
        backend.close()
    assert verdicts == [meets(node, Fraction(t)) for t in texts] == [True, True, False, False]


def test_the_same_bounds_twice_share_their_rules() -> None:
    rules = Rules()
    node = {"minimum": -2, "maximum": 2147483647}
    first = integer_rule(rules, node, "$.a", [])
    once = rules.gbnf(first)
    assert integer_rule(rules, dict(node), "$.b", []) == first
    assert rules.gbnf(first) == once
