"""OpenAI's strict-mode profile: its rules as lints, their one-click fixes, its limits."""

from __future__ import annotations

import json

from engine.engines.openai_profile import LIMITS, ProfileCheck, check_openai
from engine.schema.parse import parse_schema
from engine.workbench.locate import locate

OPEN = """{
  "type": "object",
  "properties": {
    "name": {"type": "string"},
    "address": {
      "type": "object",
      "properties": {"city": {"type": "string"}},
      "required": ["city"]
    }
  },
  "required": ["name", "address"]
}"""


def _check(text: str) -> ProfileCheck:
    return check_openai(parse_schema(text), locate(text))


def _rules(found: ProfileCheck) -> set[tuple[str, str]]:
    return {(lint.path, lint.keyword) for lint in found.lints}


def test_missing_additional_properties_is_a_lint_and_its_fix_clears_it() -> None:
    found = _check(OPEN)
    assert not found.accepted
    assert _rules(found) == {
        ("$", "additionalProperties"),
        ("$.properties.address", "additionalProperties"),
    }
    text = OPEN
    while found.lints:  # one click per lint, each on the text the last one left
        fix = found.lints[0].fix
        assert fix is not None and fix.label == 'Set "additionalProperties": false'
        text = fix.apply(text)
        found = _check(text)
    assert found.accepted and found.unenforced == ()
    fixed = json.loads(text)
    assert fixed["additionalProperties"] is False
    assert fixed["properties"]["address"]["additionalProperties"] is False


def test_every_property_must_be_required_and_the_fix_lists_them() -> None:
    text = json.dumps(
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {}},
            "required": ["a"],
            "additionalProperties": False,
        },
        indent=2,
    )
    found = _check(text)
    assert _rules(found) == {("$", "required")}
    lint = found.lints[0]
    assert '"b", "c" are not' in lint.note and "nullable" in lint.note
    assert lint.fix is not None
    fixed = lint.fix.apply(text)
    assert json.loads(fixed)["required"] == ["a", "b", "c"]
    assert _check(fixed).accepted


def test_a_missing_required_is_added_whole() -> None:
    text = (
        '{"type": "object", "properties": {"x": {"type": "number"}}, "additionalProperties": false}'
    )
    (lint,) = _check(text).lints
    assert lint.keyword == "required" and lint.fix is not None
    fixed = lint.fix.apply(text)
    assert json.loads(fixed)["required"] == ["x"]
    assert _check(fixed).accepted


def test_additional_properties_true_is_replaced_by_false() -> None:
    text = (
        '{"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"], '
        '"additionalProperties": true}'
    )
    (lint,) = _check(text).lints
    assert lint.fix is not None
    assert json.loads(lint.fix.apply(text))["additionalProperties"] is False


def test_no_fix_where_false_would_allow_no_value_or_change_the_meaning() -> None:
    text = json.dumps(
        {
            "type": "object",
            "properties": {
                "meta": {"type": "object", "required": ["x"]},
                "free": {"type": "object"},
            },
            "required": ["meta", "free"],
            "additionalProperties": False,
        }
    )
    found = _check(text)
    assert _rules(found) == {
        ("$.properties.meta", "additionalProperties"),
        ("$.properties.free", "additionalProperties"),
    }
    assert all(lint.fix is None for lint in found.lints)


def test_the_root_must_be_an_object_and_not_any_of() -> None:
    found = _check('{"anyOf": [{"type": "string"}, {"type": "number"}]}')
    assert _rules(found) == {("$", "anyOf"), ("$", "type")}
    assert all(lint.fix is None for lint in found.lints)
    assert _rules(_check('{"type": "string"}')) == {("$", "type")}


def test_composition_keywords_are_refused() -> None:
    text = json.dumps(
        {
            "type": "object",
            "properties": {"a": {"allOf": [{"type": "string"}]}, "b": {"not": {"type": "null"}}},
            "required": ["a", "b"],
            "additionalProperties": False,
        }
    )
    found = _check(text)
    assert _rules(found) == {("$.properties.a", "allOf"), ("$.properties.b", "not")}
    assert "refuses" in found.lints[0].note


def test_keywords_outside_the_profile_are_unenforced() -> None:
    text = json.dumps(
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "minLength": 2, "format": "iri"},
                "b": {"type": "array", "items": {"type": "number"}, "uniqueItems": True},
                "c": {"type": "string", "format": "date-time", "pattern": "^[0-9]"},
                "d": {"type": "integer", "minimum": 1.5, "multipleOf": 3},
            },
            "required": ["a", "b", "c", "d"],
            "additionalProperties": False,
        }
    )
    found = _check(text)
    assert found.accepted
    assert {(u.path, u.keyword) for u in found.unenforced} == {
        ("$.properties.a", "minLength"),
        ("$.properties.a", "format"),
        ("$.properties.b", "uniqueItems"),
    }


def _nested(levels: int) -> dict:
    node: dict = {"type": "string"}
    for _ in range(levels):
        node = {
            "type": "object",
            "properties": {"n": node},
            "required": ["n"],
            "additionalProperties": False,
        }
    return node


def test_nesting_depth_limit() -> None:
    depth = LIMITS["nesting_depth"]
    assert _check(json.dumps(_nested(depth))).accepted
    found = _check(json.dumps(_nested(depth + 1)))
    (lint,) = found.lints
    assert lint.keyword == "properties" and f"{depth + 1} levels" in lint.note


def test_enum_limits() -> None:
    def schema(values: list[str]) -> str:
        return json.dumps(
            {
                "type": "object",
                "properties": {"e": {"type": "string", "enum": values}},
                "required": ["e"],
                "additionalProperties": False,
            }
        )

    assert _check(schema([f"v{i}" for i in range(LIMITS["enum_values"])])).accepted
    too_many = _check(schema([f"v{i}" for i in range(LIMITS["enum_values"] + 1)]))
    assert _rules(too_many) == {("$", "enum")}
    long_values = [f"{i:0>70}" for i in range(251)]  # 251 values, 17,570 characters
    assert _rules(_check(schema(long_values))) == {("$.properties.e", "enum")}
