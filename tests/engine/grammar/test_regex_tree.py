"""The regex translator's reading of a pattern: what it refuses, lengths, re-bounding.

These run without a model; test_regex_grammar.py feeds the grammars through llguidance.
"""

from __future__ import annotations

import re
import unicodedata

import pytest

from engine.grammar.compilers.maskscope.regex import (
    ANY,
    Chars,
    RegexUnsupported,
    bounded,
    length_range,
    parse,
    to_gbnf,
    whole_strings,
)
from engine.grammar.compilers.maskscope.rules import Rules
from engine.grammar.compilers.maskscope.strings import regex_problem, regex_rule
from engine.grammar.report import Unenforced


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("a(?=b)", "lookahead"),
        ("(?<!a)b", "lookahead or lookbehind"),
        (r"(a)\1", "backreference"),
        (r"\bword\b", "word boundary"),
        ("(?m)^a$", "MULTILINE"),
        ("a^b", "inside"),
        ("(?>a)", "atomic"),
        ("a*+", "possessive"),
        (r"\p{Foo}", "Python can read"),
        ("[", "Python can read"),
    ],
)
def test_what_a_grammar_cannot_express_is_refused(pattern: str, why: str) -> None:
    with pytest.raises(RegexUnsupported, match=why):
        whole_strings(pattern)
    assert why in (regex_problem(pattern) or "")
    assert regex_rule(Rules(), pattern, "$", []) is None


def ranges_of(pattern: str) -> tuple[tuple[int, int], ...]:
    node = parse(pattern)
    assert isinstance(node, Chars)
    return node.ranges


def members(ranges: tuple[tuple[int, int], ...], codes: range) -> set[int]:
    return {c for c in codes if any(lo <= c <= hi for lo, hi in ranges)}


@pytest.mark.parametrize(
    "pattern", [r"\d", r"\w", r"\s", r"\D", r"[^\w-]", r".", r"(?s).", r"(?i)[k-m]", r"(?a)\w"]
)
def test_classes_match_what_python_matches(pattern: str) -> None:
    # The first 0x3000 code points hold ASCII, Latin, Greek, Arabic and Indic digits, and
    # the Kelvin sign that (?i)k matches.
    codes = range(0x3000)
    expected = {c for c in codes if not 0xD800 <= c <= 0xDFFF and re.fullmatch(pattern, chr(c))}
    assert members(ranges_of(pattern), codes) == expected


def test_lazy_repeats_mean_the_same_strings() -> None:
    assert parse("a+?b{2,3}?") == parse("a+b{2,3}")


@pytest.mark.parametrize(
    ("pattern", "lo", "hi"),
    [
        ("^abc$", 3, 4),  # `$` also takes a final newline
        (r"^abc\Z", 3, 3),
        ("^a{2,5}b?$", 2, 7),
        ("abc", 3, None),
        ("^(x|yyy)+$", 1, None),
        ("^$", 0, 1),
    ],
)
def test_length_ranges(pattern: str, lo: int, hi: int | None) -> None:
    assert whole_strings(pattern).length_range() == (lo, hi)


def test_an_unanchored_end_drops_the_repeat_it_can_absorb() -> None:
    # "contains a letter then digits" is "contains a letter then a digit".
    assert whole_strings(r"[a-z]\d+") == whole_strings(r"[a-z]\d")
    assert whole_strings(r"x*y") == whole_strings("y")


def gbnf_of(pattern: str, lo: int = 0, hi: int | None = None) -> str | None:
    whole = whole_strings(pattern)
    if (lo, hi) != (0, None):
        found = bounded(whole, lo, hi)
        if found is None:
            return None
        whole = found
    return to_gbnf(Rules(), whole).gbnf


def test_one_varying_repeat_takes_the_length_bounds() -> None:
    assert gbnf_of(r"^[a-z]+\Z", 2, 8) == "[a-z]{2,8}"
    assert gbnf_of(r"^id-[0-9]*\Z", 0, 6) == '"id-" [0-9]{0,3}'
    # `$`: the final newline counts as a character too.
    assert gbnf_of(r"^a+$", 0, 3) == '( "a"{1,3} | "a"{1,2} "\\\\n" )'


def test_a_prefix_search_is_bounded_on_its_free_tail() -> None:
    assert gbnf_of("^ab", 0, 5) == '"ab" json-char{0,3}'


def test_two_varying_parts_cannot_be_bounded() -> None:
    assert gbnf_of(r"^[a-z]+-[0-9]+\Z", 0, 5) is None
    assert gbnf_of("abc", 0, 5) is None  # free text on both sides


def test_lengths_outside_a_fixed_pattern_leave_nothing() -> None:
    whole = bounded(whole_strings(r"^[0-9]{4}\Z"), 5, None)
    assert whole is not None and whole.options == ()


def test_json_escapes_are_written_as_json_dumps_writes_them() -> None:
    assert gbnf_of(r'^"\\\n\t\x01\Z') == '"\\\\\\"\\\\\\\\\\\\n\\\\t\\\\u0001"'


def test_a_repeat_past_the_cap_is_loosened_and_said() -> None:
    gaps: list[Unenforced] = []
    rule = regex_rule(Rules(), "^a{0,5000}$", "$.p", gaps)
    assert rule is not None
    assert [g.keyword for g in gaps] == ["pattern"] and "5000" in gaps[0].note


def test_any_character_is_json_char() -> None:
    assert length_range(Chars(ANY)) == (1, 1)
    assert gbnf_of("") == "json-char*"


def test_ecma_property_escapes_python_lacks_are_read_as_ecma_does() -> None:
    letters = ranges_of(r"\p{Letter}")
    assert members(letters, range(0x400)) == {
        c for c in range(0x400) if unicodedata.category(chr(c)).startswith("L")
    }
    assert ranges_of(r"\p{Lu}") == ranges_of(r"\p{General_Category=Uppercase_Letter}")
    digits_or_not = ranges_of(r"[\P{Nd}\p{Nd}]")
    assert members(digits_or_not, range(0x3000)) == members(ANY, range(0x3000))
    assert whole_strings(r"(?<year>\d{4})-") == whole_strings(r"(\d{4})-")
    with pytest.raises(RegexUnsupported, match="Python can read"):
        whole_strings(r"\p{Script=Greek}")
