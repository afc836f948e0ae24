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


def test_number_bounds_and_unique_items_are_reported_integer_bounds_are_not():
    # llama-server's C++ converter bounds integers (build_min_max_int), not other numbers.
    schema = {
        "type": "object",
        "properties": {
            "age": {"type": "integer", "minimum": 0, "maximum": 130},
            "price": {"type": "number", "exclusiveMinimum": 0},
            "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        },
    }
    assert _gaps(schema) == {
        ("$.properties.price", "exclusiveMinimum"),
        ("$.properties.ids", "uniqueItems"),
    }


def test_a_type_list_is_one_alternative_per_type_with_every_keyword():
    # maxLength is read on the string alternative and means nothing to null.
    assert _gaps({"type": ["string", "null"], "maxLength": 5}) == set()
    # minimum is read on the integer alternative, dropped on the number one.
    assert _gaps({"type": ["integer", "number"], "minimum": 3}) == {("$", "minimum")}


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
