"""Schema text: syntax errors with line:column, meta-schema checks, the draft in $schema."""

from __future__ import annotations

import pytest

from engine.errors import GrammarError, SchemaInvalidError, SchemaSyntaxError
from engine.grammar.compile import compile_schema
from engine.grammar.compilers.llamacpp.converter import schema_to_gbnf
from engine.grammar.judge.llama_parser import check_gbnf
from engine.schema.parse import parse_schema


def test_json_syntax_error_reports_line_and_column():
    with pytest.raises(SchemaSyntaxError) as info:
        parse_schema('{\n  "type": "object",\n  "properties": {,}\n}')
    assert (info.value.line, info.value.column) == (3, 18)
    assert "line 3, column 18" in str(info.value)


def test_empty_text_is_a_syntax_error():
    with pytest.raises(SchemaSyntaxError):
        parse_schema("   ")


def test_meta_schema_violation_names_the_place():
    with pytest.raises(SchemaInvalidError) as info:
        parse_schema('{"type": "object",\n "properties": {"a": {"type": 5}}}')
    assert "$.properties.a.type" in str(info.value)
    assert info.value.line == 2


def test_draft_07_schema_is_checked_against_draft_07():
    # `items` as a list of schemas is draft-07's tuple form; 2020-12 (the default) spells
    # that `prefixItems` and requires `items` to be one schema.
    tuple_items = '"items": [{"type": "string"}, {"type": "integer"}]'
    parse_schema(f'{{"$schema": "http://json-schema.org/draft-07/schema#", {tuple_items}}}')
    with pytest.raises(SchemaInvalidError, match=r"\$\.items"):
        parse_schema(f"{{{tuple_items}}}")


def test_false_schema_is_refused():
    with pytest.raises(SchemaInvalidError):
        parse_schema("false")


def test_llama_cpp_grammar_errors_carry_its_message():
    with pytest.raises(GrammarError) as info:
        check_gbnf("root ::= value\n")
    assert "Undefined rule identifier 'value'" in str(info.value)
    assert "error parsing grammar" in info.value.detail


def test_grammar_rejection_does_not_leak_to_stderr(capfd):
    with pytest.raises(GrammarError):
        check_gbnf('root ::= "unterminated')
    assert "error parsing grammar" not in capfd.readouterr().err


def test_empty_schema_means_any_json_value():
    gbnf = schema_to_gbnf({})
    root = next(line for line in gbnf.splitlines() if line.startswith("root ::="))
    assert "object" not in root or "|" in root


def test_compile_examples():
    from engine.examples import examples

    for ex in examples():
        compiled = compile_schema(ex.schema_text)
        assert "root ::=" in compiled.gbnf
