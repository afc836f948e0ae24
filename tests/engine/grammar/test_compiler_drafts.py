"""Maskscope's compiler on older drafts and on references: what each draft means."""

from __future__ import annotations

from engine.check.feed import grammar_accepts
from engine.grammar.compilers.maskscope.arrange import arrange
from engine.grammar.compilers.maskscope.compiler import compile_to_gbnf
from engine.grammar.compilers.maskscope.values import json_text

DRAFT4 = "http://json-schema.org/draft-04/schema#"
DRAFT7 = "http://json-schema.org/draft-07/schema#"


def accepts(model, schema, value) -> bool:
    return grammar_accepts(model, compile_to_gbnf(schema).gbnf, json_text(arrange(schema, value)))


def test_draft4_tuple_items_additional_items_and_dependencies(model):
    schema = {
        "$schema": DRAFT4,
        "type": "object",
        "properties": {
            "pair": {"items": [{"type": "string"}, {"type": "integer"}], "additionalItems": False},
            "a": {},
            "b": {},
        },
        "dependencies": {"a": ["b"]},
    }
    assert accepts(model, schema, {"pair": ["x", 1], "a": 1, "b": 2})
    assert not accepts(model, schema, {"pair": ["x", 1, 2]})
    assert not accepts(model, schema, {"a": 1})


def test_draft7_ref_siblings_are_ignored_and_definitions_resolve(model):
    schema = {
        "$schema": DRAFT7,
        "definitions": {"n": {"type": "integer"}},
        "properties": {"v": {"$ref": "#/definitions/n", "type": "string"}},
    }
    assert accepts(model, schema, {"v": 3})
    assert not accepts(model, schema, {"v": "s"})


def test_relative_ids_and_anchors_stay_in_the_document(model):
    schema = {
        "$id": "some/relative/base.json",
        "$defs": {"a": {"$anchor": "thing", "type": "boolean"}},
        "properties": {"x": {"$ref": "#thing"}, "y": {"$ref": "base.json#/$defs/a"}},
    }
    assert accepts(model, schema, {"x": True, "y": False})
    assert not accepts(model, schema, {"x": 1})


def test_arrange_follows_the_first_valid_alternative():
    schema = {
        "anyOf": [
            {"properties": {"k": {"const": 1}, "z": {}, "a": {}}, "required": ["k"]},
            {"properties": {"a": {}, "z": {}}},
        ]
    }
    assert list(arrange(schema, {"a": 1, "z": 2, "k": 1})) == ["k", "z", "a"]
    assert list(arrange(schema, {"z": 2, "a": 1, "k": 2})) == ["a", "z", "k"]


def test_draft3_any_type_allows_every_value(model):
    assert accepts(model, {"type": "any"}, {"a": [1, None]})
