"""A format is enforced only where the schema's draft asserts it, as jsonschema judges it."""

from __future__ import annotations

from engine.check.feed import grammar_accepts
from engine.grammar.compilers.maskscope.compiler import compile_to_gbnf
from engine.schema.validate import validation_issues

DRAFT4 = "http://json-schema.org/draft-04/schema#"


def test_draft_04_date_is_an_annotation(model):
    schema = {"$schema": DRAFT4, "type": "string", "format": "date"}
    assert not validation_issues("not a date", schema)  # jsonschema: draft-04 has no date
    grammar = compile_to_gbnf(schema)
    assert grammar_accepts(model, grammar.gbnf, '"not a date"')
    assert [gap.keyword for gap in grammar.unenforced] == ["format"]


def test_2020_12_date_is_enforced(model):
    schema = {"type": "string", "format": "date"}
    grammar = compile_to_gbnf(schema)
    assert grammar_accepts(model, grammar.gbnf, '"2026-12-01"')
    assert not grammar_accepts(model, grammar.gbnf, '"not a date"')
    assert grammar.unenforced == ()
