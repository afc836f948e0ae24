"""The partial-JSON scanner: where any prefix stands, and where a text stops being JSON."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.explain.json_position import JsonScanner, Where, scan

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@pytest.mark.parametrize(
    ("prefix", "where", "path", "partial"),
    [
        ("", Where.VALUE, "$", ""),
        ("{", Where.KEY, "$", ""),
        ('{\n"cur', Where.KEY_STRING, "$", "cur"),  # mid-key
        ('{"currency"', Where.COLON, "$", ""),
        ('{"currency": ', Where.VALUE, "$.currency", ""),
        ('{"currency": "US', Where.STRING, "$.currency", "US"),  # mid-string
        ('{"a": "x\\"y\\u00', Where.STRING, "$.a", 'x"y'),  # an escape under way is left out
        ('{"a": -12.5', Where.NUMBER, "$.a", "-12.5"),  # mid-number
        ('{"a": 1, ', Where.KEY, "$", ""),  # after a comma
        ('{"a": [1, [2, tr', Where.LITERAL, "$.a[1][1]", "tr"),  # nested arrays
        ('{"a": [1, [2, true]', Where.AFTER, "$.a[1]", ""),
        ('{"a": [{"b": [', Where.VALUE, "$.a[0].b[0]", ""),
        ('{"odd key": 1', Where.NUMBER, "$['odd key']", "1"),
        ('{"a": 1}\n', Where.DONE, "$", ""),
        ("Invoice", Where.BROKEN, "$", ""),
    ],
)
def test_where_a_prefix_stands(prefix, where, path, partial):
    position = scan(prefix).position()
    assert (position.where, position.path_text, position.partial) == (where, path, partial)


def test_a_number_ends_at_the_first_character_that_cannot_go_on():
    scanner = scan('{"a": 10')
    assert scanner.feed(",") is None and scanner.position().where is Where.KEY
    assert scan('{"a": 1.').feed(",") == 0  # "1." is not a number yet


@pytest.mark.parametrize(
    ("prefix", "text", "breaks_at"),
    [
        ('{"a": "USD', '",', None),
        ('{"a": "USD"', "}}", 1),  # the value is complete after the first }
        ("{", "}", None),
        ('{"a": 1, ', "}", 0),  # a comma wants another key
        ("[", "]", None),
        ("[1,", "]", 0),
        ('{"a"', " :", None),
        ('{"a"', '"', 0),
        ("", " \n{", None),
        ('"a', "\n", 0),  # a raw newline inside a string
        ('"a', "\\q", 1),  # not an escape
        ("tr", "ue", None),
        ("tr", "ee", 0),
        ("0", "1", 0),  # no leading zeros
    ],
)
def test_where_a_text_breaks(prefix, text, breaks_at):
    assert scan(prefix).feed(text) == breaks_at


def test_a_copy_keeps_its_own_state():
    scanner = scan('{"a": [1')
    trial = scanner.copy()
    trial.feed("]}")
    assert trial.position().where is Where.DONE
    assert scanner.position().where is Where.NUMBER and scanner.position().path_text == "$.a[0]"


@settings(max_examples=200, deadline=None)
@given(json_values, st.sampled_from([None, 1, 2]))
def test_every_prefix_of_json_is_followed_to_the_end(value, indent):
    text = json.dumps(value, indent=indent)
    scanner = JsonScanner()
    for c in text:
        assert scanner.step(c), (text, scanner.position())
    assert scanner.position().where in (Where.DONE, Where.NUMBER)  # a bare number never ends


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_is_read_without_raising(text):
    position = scan(text).position()
    assert position.path_text.startswith("$")
