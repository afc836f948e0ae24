"""A pattern's grammar accepts a JSON string exactly when `re.search` finds the pattern in it.

The text is fed as `maskscope check` writes it (json.dumps, ensure_ascii=False) through
llguidance with the real tokenizer; llama.cpp's parser must accept every grammar too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from functools import cache

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engine.check.feed import feed_text
from engine.grammar.compile import CompiledSchema
from engine.grammar.compilers.maskscope.rules import Rules
from engine.grammar.compilers.maskscope.strings import regex_rule
from engine.grammar.judge.llama_parser import check_gbnf
from engine.grammar.report import Unenforced
from engine.masking import make_backend

PATTERNS = [
    r"^[a-z][a-z0-9-]{3,30}$",
    r"^(http|https)://",
    r"^([0-1]?[0-9]|2[0-3]):[0-5][0-9]$",
    r"^[^\\/:\*\?\"<>\|\x01-\x1f]+$",  # JSON's escaped characters inside a negated class
    r"^\d{3}-\d{2}\Z",  # Unicode digits, as Python has them
    r"[A-Z]{2}",  # unanchored: anywhere in the text
    r"^(?:\S+\s+){0,4}\S+$",
    r"(^|_)ab(c|$)",
    r'^"[^"]*"$',
    r"^.{2}$",  # any character but a newline, escaped ones included
    r"(?i)^iglu:[a-z-_.]+/v[0-9]+$",
    r"^\w+@\w+\.\w{2,}$",
    r"^$",
]


@cache
def gbnf_for(pattern: str) -> str:
    rules = Rules()
    gaps: list[Unenforced] = []
    expr = regex_rule(rules, pattern, "$", gaps)
    assert expr is not None and not gaps
    return rules.gbnf(f'"[" "\\"" {expr} "\\"" "]"')


def written(text: str) -> str:
    """The string as the one item of an array: at the very start of a document, llguidance
    refuses the token `"\\` before `":"` of a grammar `"\\"" "\\\\\\"" ":"* "\\""` (a
    quirk of its own, seen on llguidance 1.x), which would hide what these tests check."""
    return "[" + json.dumps(text, ensure_ascii=False) + "]"


@pytest.fixture(scope="module")
def accepts(model) -> Iterator[Callable[[str, str], bool]]:
    """Does the pattern's grammar accept the text? One llguidance backend per pattern."""
    backends = {}

    def check(pattern: str, text: str) -> bool:
        if pattern not in backends:
            compiled = CompiledSchema(schema=True, gbnf=gbnf_for(pattern), text="")
            backends[pattern] = make_backend("llguidance", model, compiled)
        return feed_text(model, backends[pattern], written(text)).accepted

    yield check
    for backend in backends.values():
        backend.close()


@pytest.mark.parametrize("pattern", PATTERNS)
def test_llama_cpp_reads_the_grammar(pattern: str) -> None:
    check_gbnf(gbnf_for(pattern))


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_strings_the_pattern_finds_are_accepted(accepts, pattern: str, data) -> None:
    text = data.draw(st.from_regex(pattern))
    assert re.search(pattern, text)
    assert accepts(pattern, text), text


EDITS = 'aZ09-_ .:/@"\\\n\t\x01é٣'


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_strings_it_does_not_find_are_rejected(accepts, pattern: str, data) -> None:
    text = data.draw(st.from_regex(pattern))
    i = data.draw(st.integers(0, len(text)))
    text = text[:i] + data.draw(st.text(st.sampled_from(EDITS), max_size=2)) + text[i + 1 :]
    assume(not re.search(pattern, text))
    assert not accepts(pattern, text), text


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        ("^abc$", "abc\n", True),  # Python's `$` also matches before a final newline
        (r"^abc\Z", "abc\n", False),
        ("^a.c$", "a\nc", False),
        ("^a.c$", 'a"c', True),
        ("^a.c$", "a\\c", True),
        (r"^\d+$", "١٢٣", True),
        (r"^[\w]+$", "naïve", True),
        ("b", "abc", True),
        ("^b", "abc", False),
    ],
)
def test_python_semantics(accepts, pattern: str, text: str, found: bool) -> None:
    assert bool(re.search(pattern, text)) is found
    assert accepts(pattern, text) is found


def random_patterns() -> st.SearchStrategy[str]:
    """Small regexes over the constructs the translator reads, JSON's escapes included."""
    atoms = st.sampled_from(
        ["a", "b", '"', r"\\", r"\n", ".", "[a-c]", "[^a]", r"\d", r"\s", r"\W", '[ab"]', "é"]
    )

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        quantified = st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "{1,3}", "{0,2}"]))
        return st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map(lambda t: f"({t[0]}|{t[1]})"),
            quantified.map(lambda t: f"(?:{t[0]}){t[1]}"),
        )

    body = st.recursive(atoms, extend, max_leaves=6)
    return st.tuples(st.sampled_from(["", "^"]), body, st.sampled_from(["", "$", r"\Z"])).map(
        "".join
    )


@pytest.mark.slow
# Derandomized: unanchored patterns let hypothesis write long texts around the match, and a
# random draw of them once ran past 40 minutes; CI sees the same 60 examples each run.
@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(pattern=random_patterns(), data=st.data())
def test_random_patterns_accept_exactly_what_re_search_finds(model, pattern: str, data) -> None:
    gbnf = gbnf_for(pattern)
    check_gbnf(gbnf)
    backend = make_backend("llguidance", model, CompiledSchema(True, gbnf, ""))
    try:
        for _ in range(4):
            text = data.draw(st.from_regex(pattern))
            assert feed_text(model, backend, written(text)).accepted, (pattern, text)
            i = data.draw(st.integers(0, len(text)))
            edit = data.draw(st.text(st.sampled_from(EDITS), max_size=2))
            changed = text[:i] + edit + text[i + 1 :]
            found = re.search(pattern, changed) is not None
            assert feed_text(model, backend, written(changed)).accepted is found, (pattern, changed)
    finally:
        backend.close()
