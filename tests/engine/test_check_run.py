"""One schema checked in-process: compile, feed each instance, judge, explain.

A hand-written grammar stands in for the compiler where a test needs a grammar that is
wrong in a known way; the real compilers are checked on the fixed sample in tests/data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import engine.grammar.compile as compile_module
from engine.check.inputs import FileInstance, SchemaCase, load_cases
from engine.check.run import check_case, key_order, no_verdict
from engine.check.write import llamacpp_order, properties_order
from engine.grammar.compile import CompiledSchema
from engine.grammar.report import Unenforced

DATA = Path(__file__).resolve().parents[1] / "data"
DIGITS = "root ::= [0-9]+"


def _grammar(monkeypatch, gbnf: str, gaps: tuple[Unenforced, ...] = ()) -> None:
    def fake(text: str, compiler: str = "maskscope") -> CompiledSchema:
        return CompiledSchema(schema=None, gbnf=gbnf, text=text, unenforced=gaps, compiler=compiler)

    monkeypatch.setattr(compile_module, "compile_schema", fake)


def _case(schema, *values) -> SchemaCase:
    return SchemaCase("t.json", None, schema, tuple(FileInstance(v, None) for v in values))


def test_a_valid_instance_the_grammar_rejects_fails_the_schema(model, monkeypatch):
    _grammar(monkeypatch, 'root ::= "1"')
    result = check_case(model, _case({"type": "integer"}, 1, 2, "x"), "maskscope", "llguidance")
    assert result.compiled and result.failed and not result.passed
    one, two, text = result.verdicts
    assert one.agrees and text.agrees
    assert two.over_constrained and two.at == 0 and "rejected at character 0" in two.where
    assert (result.valid_ok, result.valid_n, result.invalid_rej, result.invalid_n) == (1, 2, 1, 1)


def test_an_invalid_instance_accepted_without_a_gap_is_unexplained(model, monkeypatch):
    _grammar(monkeypatch, DIGITS)
    result = check_case(
        model, _case({"type": "integer", "maximum": 5}, 3, 7), "maskscope", "llamacpp"
    )
    assert result.unexplained == 1 and result.failed
    assert result.verdicts[1].errors == ("7 is greater than the maximum of 5",)


def test_the_compilers_report_explains_it(model, monkeypatch):
    gap = Unenforced("$", "maximum", "not in the grammar")
    _grammar(monkeypatch, DIGITS, (gap,))
    result = check_case(
        model, _case({"type": "integer", "maximum": 5}, 3, 7), "maskscope", "llguidance"
    )
    assert result.unexplained == 0 and not result.failed and not result.passed
    assert result.verdicts[1].explained_by == (gap,)


def test_the_instances_own_key_order_is_tried_when_the_grammars_is_refused(model, monkeypatch):
    # The grammar wants b before a; llamacpp's order would write a first (both required).
    _grammar(monkeypatch, 'root ::= "{\\"b\\": 2, \\"a\\": 1}"')
    schema = {"properties": {"a": {}, "b": {}}, "required": ["a", "b"]}
    result = check_case(model, _case(schema, {"b": 2, "a": 1}), "llamacpp", "llguidance")
    assert result.passed and result.verdicts[0].text == '{"a": 1, "b": 2}'


def test_a_schema_that_does_not_compile_keeps_jsonschemas_counts(model):
    # llama-server's converter refuses a boolean subschema ("schema must be an object").
    case = _case({"type": "object", "properties": {"error": True}}, {"error": 1}, [1])
    result = check_case(model, case, "llamacpp", "llguidance")
    assert not result.compiled and result.failed
    assert "converter failed" in result.error
    assert result.valid_n + result.invalid_n == len(case.instances) and result.valid_ok == 0
    line = result.to_json()
    assert list(line) == [
        "file", "compiler", "backend", "compiled", "error", "valid_ok", "valid_n",
        "invalid_rej", "invalid_n", "unexplained", "ms",
    ]  # fmt: skip


@pytest.mark.parametrize("backend", ["llguidance", "llamacpp"])
def test_a_real_compiler_on_a_suite_group(model, backend):
    case = load_cases(str(DATA / "json-schema-test-suite" / "required.json"))[1]
    result = check_case(model, case, "llamacpp", backend)
    assert result.group == "required default validation" and result.passed
    assert result.to_json()["group"] == result.group


def test_a_crashed_schema_counts_nothing_accepted():
    result = no_verdict(
        _case({"maximum": 5}, 3, 7), "llamacpp", "llamacpp", "crashed: killed by SIGSEGV"
    )
    assert result.crashed and result.failed and (result.valid_n, result.invalid_n) == (1, 1)


def test_each_compiler_gets_its_key_order():
    assert key_order("llamacpp") is llamacpp_order
    assert key_order("llguidance") is properties_order


def test_a_schema_jsonschema_cannot_judge_is_an_error_not_a_verdict(model, monkeypatch):
    _grammar(monkeypatch, 'root ::= "\\"" [a-z]* "\\""')
    schema = {"type": "string", "pattern": "\\p{L}"}  # Python's re has no \p
    result = check_case(model, _case(schema, "a"), "maskscope", "llguidance")
    assert result.compiled and result.failed and result.verdicts == ()
    assert result.error.startswith("jsonschema cannot judge instance 1: bad escape \\p")


def test_a_compiler_that_raises_a_bug_gives_no_grammar_and_a_message(model, monkeypatch):
    def broken(text: str, compiler: str = "maskscope") -> CompiledSchema:
        raise KeyError("items")

    monkeypatch.setattr(compile_module, "compile_schema", broken)
    result = check_case(model, _case({"type": "integer"}, 1), "maskscope", "llguidance")
    assert not result.compiled and not result.crashed
    assert result.error == "the maskscope compiler failed: KeyError: 'items'"
