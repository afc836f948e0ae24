"""Maskscope's compiler core: objects, refs, combinators, contradictions, key order."""

from __future__ import annotations

import pytest

from engine.check.feed import grammar_accepts
from engine.errors import GrammarError
from engine.grammar.compilers.maskscope.arrange import arrange
from engine.grammar.compilers.maskscope.compiler import compile_to_gbnf
from engine.grammar.compilers.maskscope.values import json_text
from engine.grammar.judge.llama_parser import check_gbnf


def accepts(model, schema, value) -> bool:
    grammar = compile_to_gbnf(schema)
    check_gbnf(grammar.gbnf)
    return grammar_accepts(model, grammar.gbnf, json_text(arrange(schema, value)))


OBJECT = {
    "type": "object",
    "properties": {"b": {"type": "integer"}, "a": {"enum": ["x", "y"]}, "c": {"type": "boolean"}},
    "required": ["a"],
}


def test_optional_properties_may_be_absent_and_additional_ones_are_allowed(model):
    assert accepts(model, OBJECT, {"a": "x"})
    assert accepts(model, OBJECT, {"a": "y", "c": True, "b": 3})
    assert accepts(model, OBJECT, {"a": "x", "zz": [1, {"q": None}]})
    assert not accepts(model, OBJECT, {"b": 3})
    assert not accepts(model, OBJECT, {"a": "z"})


def test_declared_names_are_not_additional_keys(model):
    assert not accepts(model, OBJECT, {"a": "x", "b": "not an integer"})


def test_additional_properties_false_and_as_a_schema(model):
    closed = {**OBJECT, "additionalProperties": False}
    assert not accepts(model, closed, {"a": "x", "zz": 1})
    typed = {**OBJECT, "additionalProperties": {"type": "string"}}
    assert accepts(model, typed, {"a": "x", "zz": "s"})
    assert not accepts(model, typed, {"a": "x", "zz": 1})


def test_arrange_puts_keys_in_declared_order_then_the_rest():
    value = {"zz": 1, "c": False, "a": "x", "b": 2}
    assert list(arrange(OBJECT, value)) == ["b", "a", "c", "zz"]


def test_recursive_refs_and_pointer_escapes(model):
    schema = {
        "$defs": {"a/b": {"type": "array", "items": {"$ref": "#"}}},
        "anyOf": [{"type": "integer"}, {"$ref": "#/$defs/a~1b"}],
    }
    assert accepts(model, schema, [1, [2, []]])
    assert not accepts(model, schema, [1, ["x"]])


def test_all_of_merges_properties_and_required(model):
    schema = {
        "allOf": [
            {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"b": {"type": "string"}}, "required": ["b"]},
        ]
    }
    assert accepts(model, schema, {"b": "s", "a": 1})
    assert not accepts(model, schema, {"a": 1})


def test_one_of_with_const_tags(model):
    schema = {
        "oneOf": [
            {"properties": {"k": {"const": "n"}, "v": {"type": "integer"}}, "required": ["k"]},
            {"properties": {"k": {"const": "s"}, "v": {"type": "string"}}, "required": ["k"]},
        ]
    }
    grammar = compile_to_gbnf(schema)
    assert not any(u.keyword == "oneOf" for u in grammar.unenforced)
    assert accepts(model, schema, {"k": "s", "v": "x"})
    assert not accepts(model, schema, {"k": "s", "v": 1})


def test_if_then_else_on_a_const(model):
    schema = {
        "type": "object",
        "properties": {"kind": {"enum": ["a", "b"]}, "n": {}},
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"properties": {"n": {"type": "integer"}}},
        "else": {"properties": {"n": {"type": "string"}}},
    }
    assert accepts(model, schema, {"kind": "a", "n": 1})
    assert accepts(model, schema, {"kind": "b", "n": "x"})
    assert not accepts(model, schema, {"kind": "b", "n": 1})


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"type": "string", "minLength": 5, "maxLength": 2}, "$"),
        ({"allOf": [{"type": "string"}, {"type": "integer"}]}, "$"),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "array", "minItems": 3, "maxItems": 1}},
                "required": ["a"],
            },
            "$.properties.a",
        ),
        ({"enum": []}, "$"),
    ],
)
def test_contradictions_are_errors_naming_the_subschema(schema, where):
    with pytest.raises(GrammarError, match="allows no value") as error:
        compile_to_gbnf(schema)
    assert f"(at {where})" in str(error.value)


@pytest.mark.parametrize(
    ("schema", "fits", "contradicted"),
    [
        ({"type": ["integer", "null"], "minimum": 5, "maximum": 3}, None, 4),
        ({"type": ["number", "string"], "exclusiveMinimum": 3, "maximum": 3}, "ab", 3),
        ({"type": ["string", "null"], "minLength": 5, "maxLength": 3}, None, "abcd"),
        ({"minLength": 2, "maxLength": 1}, 7, "a"),
        ({"type": ["array", "boolean"], "minItems": 3, "maxItems": 1}, True, [1, 2]),
    ],
)
def test_a_contradiction_removes_only_the_type_it_concerns(model, schema, fits, contradicted):
    assert accepts(model, schema, fits)
    assert not accepts(model, schema, contradicted)


def test_remote_references_are_refused():
    with pytest.raises(GrammarError, match="remote references are not supported"):
        compile_to_gbnf({"$ref": "https://example.com/other.json"})


def test_one_of_with_overlapping_branches_excludes_values_matching_both(model):
    schema = {
        "type": "object",
        "oneOf": [{"required": ["id", "win"]}, {"required": ["id", "lose"]}],
    }
    assert not any(u.keyword == "oneOf" for u in compile_to_gbnf(schema).unenforced)
    assert accepts(model, schema, {"id": 1, "win": 2})
    assert accepts(model, schema, {"id": 1, "lose": 2})
    assert not accepts(model, schema, {"id": 1, "win": 2, "lose": 3})


def test_a_key_free_in_one_branch_and_declared_in_another(model):
    # llguidance lexes greedily: a key written as one literal in one branch must not
    # hide the same key read as "any other string" in the other branch.
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"_meta": {}}},
            {"type": "object", "properties": {"content": {"properties": {"type": {}, "text": {}}}}},
        ]
    }
    assert accepts(model, schema, {"content": {"type": "text", "text": "x"}, "_meta": {}})


def test_const_objects_keep_their_key_order(model):
    schema = {"properties": {"v": {"const": {"b": 1, "a": [1.0, "x"]}}}}
    assert arrange(schema, {"v": {"a": [1, "x"], "b": 1}}) == {"v": {"b": 1, "a": [1.0, "x"]}}
    assert accepts(model, schema, {"v": {"a": [1, "x"], "b": 1}})
    assert not accepts(model, schema, {"v": {"a": [2, "x"], "b": 1}})


def test_simple_key_patterns_keep_other_keys_to_additional_properties(model):
    schema = {
        "type": "object",
        "properties": {"x-id": {"type": "string"}},
        "patternProperties": {"^x-": {"type": "integer"}},
    }
    assert accepts(model, schema, {"x-a": 1, "other": "s"})
    assert not accepts(model, schema, {"x-a": "s"})
    assert not accepts(model, schema, {"x-id": 1})


def test_counted_contains_and_excluded_integers(model):
    schema = {"type": "array", "contains": {"const": 1}, "minContains": 2, "maxContains": 2.0}
    assert accepts(model, schema, [1, 2, 1])
    assert not accepts(model, schema, [1, 2])
    assert not accepts(model, schema, [1, 1, 1])
    assert accepts(model, {"type": "integer", "not": {"enum": [0, 10]}}, 100)
    assert not accepts(model, {"type": "integer", "not": {"enum": [0, 10]}}, 10)


def test_keys_take_the_schemas_of_every_pattern_they_match(model):
    schema = {
        "type": "object",
        "properties": {"foo": {"type": "array"}},
        "patternProperties": {"f.o": {"minItems": 2}, "^b": {"type": "integer"}},
        "additionalProperties": {"type": "boolean"},
    }
    assert not any(u.keyword == "patternProperties" for u in compile_to_gbnf(schema).unenforced)
    assert accepts(model, schema, {"foo": [1, 2], "fxo": [1, 2], "bar": 1, "quux": True})
    assert not accepts(model, schema, {"foo": [1]})  # a declared name matching a pattern
    assert not accepts(model, schema, {"fxo": [1]})
    assert accepts(model, schema, {"bfoo": 1})  # matches both patterns
    assert not accepts(model, schema, {"bfoo": [1, 2]})
    assert not accepts(model, schema, {"quux": 1})


def test_a_catch_all_key_pattern_leaves_its_keys_no_way_around_it(model):
    # Github_hard---o36016's shape: with additionalProperties absent, a key matching the
    # pattern once could be read as an additional key and take any value.
    schema = {"type": "object", "patternProperties": {"^[a-zA-Z0-9_]+$": {"type": "integer"}}}
    assert not compile_to_gbnf(schema).unenforced
    assert accepts(model, schema, {"a1": 1, "b-c": "any"})
    assert not accepts(model, schema, {"a1": "s"})
    assert not accepts(model, schema, {"b-c": 1, "field_2": [1]})


def test_patterns_of_several_parts_are_intersected(model):
    schema = {
        "allOf": [{"type": "string", "pattern": "^ab"}, {"pattern": "c$"}, {"pattern": 'x|"'}]
    }
    assert not compile_to_gbnf(schema).unenforced
    assert accepts(model, schema, "abxc")
    assert accepts(model, schema, 'ab"c')
    for text in ("abc", "axc", "abx", "xabc"):
        assert not accepts(model, schema, text), text
    exclusive = {"type": ["string", "null"], "allOf": [{"pattern": "^a$"}, {"pattern": "^b"}]}
    assert accepts(model, exclusive, None)
    assert not accepts(model, exclusive, "a")


def test_patterns_beside_a_length_are_reported_where_not_intersected():
    schema = {"allOf": [{"type": "string", "pattern": "^a", "minLength": 2}, {"pattern": "b"}]}
    gaps = compile_to_gbnf(schema).unenforced
    assert [(u.path, u.keyword) for u in gaps] == [("$.allOf[1]", "pattern")]


def test_not_pattern_and_if_on_a_pattern(model):
    schema = {"type": "string", "not": {"pattern": "^ *[cC]ontent/|\\.xnb *$"}}
    assert not compile_to_gbnf(schema).unenforced
    assert accepts(model, schema, "a.xnbq")
    assert not accepts(model, schema, "Content/x")
    conditional = {"if": {"properties": {"a": {"pattern": "^x"}}}, "then": {"required": ["b"]}}
    assert accepts(model, conditional, {"a": "y"})
    assert not accepts(model, conditional, {"a": "xy"})


def test_property_names_pattern_limits_additional_keys_exactly(model):
    schema = {
        "type": "object",
        "properties": {"ab": {"type": "integer"}},
        "propertyNames": {"pattern": "^[a-z]+$"},
        "additionalProperties": {"type": "string"},
    }
    assert not compile_to_gbnf(schema).unenforced
    assert accepts(model, schema, {"ab": 1, "cd": "x"})
    assert not accepts(model, schema, {"ab": "x"})  # not as an additional key either
    assert not accepts(model, schema, {"Cd": "x"})


def test_not_of_not_is_the_schema_itself(model):
    schema = {"type": "object", "properties": {"a": {"not": {"not": {"type": "integer"}}}}}
    assert not compile_to_gbnf(schema).unenforced
    assert accepts(model, schema, {"a": 1})
    assert not accepts(model, schema, {"a": "x"})
