"""string_rule: lengths in characters, pattern and format together, and what it reports."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema
import pytest

from engine.check.feed import feed_text
from engine.grammar.compile import CompiledSchema
from engine.grammar.compilers.maskscope.rules import Rules
from engine.grammar.compilers.maskscope.strings import string_rule
from engine.grammar.judge.llama_parser import check_gbnf
from engine.grammar.report import Unenforced
from engine.masking import make_backend


def compiled(node: dict[str, Any], formats: frozenset[str] | None = None) -> tuple[str, list]:
    rules = Rules()
    gaps: list[Unenforced] = []
    expr = string_rule(rules, node, "$.p", gaps, formats=formats)
    # In an array: see test_regex_grammar.written for llguidance's quirk at the very start.
    return rules.gbnf(f'"[" {expr} "]"'), gaps


@pytest.fixture(scope="module")
def accepts(model) -> Iterator[Callable[[str, str], bool]]:
    backends = {}

    def check(gbnf: str, value: str) -> bool:
        if gbnf not in backends:
            backends[gbnf] = make_backend("llguidance", model, CompiledSchema(True, gbnf, ""))
        return feed_text(
            model, backends[gbnf], f"[{json.dumps(value, ensure_ascii=False)}]"
        ).accepted

    yield check
    for backend in backends.values():
        backend.close()


def valid(node: dict[str, Any], value: str) -> bool:
    return jsonschema.Draft202012Validator(node).is_valid(value)


LENGTH_CASES = [
    (
        {"minLength": 2, "maxLength": 3},
        ["ab", "abc", "éü", "日本語", "😀😀", 'a"', "\\\n", "\t\x01"],
    ),
    ({"minLength": 2, "maxLength": 3}, ["a", "abcd", "😀", "日本語!", '""""']),
    ({"maxLength": 0}, ["", "a"]),
    ({"minLength": 1}, ["", "x", "😀"]),
]


@pytest.mark.parametrize(("node", "values"), LENGTH_CASES)
def test_lengths_count_characters_not_bytes_nor_escapes(accepts, node, values) -> None:
    gbnf, gaps = compiled(node)
    assert not gaps
    check_gbnf(gbnf)
    for value in values:
        assert accepts(gbnf, value) is valid(node, value), value


COMBINED = [
    # One varying repeat: the lengths go into it, and nothing is reported.
    ({"pattern": "^[a-z]+$", "maxLength": 4}, ["abcd", "abcde", "ab\n", "abcd\n", ""], []),
    ({"pattern": "^id-[0-9]*$", "minLength": 5}, ["id-12", "id-1", "id-"], []),
    ({"pattern": "^(a|bb)+$", "maxLength": 3}, ["ab", "abb", "bbbb"], ["maxLength"]),
    # The pattern's own lengths lie inside the bounds.
    ({"pattern": "^[0-7]{3,4}$", "maxLength": 10, "minLength": 3}, ["777", "77", "77777"], []),
    # Two varying parts: the pattern is enforced, the lengths are reported.
    ({"pattern": "^[a-z]+-[0-9]+$", "maxLength": 5}, ["ab-12", "abc-123", "ab12"], ["maxLength"]),
    ({"pattern": "^ab", "maxLength": 4}, ["abcd", "abcde", "xab"], []),
]


@pytest.mark.parametrize(("node", "values", "reported"), COMBINED)
def test_pattern_and_lengths(accepts, node, values, reported) -> None:
    gbnf, gaps = compiled(node)
    assert sorted(g.keyword for g in gaps) == reported
    check_gbnf(gbnf)
    for value in values:
        ours, theirs = accepts(gbnf, value), valid(node, value)
        if reported:
            assert ours or not theirs, value  # never stricter than the schema
        else:
            assert ours is theirs, value


def test_format_and_lengths(accepts) -> None:
    node = {"format": "date", "maxLength": 10}
    gbnf, gaps = compiled(node)
    assert not gaps
    assert accepts(gbnf, "2024-02-29") and not accepts(gbnf, "2023-02-29")


def test_a_format_beside_a_pattern_is_reported() -> None:
    _, gaps = compiled({"pattern": "^[0-9-]+$", "format": "date"})
    assert [(g.keyword, g.path) for g in gaps] == [("format", "$.p")]


def test_unknown_and_unasserted_formats_are_reported_not_enforced(accepts) -> None:
    gbnf, gaps = compiled({"format": "int32"})
    assert [g.keyword for g in gaps] == ["format"] and accepts(gbnf, "anything")
    # draft-04 does not check `date`: it is an annotation there.
    gbnf, gaps = compiled({"format": "date"}, formats=frozenset({"date-time"}))
    assert "annotation" in gaps[0].note and accepts(gbnf, "not a date")


def test_untranslatable_pattern_is_reported_and_lengths_still_hold(accepts) -> None:
    gbnf, gaps = compiled({"pattern": "(?=a)", "maxLength": 2})
    assert [g.keyword for g in gaps] == ["pattern"] and "lookahead" in gaps[0].note
    assert accepts(gbnf, "zz") and not accepts(gbnf, "zzz")


def test_lengths_past_llama_cpp_limits_are_loosened_and_reported() -> None:
    gbnf, gaps = compiled({"maxLength": 131072})
    assert [g.keyword for g in gaps] == ["maxLength"]
    check_gbnf(gbnf)
    gbnf, gaps = compiled({"pattern": "^[a-z]*$", "maxLength": 65535})
    assert [g.keyword for g in gaps] == ["maxLength"]
    check_gbnf(gbnf)


def test_no_keywords_is_any_string() -> None:
    assert string_rule(Rules(), {}, "$", []) == "json-string"
