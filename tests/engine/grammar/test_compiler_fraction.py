"""Numbers that must not be integers (from `not` or a oneOf branch), with bounds, exactly."""

from __future__ import annotations

import pytest

from engine.check.feed import grammar_accepts
from engine.grammar.compilers.maskscope.compiler import compile_to_gbnf


@pytest.mark.parametrize(
    "schema, accepted, rejected",
    [
        # oneOf: an integer, or at least 2 - but not both.
        (
            {"oneOf": [{"type": "integer"}, {"minimum": 2}]},
            ["1", "2.5", "-7", "100.25"],
            ["3", "1.5"],
        ),
        (
            {"type": "number", "maximum": -1, "not": {"type": "integer"}},
            ["-1.5", "-2.01"],
            ["-2", "-0.5"],
        ),
    ],
)
def test_non_integers_within_bounds(model, schema, accepted, rejected):
    grammar = compile_to_gbnf(schema)
    assert grammar.unenforced == ()
    for text in accepted:
        assert grammar_accepts(model, grammar.gbnf, text), text
    for text in rejected:
        assert not grammar_accepts(model, grammar.gbnf, text), text
