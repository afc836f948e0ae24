"""Each lint fires where it should and not elsewhere; each fix gives a valid schema on which
the lint no longer fires."""

from __future__ import annotations

import json

import pytest

from engine.schema.parse import parse_schema
from engine.workbench.lints import lint
from engine.workbench.locate import locate
from engine.workbench.problems import Problem, collect


def _lints(text: str, lint_id: str, compiler: str = "maskscope", prompt: str = "") -> list[Problem]:
    found = lint(parse_schema(text), locate(text), compiler, prompt)
    return [p for p in found if p.id == lint_id]


def _pretty(schema: object) -> str:
    return json.dumps(schema, indent=2)


def _fixed(text: str, problem: Problem) -> str:
    assert problem.fix is not None and problem.fix.target == "schema"
    out = problem.fix.apply(text)
    parse_schema(out)  # still valid JSON and a valid schema
    return out


def _where(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    offset = -1
    for _ in range(nth + 1):
        offset = text.index(needle, offset + 1)
    line = text[:offset].count("\n") + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


# -- no-unknown-exit ------------------------------------------------------------------

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0},
        "role": {"enum": ["admin", "user"]},
        "team": {"$ref": "#/$defs/team"},
    },
    "required": ["name", "age", "role", "team"],
    "additionalProperties": False,
    "$defs": {"team": {"const": "core"}},
}


def test_no_unknown_exit_fires_where_every_field_is_forced() -> None:
    text = _pretty(PERSON)
    [problem] = _lints(text, "no-unknown-exit")
    assert (problem.line, problem.column) == _where(text, '"required"')
    assert problem.path == "$" and "invent" in problem.message
    fixed = _fixed(text, problem)
    assert _lints(fixed, "no-unknown-exit") == []
    schema = json.loads(fixed)
    props = schema["properties"]
    assert props["name"]["type"] == ["string", "null"]
    assert props["age"]["type"] == ["integer", "null"]
    assert props["role"]["enum"] == ["admin", "user", "UNKNOWN"]
    assert props["team"] == {"anyOf": [{"$ref": "#/$defs/team"}, {"type": "null"}]}
    # The fixed schema still compiles and runs.
    assert collect(fixed, "maskscope", "llguidance").runs


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s["properties"]["age"].update(type=["integer", "null"]),
        lambda s: s["properties"]["role"].update(enum=["admin", "user", "unknown"]),
        lambda s: (
            s["properties"].update(status={"enum": ["found", "missing"]})
            or s["required"].append("status")
        ),
        lambda s: s["required"].remove("age"),  # a field may be left out
        lambda s: s["properties"].update(name={"anyOf": [{"type": "string"}, {"type": "null"}]}),
        lambda s: s["$defs"].update(team={"enum": ["core", "N/A"]}),
    ],
)
def test_no_unknown_exit_stays_quiet_where_there_is_a_way_out(change) -> None:
    schema = json.loads(json.dumps(PERSON))
    change(schema)
    assert _lints(_pretty(schema), "no-unknown-exit") == []


def test_a_root_enum_without_unknown_is_forced() -> None:
    text = '{"type": "string", "enum": ["USD", "EUR"]}'
    [problem] = _lints(text, "no-unknown-exit")
    fixed = _fixed(text, problem)
    assert json.loads(fixed)["enum"] == ["USD", "EUR", "UNKNOWN"]
    assert _lints(fixed, "no-unknown-exit") == []
    assert _lints('{"enum": ["USD", "UNKNOWN"]}', "no-unknown-exit") == []


# -- unbounded ------------------------------------------------------------------------


def test_unbounded_strings_and_arrays_are_flagged_at_their_type() -> None:
    schema = {
        "type": "object",
        "properties": {
            "note": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}},
            "maybe": {"type": ["string", "null"]},
        },
    }
    text = _pretty(schema)
    found = _lints(text, "unbounded")
    assert [p.path for p in found] == [
        "$.properties.note",
        "$.properties.tags",
        "$.properties.maybe",
    ]
    assert (found[0].line, found[0].column) == _where(text, '"type"', 1)
    fixed = text
    for path in ("$.properties.note", "$.properties.tags", "$.properties.maybe"):
        problem = next(p for p in _lints(fixed, "unbounded") if p.path == path)
        fixed = _fixed(fixed, problem)
    assert _lints(fixed, "unbounded") == []
    props = json.loads(fixed)["properties"]
    assert props["note"]["maxLength"] == 100 and props["tags"]["maxItems"] == 10


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "maxLength": 5},
        {"type": "string", "enum": ["a", "b"]},
        {"type": "string", "const": "x"},
        {"type": "string", "format": "date"},
        {"type": "string", "format": "uuid"},
        {"type": "string", "pattern": "^[A-Z]{3}$"},
        {"type": "array", "maxItems": 3},
        {"type": "array", "prefixItems": [{"type": "integer"}], "items": False},
        {"type": "integer"},
        {"not": {"type": "string"}},
        {"type": "object", "propertyNames": {"type": "string"}, "additionalProperties": False},
    ],
)
def test_bounded_or_unwritten_values_are_not_flagged(schema: dict) -> None:
    assert _lints(json.dumps(schema), "unbounded") == []


def test_an_open_pattern_is_flagged() -> None:
    assert len(_lints('{"type": "string", "pattern": "^[a-z]+$"}', "unbounded")) == 1


# -- enum-near-duplicates ---------------------------------------------------------------


def test_enum_values_that_differ_only_in_case_or_whitespace() -> None:
    text = '{\n  "enum": ["Red", "blue", "red ", "BLUE", "green", "Red"]\n}'
    found = _lints(text, "enum-near-duplicates")
    assert [p.path for p in found] == ["$.enum[2]", "$.enum[3]"]
    assert (found[0].line, found[0].column) == _where(text, '"red "')
    fixed = _fixed(text, found[0])
    assert json.loads(fixed)["enum"] == ["Red", "blue", "BLUE", "green", "Red"]
    fixed = _fixed(fixed, _lints(fixed, "enum-near-duplicates")[0])
    assert json.loads(fixed)["enum"] == ["Red", "blue", "green", "Red"]
    assert _lints(fixed, "enum-near-duplicates") == []


def test_distinct_enum_values_are_not_flagged() -> None:
    assert _lints('{"enum": ["red", "reds", 1, "1", null]}', "enum-near-duplicates") == []


# -- additional-properties-implicit ------------------------------------------------------

OPEN = '{\n  "type": "object",\n  "properties": {\n    "a": {"type": "integer"}\n  }\n}'


@pytest.mark.parametrize(
    ("compiler", "words"),
    [
        ("maskscope", "lets the model add keys"),
        ("llguidance", "lets the model add keys"),
        ("llamacpp", "forbids keys"),
    ],
)
def test_additional_properties_implicit_says_what_the_compiler_does(
    compiler: str, words: str
) -> None:
    [problem] = _lints(OPEN, "additional-properties-implicit", compiler)
    assert words in problem.message
    assert (problem.line, problem.column) == _where(OPEN, '"properties"')
    fixed = _fixed(OPEN, problem)
    assert json.loads(fixed)["additionalProperties"] is False
    assert '\n  "additionalProperties": false\n}' in fixed  # on its own line, indented
    assert _lints(fixed, "additional-properties-implicit", compiler) == []


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"a": {}}, "additionalProperties": True},
        {"properties": {"a": {}}, "unevaluatedProperties": False},
        {"allOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]},
        {"type": "object"},
    ],
)
def test_additional_properties_implicit_stays_quiet(schema: dict) -> None:
    assert _lints(json.dumps(schema), "additional-properties-implicit") == []


def test_the_fix_on_a_one_line_object() -> None:
    text = '{"properties": {"a": {}}}'
    [problem] = _lints(text, "additional-properties-implicit")
    assert _fixed(text, problem) == '{"properties": {"a": {}}, "additionalProperties": false}'


# -- required-missing -------------------------------------------------------------------


def test_required_names_an_undefined_property() -> None:
    text = _pretty({"properties": {"name": {}, "age": {}}, "required": ["name", "agee", "zzz"]})
    found = _lints(text, "required-missing")
    assert [p.path for p in found] == ["$.required[1]", "$.required[2]"]
    assert (found[0].line, found[0].column) == _where(text, '"agee"')
    assert found[1].fix is None  # nothing near "zzz"
    fixed = _fixed(text, found[0])
    assert json.loads(fixed)["required"] == ["name", "age", "zzz"]
    assert [p.path for p in _lints(fixed, "required-missing")] == ["$.required[2]"]


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"a": {}}, "required": ["a"]},
        {"required": ["a"]},  # no properties here: they may come from elsewhere
        {"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}], "required": ["b"]},
        {"properties": {"a": {}}, "patternProperties": {"^b": {}}, "required": ["b1"]},
        # A branch may require what its parent defines.
        {"properties": {"a": {}}, "oneOf": [{"properties": {"b": {}}, "required": ["a"]}]},
    ],
)
def test_required_missing_stays_quiet(schema: dict) -> None:
    assert _lints(json.dumps(schema), "required-missing") == []


# -- description-unseen ------------------------------------------------------------------


def test_descriptions_the_prompt_does_not_carry() -> None:
    text = _pretty(
        {"title": "Order", "properties": {"id": {"type": "string", "description": "the SKU"}}}
    )
    [problem] = _lints(text, "description-unseen", prompt="Read the order.")
    assert problem.severity == "info" and "2 descriptions and titles" in problem.message
    assert (problem.line, problem.column) == _where(text, '"title"')
    assert problem.fix is not None and problem.fix.target == "prompt"
    prompt = problem.fix.apply("Read the order.")
    assert prompt.startswith("Read the order.\n\n") and text in prompt
    assert _lints(text, "description-unseen", prompt=prompt) == []


def test_no_descriptions_or_all_in_the_prompt() -> None:
    text = '{"type": "string", "description": "a colour"}'
    assert _lints('{"type": "string"}', "description-unseen") == []
    assert _lints(text, "description-unseen", prompt="Name a colour: a colour") == []
    # A property called "description" is a name, not a description.
    assert _lints('{"properties": {"description": {"type": "string"}}}', "description-unseen") == []


def test_a_field_that_merely_ends_in_status_is_no_way_out() -> None:
    schema = json.loads(json.dumps(PERSON))
    schema["properties"]["marital_status"] = {"enum": ["single", "married"]}
    schema["required"].append("marital_status")
    assert len(_lints(_pretty(schema), "no-unknown-exit")) == 1


@pytest.mark.parametrize("compiler", ["maskscope", "xgrammar"])
def test_no_length_fix_is_offered_where_the_compiler_would_not_enforce_it(compiler) -> None:
    # issue 27, item 8: beside `format: email` the maxLength fix raised a new problem, the
    # bound not enforced together with the format. Say so, and offer no such fix.
    text = _pretty({"type": "string", "format": "email"})
    (problem,) = _lints(text, "unbounded", compiler)
    assert problem.fix is None
    assert f"The {compiler} compiler cannot add `maxLength` here" in problem.message
    assert "Max tokens" in problem.message


def test_the_length_fix_stays_where_the_compiler_enforces_it_with_the_format() -> None:
    text = _pretty({"type": "string", "format": "email"})
    (problem,) = _lints(text, "unbounded", "llguidance")
    fixed = _fixed(text, problem)
    assert json.loads(fixed)["maxLength"] == 100
