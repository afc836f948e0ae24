"""collect(): syntax, every meta-schema error, grammar refusals and contradictions, unenforced
and over-constrained keywords, each located in the schema text."""

from __future__ import annotations

import json
import time

import pytest

from engine.workbench.enforcement import keyword_offset
from engine.workbench.locate import locate
from engine.workbench.problems import Problem, Report, collect


def _only(report: Report, kind: str) -> list[Problem]:
    return [p for p in report.problems if p.kind == kind]


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_a_syntax_error_is_one_problem_at_its_position() -> None:
    text = '{\n  "type": "string",\n  "maxLength" 5\n}'
    report = collect(text, "maskscope", "llguidance")
    assert [(p.kind, p.severity, p.line, p.column) for p in report.problems] == [
        ("syntax", "error", 3, 15)
    ]
    assert "Expecting ':' delimiter" in report.problems[0].message
    assert report.compiled is None and not report.runs


def test_an_empty_text_is_a_syntax_error() -> None:
    report = collect("  ", "maskscope", "llguidance")
    assert [p.kind for p in report.errors()] == ["syntax"]


def test_every_meta_schema_error_is_reported_where_it_is() -> None:
    text = """{
  "type": "objekt",
  "properties": {
    "a": {"minLength": -1},
    "b": {"type": "string", "maxLength": "5"}
  },
  "required": "a"
}"""
    report = collect(text, "maskscope", "llguidance")
    found = {(p.path, p.line, p.column) for p in report.problems}
    assert found == {
        ("$.type", 2, 3),
        ("$.properties.a.minLength", 4, 11),
        ("$.properties.b.maxLength", 5, 29),
        ("$.required", 7, 3),
    }
    assert all(p.kind == "schema" and p.severity == "error" for p in report.problems)
    type_error = next(p for p in report.problems if p.path == "$.type")
    assert "'objekt' is not one of" in type_error.message  # the branch meant, not "any of"
    assert [p.line for p in report.problems] == sorted(p.line for p in report.problems)
    assert report.compiled is None


@pytest.mark.parametrize("compiler", ["maskscope", "llamacpp"])
@pytest.mark.parametrize(
    ("schema", "path", "words"),
    [
        ({"enum": []}, "$", "none in common"),
        ({"not": {}}, "$", "allows no value"),
        ({"allOf": [{"type": "string"}, {"type": "integer"}]}, "$", "no type in common"),
        ({"type": "string", "minLength": 5, "maxLength": 2}, "$", "minLength 5 is above"),
        (
            {
                "type": "object",
                "properties": {"n": {"type": "array", "minItems": 3, "maxItems": 1}},
                "required": ["n"],
            },
            "$.properties.n",
            "at least 3 items",
        ),
    ],
)
def test_a_contradiction_is_an_error_under_any_compiler(
    compiler: str, schema: dict, path: str, words: str
) -> None:
    text = json.dumps(schema, indent=2)
    report = collect(text, compiler, "llamacpp")
    errors = report.errors()
    assert [(p.kind, p.path) for p in errors] == [("grammar", path)]
    assert words in errors[0].message and not report.runs
    if path != "$":
        assert errors[0].line == _line_of(text, '"n"')


def test_the_llguidance_compiler_on_the_llamacpp_backend_is_an_error() -> None:
    report = collect('{"type": "string"}', "llguidance", "llamacpp")
    assert [p.kind for p in report.errors()] == ["grammar"]
    assert "llguidance backend only" in report.errors()[0].message
    assert collect('{"type": "string"}', "llguidance", "llguidance").runs


def test_a_valid_schema_runs_and_reports_its_compile_time() -> None:
    report = collect('{"type": "string", "maxLength": 4}', "maskscope", "llguidance")
    assert report.runs and report.errors() == ()
    assert report.compile_ms is not None and report.compile_ms > 0


UNENFORCED = """{
  "type": "object",
  "properties": {
    "age": {"type": "number", "minimum": 0, "maximum": 150},
    "when": {"type": "string", "format": "date"}
  },
  "required": ["age"],
  "additionalProperties": false
}"""


def test_unenforced_keywords_are_located_at_their_key() -> None:
    report = collect(UNENFORCED, "llamacpp", "llamacpp")
    gaps = {(p.keyword, p.path, p.line, p.column) for p in report.unenforced()}
    line = _line_of(UNENFORCED, '"minimum"')
    column = UNENFORCED.splitlines()[line - 1].index('"minimum"') + 1
    assert ("minimum", "$.properties.age", line, column) in gaps
    assert {g[0] for g in gaps} >= {"minimum", "maximum"}
    assert all(p.reason and p.severity == "warning" for p in report.unenforced())
    # Our compiler enforces all of it.
    assert collect(UNENFORCED, "maskscope", "llguidance").unenforced() == ()


def test_llamacpp_closes_objects_left_open_reported_as_overconstraint() -> None:
    text = '{\n  "type": "object",\n  "properties": {"a": {"type": "string", "maxLength": 3}}\n}'
    over = collect(text, "llamacpp", "llamacpp").overconstrained()
    assert [(p.keyword, p.path, p.line) for p in over] == [("additionalProperties", "$", 3)]
    assert collect(text, "maskscope", "llguidance").overconstrained() == ()
    closed = text.replace('"type": "object",', '"type": "object", "additionalProperties": false,')
    assert collect(closed, "llamacpp", "llamacpp").overconstrained() == ()


def test_llamacpp_allof_overconstraint_names_allof() -> None:
    schema = {"allOf": [{"properties": {"a": {"type": "integer"}}}]}
    over = collect(json.dumps(schema), "llamacpp", "llamacpp").overconstrained()
    assert [p.keyword for p in over] == ["allOf"]


def _chars(text: str) -> list[int]:
    return list(range(len(text)))


def test_the_output_bound_and_max_tokens_below_it() -> None:
    text = '{"type": "string", "maxLength": 10}'
    report = collect(text, "maskscope", "llguidance", tokenize=_chars, max_tokens=11)
    assert report.output_bound == 12  # two quotes and ten characters
    assert [p.id for p in report.lints()] == ["max-tokens-below-bound"]
    enough = collect(text, "maskscope", "llguidance", tokenize=_chars, max_tokens=12)
    assert enough.lints() == ()
    assert collect(text, "maskscope", "llguidance").output_bound is None  # no tokenizer


def test_unbounded_schemas_have_no_bound_and_no_max_tokens_warning() -> None:
    report = collect('{"type": "string"}', "maskscope", "llguidance", tokenize=_chars, max_tokens=1)
    assert report.output_bound is None
    assert "max-tokens-below-bound" not in {p.id for p in report.lints()}


def test_errors_come_first_then_by_line() -> None:
    text = '{\n  "type": "string",\n  "minLength": 5,\n  "maxLength": 2\n}'
    report = collect(text, "llamacpp", "llamacpp", prompt="")
    assert report.problems[0].severity == "error"
    rest = [p.line for p in report.problems[1:]]
    assert rest == sorted(rest)


def _big_schema() -> str:
    """About 1 MB: 40 record types of 25 described fields each, all referenced."""
    words = "the field holds what the document says, written as it is written there; " * 13
    defs = {
        f"record_{d}": {
            "type": "object",
            "properties": {
                f"field_{i}": {"type": "string", "maxLength": 20, "description": words}
                for i in range(25)
            },
        }
        for d in range(40)
    }
    props = {f"r{d}": {"$ref": f"#/$defs/record_{d}"} for d in range(40)}
    schema = {"type": "object", "properties": props, "$defs": defs}
    return json.dumps(schema, indent=2)


def test_a_one_megabyte_schema_is_collected(capsys: pytest.CaptureFixture[str]) -> None:
    text = _big_schema()
    assert len(text) > 1_000_000
    start = time.perf_counter()
    report = collect(text, "maskscope", "llguidance", tokenize=_chars, max_tokens=256)
    took = time.perf_counter() - start
    assert report.runs
    implicit = [p for p in report.lints() if p.id == "additional-properties-implicit"]
    assert len(implicit) == 41
    assert report.compile_ms is not None
    with capsys.disabled():
        print(
            f"\ncollect: {len(text) / 1e6:.2f} MB schema in {took:.2f} s, of which compiling "
            f"and the backend check {report.compile_ms / 1000:.2f} s"
        )


def test_a_keyword_is_found_under_either_spelling_of_its_path() -> None:
    text = '{"properties": {"a": {"items": {"minimum": 1}}}, "not": {"x": 1}}'
    spans = locate(text)
    items = text.index('"items"')
    assert keyword_offset(spans, ("properties", "a"), "items") == items
    assert keyword_offset(spans, ("properties", "a", "items"), "items") == items
    # llguidance's reports say `$`: the first key of that name.
    assert keyword_offset(spans, (), "minimum") == text.index('"minimum"')
    # A path that is not in the text: its nearest ancestor.
    assert keyword_offset(spans, ("properties", "b"), "x") == text.index('"properties"')


def test_a_grammar_the_llguidance_backend_refuses_is_an_error() -> None:
    from engine.grammar.compile import CompiledSchema
    from engine.workbench.will_run import _backend_refusal

    broken = CompiledSchema(schema=True, gbnf="root ::= nowhere", text="")
    [failure] = _backend_refusal(broken, "llguidance")
    assert "llguidance" in failure.message and "nowhere" in failure.message
    assert _backend_refusal(broken, "llamacpp") == []  # llama.cpp's judge ran on compiling
    assert _backend_refusal(CompiledSchema(True, 'root ::= "a"', ""), "llguidance") == []
