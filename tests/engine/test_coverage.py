"""Keywords the grammar skips are named, so no one trusts a constraint that is not there."""

from __future__ import annotations

from engine.grammar.compile import compile_schema
from engine.grammar.compilers.llamacpp.coverage import unenforced_keywords


def _gaps(schema) -> set[tuple[str, str]]:
    return {(u.path, u.keyword) for u in unenforced_keywords(schema)}


def test_fully_enforced_schema_has_no_gaps():
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 10},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3},
        },
        "required": ["name"],
        "additionalProperties": False,
        "title": "annotations are fine",
    }
    assert _gaps(schema) == set()


def test_numeric_bounds_and_unique_items_are_reported():
    schema = {
        "type": "object",
        "properties": {
            "age": {"type": "integer", "minimum": 0, "maximum": 130},
            "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        },
    }
    assert _gaps(schema) == {
        ("$.properties.age", "minimum"),
        ("$.properties.age", "maximum"),
        ("$.properties.ids", "uniqueItems"),
    }


def test_keywords_beside_a_type_list_are_skipped():
    gaps = _gaps({"type": ["string", "null"], "maxLength": 5})
    assert gaps == {("$", "maxLength")}


def test_one_of_is_only_any_of():
    gaps = _gaps({"oneOf": [{"type": "integer"}, {"type": "number"}]})
    assert ("$", "oneOf") in gaps


def test_unsupported_format_is_reported_and_defs_are_walked():
    schema = {
        "$defs": {"mail": {"type": "string", "format": "email"}},
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date"},
            "to": {"$ref": "#/$defs/mail"},
        },
    }
    assert _gaps(schema) == {("$.$defs.mail", "format")}


def test_compiled_schema_carries_the_gaps():
    compiled = compile_schema('{"type": "number", "multipleOf": 5}', "llamacpp")
    assert [u.keyword for u in compiled.unenforced] == ["multipleOf"]
    assert "not enforced" in str(compiled.unenforced[0])
    # Our compiler enforces multipleOf; a keyword it cannot enforce is carried the same way.
    assert compile_schema('{"type": "number", "multipleOf": 5}', "maskscope").unenforced == ()
    compiled = compile_schema('{"type": "string", "maxLength": 65535}', "maskscope")
    assert [u.keyword for u in compiled.unenforced] == ["maxLength"]
