"""Each format's grammar accepts what jsonschema's format checker accepts, fed token by token.

test_formats_regex.py shows each regex means what the checker means; this shows the grammar
made from it means the same, through llguidance, and that llama.cpp reads it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from engine.check.feed import feed_text
from engine.grammar.compile import CompiledSchema
from engine.grammar.compilers.maskscope.formats import FORMATS
from engine.grammar.compilers.maskscope.rules import Rules
from engine.grammar.compilers.maskscope.strings import string_rule
from engine.grammar.judge.llama_parser import check_gbnf
from engine.masking import make_backend

CHECKER = Draft202012Validator.FORMAT_CHECKER
PARTLY = {"hostname"}  # reported: the whole name's length is not held


def gbnf_for(name: str) -> str:
    rules = Rules()
    gaps: list = []
    expr = string_rule(rules, {"format": name}, "$", gaps)
    assert bool(gaps) is (name in PARTLY), gaps
    # In an array: see test_regex_grammar.written for llguidance's quirk at the very start.
    return rules.gbnf(f'"[" {expr} "]"')


@pytest.fixture(scope="module")
def accepts(model) -> Iterator[Callable[[str, str], bool]]:
    backends = {}

    def check(name: str, text: str) -> bool:
        if name not in backends:
            backends[name] = make_backend(
                "llguidance", model, CompiledSchema(True, gbnf_for(name), "")
            )
        return feed_text(
            model, backends[name], f"[{json.dumps(text, ensure_ascii=False)}]"
        ).accepted

    yield check
    for backend in backends.values():
        backend.close()


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_llama_cpp_reads_every_format_grammar(name: str) -> None:
    check_gbnf(gbnf_for(name))


@pytest.mark.parametrize("name", sorted(FORMATS))
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_values_the_checker_takes_are_accepted(accepts, name: str, data) -> None:
    spec = FORMATS[name]
    text = data.draw(st.from_regex(re.compile(spec.regex, spec.flags), fullmatch=True))
    if name == "hostname" and len(text) > 253:
        return
    assert CHECKER.conforms(text, name)
    assert accepts(name, text), text


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("date", "2024-02-29"),
        ("date-time", "2024-01-01t10:00:00.25-03:00\n"),
        ("time", "23:59:59Z"),
        ("duration", "P1Y2M3DT4H5M6.5S"),
        ("uuid", "123E4567-e89b-12d3-a456-426614174000"),
        ("email", 'a"b@c'),
        ("hostname", "a-b.example."),
        ("ipv4", "0.0.0.0"),
        ("ipv6", "::ffff:192.0.2.1"),
        ("uri", "https://user@[::1]:8080/p%20q?x=1#frag"),
        ("uri-reference", "../a/b?c"),
    ],
)
def test_valid_examples(accepts, name: str, text: str) -> None:
    assert CHECKER.conforms(text, name)
    assert accepts(name, text)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("date", "2023-02-29"),
        ("date-time", "2024-01-01 10:00:00Z"),
        ("time", "24:00:00Z"),
        ("duration", "P1D2W"),
        ("uuid", "123e4567-e89b-12d3-a456-42661417400"),
        ("email", "no-at-sign"),
        ("hostname", "a..b"),
        ("ipv4", "1.2.3"),
        ("ipv6", "1:2:3:4:5:6:7:8:9"),
        ("uri", "no scheme"),
        ("uri-reference", "a b"),
    ],
)
def test_invalid_examples(accepts, name: str, text: str) -> None:
    assert not CHECKER.conforms(text, name)
    assert not accepts(name, text)
