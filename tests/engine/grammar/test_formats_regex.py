"""Each format's regex accepts a string exactly when jsonschema's format checker does.

Checked with Python's `re` (fast, many examples): strings drawn from the regex itself, then
mutated one character at a time, so that both sides of each boundary are met.
test_formats_grammar.py checks that the grammar made from the regex means the same.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft4Validator, Draft7Validator, Draft202012Validator

from engine.grammar.compilers.maskscope.formats import FORMATS, asserted_formats

CHECKER = Draft202012Validator.FORMAT_CHECKER
# The characters each format is made of, and a few it is not.
ALPHABETS = {
    "date": "0123456789-:T ",
    "time": "0123456789:.+-Zz\n ",
    "date-time": "0123456789:.+-TtZz\n ",
    "duration": "PYMWDTHS0123456789.,eE+-x ",
    "uuid": "0123456789abcdefABCDEFg-{}",
    "email": "a@. ",
    "idn-email": "a@. ",
    "hostname": "a0-.Z_\n\u0131\u0660é",
    "ipv4": "0123456789. a",
    "ipv6": "0123456789abcdefABCDEF:.%g",
    "uri": "ahttp:/?#[]@!$&'()*+,;=%0A-._~ é\n",
    "uri-reference": "ahttp:/?#[]@!$&'()*+,;=%0A-._~ é\n",
}
# Formats whose grammar accepts more than the checker, or fewer, by design.
LOOSER = {"hostname"}  # no limit on the whole name's length
STRICTER = {"uuid"}  # the canonical spelling only


def mutated(name: str) -> st.SearchStrategy[str]:
    spec = FORMATS[name]
    base = st.from_regex(re.compile(spec.regex, spec.flags), fullmatch=True)
    char = st.sampled_from(ALPHABETS[name])

    def edit(s: str, data: st.DataObject) -> str:
        kind = data.draw(st.sampled_from(["keep", "replace", "insert", "delete"]))
        if kind == "keep" or (not s and kind != "insert"):
            return s
        i = data.draw(st.integers(0, len(s) - (kind != "insert")))
        if kind == "delete":
            return s[:i] + s[i + 1 :]
        c = data.draw(char)
        return s[:i] + c + s[i + (kind == "replace") :]

    return st.tuples(base, st.data()).map(lambda t: edit(t[0], t[1]))


def regex_accepts(name: str, text: str) -> bool:
    spec = FORMATS[name]
    return re.search(spec.regex, text, spec.flags) is not None


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_is_checked_by_jsonschema(name: str) -> None:
    assert name in CHECKER.checkers


def check_agreement(name: str, data: st.DataObject) -> None:
    text = data.draw(mutated(name))
    # isoduration overflows or refuses exponents past Decimal's range; the grammar stops
    # at 5 digits.
    assume(not (name == "duration" and re.search("[eE][+-]?[0-9]{6}", text)))
    # isoduration also takes a date part with a comma or dot and no designator (`P,T1M`,
    # `P0,T0M`, `P0,ET0M`, `-P,T.0S`); the grammar leaves that quirk out, so a model never
    # writes it.
    assume(not (name == "duration" and re.search("P[^YMWDT]*[.,][^YMWDT]*T", text)))
    try:
        theirs = CHECKER.conforms(text, name)
    except ArithmeticError:
        assume(False)
    ours = regex_accepts(name, text)
    if name in LOOSER:
        assert ours or not theirs, text
    elif name in STRICTER:
        assert theirs or not ours, text
    else:
        assert ours == theirs, text


@pytest.mark.parametrize("name", sorted(FORMATS))
@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,  # a quirk found at random would fail some other commit's CI run
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_regex_agrees_with_the_checker(name: str, data: st.DataObject) -> None:
    check_agreement(name, data)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FORMATS))
# Derandomized, so that CI sees the same 200 examples of each format each run.
@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_regex_agrees_with_the_checker_at_length(name: str, data: st.DataObject) -> None:
    check_agreement(name, data)


@pytest.mark.parametrize(
    ("name", "text", "valid"),
    [
        ("date", "2024-02-29", True),
        ("date", "2023-02-29", False),
        ("date", "1900-02-29", False),
        ("date", "2000-02-29", True),
        ("date", "0000-01-01", False),
        ("date", "2024-04-31", False),
        ("date", "2024-01-01\n", False),
        ("date-time", "2024-01-01t10:00:00z", True),
        ("date-time", "2024-01-01T10:00:00Z\n", True),  # rfc3339-validator's `$`
        ("date-time", "2024-01-01T24:00:00Z", False),
        ("date-time", "2024-01-01T10:00:60Z", False),
        ("date-time", "2024-01-01T10:00:00", False),
        ("time", "10:00:00.5+05:30", True),
        ("time", "10:00:00", False),
        ("duration", "P1Y2M3DT4H5M6S", True),
        ("duration", "P1,5W", True),
        ("duration", "P0D2W", True),  # weeks beside zeros only
        ("duration", "P1D2W", False),
        ("duration", "P1Y2T3H", True),  # isoduration skips the 2
        ("duration", "PT", False),
        ("duration", "P1M1Y", False),
        ("duration", "-P1e3D", True),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", True),
        ("uuid", "123e4567e89b12d3a456426614174000", False),
        ("email", "a@b", True),
        ("email", "ab", False),
        ("hostname", "xn--bcher-kva.example", True),
        ("hostname", "-a.example", False),
        ("hostname", "a" * 64, False),
        ("hostname", "\u0661\u0662.com", True),  # fqdn's \d is Unicode
        ("ipv4", "192.168.0.1", True),
        ("ipv4", "192.168.0.01", False),
        ("ipv4", "256.1.1.1", False),
        ("ipv6", "::", True),
        ("ipv6", "1::2:3:4:5:6:7", True),
        ("ipv6", "1:2:3:4:5:6:7:8:9", False),
        ("ipv6", "1:2:3:4::5:6:7:8", False),  # `::` must stand for a group
        ("ipv6", "::ffff:1.2.3.4", True),
        ("ipv6", "::ffff:1.2.3.04", False),
        ("ipv6", "fe80::1%eth0", False),
        ("uri", "https://example.com/a?b#c", True),
        ("uri", "urn:isbn:0451450523", True),
        ("uri", "//example.com", False),
        ("uri", "http://exa mple.com", False),
        ("uri-reference", "//example.com", True),
        ("uri-reference", "a b", False),
    ],
)
def test_known_examples(name: str, text: str, valid: bool) -> None:
    assert CHECKER.conforms(text, name) is valid  # the example is right about jsonschema
    assert regex_accepts(name, text) is valid


def test_asserted_formats_follow_the_draft() -> None:
    draft4 = asserted_formats({"$schema": "http://json-schema.org/draft-04/schema#"})
    assert "date" not in draft4 and "date-time" in draft4
    assert draft4 == frozenset(Draft4Validator.FORMAT_CHECKER.checkers)
    draft7 = asserted_formats({"$schema": "http://json-schema.org/draft-07/schema#"})
    assert draft7 == frozenset(Draft7Validator.FORMAT_CHECKER.checkers)
    assert {"duration", "uuid"} <= asserted_formats({}) - draft7
