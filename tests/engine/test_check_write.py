"""How `maskscope check` writes an instance for a grammar: form, numbers, key orders."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.check.write import document_order, llamacpp_order, properties_order, write
from engine.errors import MaskscopeError


def test_one_line_with_a_space_after_commas_and_colons():
    assert (
        write({"a": 1, "b": [1, 2], "c": {}, "d": []}) == '{"a": 1, "b": [1, 2], "c": {}, "d": []}'
    )
    assert write([True, False, None]) == "[true, false, null]"


@pytest.mark.parametrize(
    "value, text",
    [
        (1.0, "1"),
        (-0.0, "0"),
        (1e-05, "0.00001"),
        (1.5e20, "150000000000000000000"),
        (2.5, "2.5"),
        (-1.25e-7, "-0.000000125"),
        (10**30, "1" + "0" * 30),
    ],
)
def test_numbers_are_positional(value, text):
    assert write(value) == text


def test_strings_raw_except_what_json_escapes():
    assert write('é"\\\n\t\x01') == '"é\\"\\\\\\n\\t\\u0001"'
    assert write("\ud800") == '"\\ud800"'  # a lone surrogate has no UTF-8 form


def test_not_json_is_an_error():
    with pytest.raises(MaskscopeError):
        write(float("nan"))
    with pytest.raises(MaskscopeError):
        write({1, 2})


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


@given(json_values)
def test_written_text_reads_back_as_the_same_value(value):
    text = write(value)
    assert json.loads(text) == value
    outside = _STRING.sub('""', text)
    assert "\n" not in outside and not re.search(r"[0-9][eE]", outside)


SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"$ref": "#/$defs/inner"}, "c": {}},
    "required": ["c", "b"],
    "$defs": {"inner": {"properties": {"x": {}, "y": {}}, "required": ["y"]}},
}
INSTANCE = {"q": 0, "b": {"x": 1, "y": 2}, "a": 1, "c": 3}


def test_llamacpp_order_puts_required_first_then_optional_in_properties_order():
    arranged = llamacpp_order(SCHEMA, INSTANCE)
    assert write(arranged) == '{"b": {"y": 2, "x": 1}, "c": 3, "a": 1, "q": 0}'


def test_properties_order_ignores_required():
    arranged = properties_order(SCHEMA, INSTANCE)
    assert write(arranged) == '{"a": 1, "b": {"x": 1, "y": 2}, "c": 3, "q": 0}'


def test_document_order_keeps_the_instance():
    assert write(document_order(SCHEMA, INSTANCE)) == write(INSTANCE)


def test_order_follows_allof_members_and_the_anyof_branch_that_matches():
    schema = {
        "allOf": [{"properties": {"m": {}}}, {"properties": {"n": {}}}],
        "anyOf": [
            {"properties": {"k": {"type": "string"}, "j": {}}},
            {"properties": {"j": {}, "k": {"type": "integer"}}, "required": ["k"]},
        ],
    }
    assert list(properties_order(schema, {"k": 1, "n": 0, "j": 2, "m": 0})) == ["m", "n", "j", "k"]
    assert list(properties_order(schema, {"j": 2, "k": "s"})) == ["k", "j"]


def test_arrays_are_arranged_item_by_item():
    schema = {
        "prefixItems": [{"properties": {"a": {}, "b": {}}}],
        "items": {"properties": {"z": {}, "y": {}}},
    }
    arranged = properties_order(schema, [{"b": 1, "a": 2}, {"y": 1, "z": 2}])
    assert [list(x) for x in arranged] == [["a", "b"], ["z", "y"]]
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "items": [{"properties": {"a": {}, "b": {}}}],
    }
    assert list(properties_order(draft7, [{"b": 1, "a": 2}])[0]) == ["a", "b"]
