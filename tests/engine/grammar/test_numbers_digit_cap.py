"""A number's free digits are capped (rules.NUMBER_DIGITS): a small model cannot spend a whole
run on `180.000...`, and the digits a schema's own numbers need are still allowed."""

from __future__ import annotations

import json

import pytest

from engine.check.feed import feed_text, grammar_accepts
from engine.grammar.compile import CompiledSchema, compile_schema
from engine.grammar.compilers.maskscope.numbers import integer_rule, number_rule
from engine.grammar.compilers.maskscope.rules import NUMBER_DIGITS, Rules
from engine.grammar.judge.llama_parser import check_gbnf
from engine.masking import make_backend

CAP = NUMBER_DIGITS
LONGEST = "9" * CAP  # an integer part at the cap


def grammar(node: dict[str, object], fraction: bool) -> str:
    rules = Rules()
    text = rules.gbnf((number_rule if fraction else integer_rule)(rules, node, "$", []))
    check_gbnf(text)
    return text


@pytest.mark.parametrize("schema", [{"type": "integer"}, {"type": "number"}, {}])
def test_free_numbers_stop_at_the_cap(model, schema: dict[str, object]) -> None:
    gbnf = compile_schema(json.dumps(schema)).gbnf
    assert grammar_accepts(model, gbnf, LONGEST) and grammar_accepts(model, gbnf, "-" + LONGEST)
    assert not grammar_accepts(model, gbnf, LONGEST + "9")
    if schema.get("type") != "integer":
        assert grammar_accepts(model, gbnf, "180." + "0" * CAP)
        assert not grammar_accepts(model, gbnf, "180." + "0" * (CAP + 1))


# Bounded on one side only, so their automata loop: the loop is what the cap holds. Each
# text is valid by the schema; the first is within the cap, the second is far past it.
BIG, TOO_BIG = "2" + "0" * (CAP - 1), "2" + "0" * 3 * CAP
ZEROS, TOO_MANY_ZEROS = "2.5" + "0" * (CAP - 2), "2.5" + "0" * 3 * CAP
OPEN_ENDED = [
    ({"type": "integer", "minimum": 0}, [BIG], [TOO_BIG]),
    ({"type": "number", "minimum": 0}, [BIG, ZEROS], [TOO_BIG, TOO_MANY_ZEROS]),
    ({"type": "number", "minimum": 1.1}, [BIG, ZEROS], [TOO_BIG, TOO_MANY_ZEROS]),
    ({"type": "number", "minimum": 0, "multipleOf": 0.01}, [ZEROS], [TOO_MANY_ZEROS]),
    ({"type": "number", "multipleOf": 0.5}, [BIG, ZEROS], [TOO_BIG, TOO_MANY_ZEROS]),
    # fraction_rule's own automaton: a fraction that does not end in 0.
    (
        {"type": "number", "not": {"type": "integer"}, "minimum": 0},
        [BIG + ".5", "2." + "0" * (CAP - 2) + "5"],
        [TOO_BIG + ".5", "2." + "0" * 3 * CAP + "5"],
    ),
]


@pytest.mark.parametrize(("schema", "within", "past"), OPEN_ENDED)
def test_bounded_numbers_stop_at_the_cap_too(model, schema, within, past) -> None:
    gbnf = compile_schema(json.dumps(schema)).gbnf
    verdicts = [grammar_accepts(model, gbnf, t) for t in within + past]
    assert verdicts == [True] * len(within) + [False] * len(past)


@pytest.mark.parametrize(
    ("node", "fraction", "needs"),
    [
        ({"minimum": 10**30}, False, str(10**30 + 7)),
        ({"exclusiveMinimum": 0, "exclusiveMaximum": 1e-25}, True, "0." + "0" * 25 + "5"),
        ({"multipleOf": 1e-25}, True, "0." + "0" * 24 + "3"),
        ({"maximum": -(10**30)}, False, "-" + "5" * 31),
    ],
)
def test_digits_the_schema_needs_are_allowed(model, node, fraction: bool, needs: str) -> None:
    gbnf = grammar(node, fraction)
    assert len(needs.strip("-").replace("0.", "", 1)) > CAP  # past the cap
    assert grammar_accepts(model, gbnf, needs)
    # Sixty more zeros: still valid (a larger magnitude, or the same fraction), past the cap.
    assert not grammar_accepts(model, gbnf, needs + "0" * 3 * CAP)


def test_the_cap_costs_no_rules() -> None:
    """A loop capped as `[0-9]{0,19}`, not unrolled into one rule per digit."""
    assert grammar({"minimum": 1}, False).count("::=") == 1
    assert grammar({"minimum": 0}, True).count("::=") <= 2


def test_llamacpp_reads_the_cap_the_same(model) -> None:
    gbnf = grammar({"minimum": 0}, False)
    backend = make_backend("llamacpp", model, CompiledSchema(schema=True, gbnf=gbnf, text=""))
    try:
        verdicts = [feed_text(model, backend, t).accepted for t in (LONGEST, LONGEST + "9")]
    finally:
        backend.close()
    assert verdicts == [True, False]
