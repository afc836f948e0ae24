"""Patterns that make a backtracking matcher take minutes cannot hang anything.

`^(a+)+$` against n `a`s and a `!` takes Python's `re` 2^n steps (every way to split the
`a`s): 29 of them take it about 40 s, 40 would take a day, so a regression here fails
within a minute instead of hanging. `(a|b)*a(a|b){30}` has a DFA of 2^31 states. The limit
(10 s) is a hang check, not a speed check: each call here takes well under a second.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

from engine.check.inputs import Case, Instance
from engine.check.run import check_case
from engine.grammar.compile import compile_schema
from engine.masking.base import make_backend
from engine.schema import patterns
from engine.schema.validate import validation_issues
from engine.suite.format import Expectation

HANG = 10.0  # seconds
BACKTRACKS = "^(a+)+$"
EXPLODES = "(a|b)*a(a|b){30}"
EVIL = "a" * 29 + "!"


@contextmanager
def returns_quickly() -> Iterator[None]:
    start = time.monotonic()
    yield
    assert time.monotonic() - start < HANG


def test_the_automaton_matches_as_re_does() -> None:
    # The automaton replaces re.search only where it gives the same verdict: checked here on
    # patterns with repeats, alternatives, anchors, boundaries, flags and classes.
    cases = [
        BACKTRACKS, "^(a|aa)+$", r"(x+x+)+y", r"\d+\d+", r"^\w+(\s\w+)*$", r"(?i)^(AB|c)+$",
        r"^(a*)*$", r"(\bfo\b|bar)+", r"(?m)^x+y*$", r"^(?:(?i:a)|b)+B$", r"[^a]+[^b]+",
        r"(a{2,4}){2}$", r"^([A-Z][a-z]+ ?)+\Z", r"^(\+|-)?\d+(\.\d+)?$", "(a|b)*a(a|b){3}",
    ]  # fmt: skip
    alphabet = "aAbBcxy fo\nr!_1.+-"
    rng = random.Random(13)
    texts = ["", "a" * 12, "a" * 12 + "!", "ab" * 5, "foo bar", "x\n", "Ab Cd"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10))) for _ in range(300)]
    for pattern in cases:
        assert patterns._automaton(pattern, "") is not None, pattern  # the automaton is what runs
        for text in texts:
            assert patterns.search(pattern, text) == bool(re.search(pattern, text)), (pattern, text)
            whole = bool(re.fullmatch(pattern, text))
            assert patterns.fullmatch(pattern, text) == whole, (pattern, text)


def test_what_an_automaton_cannot_hold_keeps_re() -> None:
    assert patterns._built(r"^(a+)\1$")[0] is None  # a backreference
    assert patterns.search(r"^(a+)\1$", "aaaa") and not patterns.search(r"^(a+)\1$", "aaa")
    with pytest.raises(re.error):  # not a pattern at all: as re says, for callers that catch it
        patterns.search("(", "x")


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ({"type": "string", "pattern": BACKTRACKS}, EVIL),
        ({"propertyNames": {"pattern": BACKTRACKS}}, {EVIL: 1}),
        ({"patternProperties": {BACKTRACKS: False}, "additionalProperties": False}, {EVIL: 1}),
        ({"patternProperties": {BACKTRACKS: True}, "unevaluatedProperties": False}, {EVIL: 1}),
        (
            {
                "$schema": "http://json-schema.org/draft-04/schema#",
                "patternProperties": {BACKTRACKS: True},
                "additionalProperties": False,
            },
            {EVIL: 1},
        ),
        ({"type": "string", "pattern": EXPLODES}, "ab" * 5000),
        ({"type": "string", "pattern": "a*b"}, "a" * 100_000),  # re: n² steps, 20 s
    ],
    ids=["pattern", "propertyNames", "additional", "unevaluated", "draft-04", "dfa", "long"],
)
def test_validation_of_a_backtracking_pattern_returns(schema: Any, instance: Any) -> None:
    with returns_quickly():
        issues = validation_issues(instance, schema)
    want_valid = isinstance(instance, str) and instance.startswith("ab")
    assert (not issues) == want_valid, issues


def test_the_validators_message_names_the_pattern() -> None:
    (issue,) = validation_issues(EVIL, {"pattern": BACKTRACKS})
    assert BACKTRACKS in issue.message and "does not match" in issue.message


def test_a_suites_regex_expectation_returns() -> None:
    expect = Expectation("$.name", "regex", BACKTRACKS)
    with returns_quickly():
        ok, why = expect.check({"name": EVIL})
    assert not ok and "does not match" in why
    assert expect.check({"name": "a" * 40}) == (True, "")


NAMES = {"properties": {EVIL: {"type": "integer"}}, "patternProperties": {BACKTRACKS: {}}}
KEYS = {
    "patternProperties": {EXPLODES: {"type": "integer"}, "^(a|b)*b(a|b){28}c": {}},
    "additionalProperties": False,
}
SCHEMAS = [
    {"type": "string", "pattern": BACKTRACKS},
    {"type": "string", "pattern": EXPLODES},
    {"type": "object", **NAMES},
    {"type": "object", **KEYS},
    {"allOf": [{"type": "string", "pattern": EXPLODES}, {"pattern": "^(a|b)*b(a|b){25}$"}]},
]


@pytest.mark.parametrize("compiler", ["maskscope", "llamacpp", "llguidance"])
@pytest.mark.parametrize("schema", SCHEMAS, ids=["nested", "dfa", "names", "keys", "allOf"])
def test_no_compiler_hangs_on_a_pathological_pattern(compiler: str, schema: Any) -> None:
    # A declared name checked against patternProperties took our compiler 109 s.
    with returns_quickly():
        try:
            compile_schema(json.dumps(schema), compiler)
        except Exception as exc:  # a refusal is fine, as long as it is a readable one
            assert str(exc)


def test_where_keys_match_explosive_patterns_the_compiler_says_what_it_left_out() -> None:
    compiled = compile_schema(json.dumps(SCHEMAS[3]), "maskscope")
    assert any(u.keyword == "patternProperties" for u in compiled.unenforced)


def _masks_along(model, backend_name: str, schema: Any, text: str, every: int) -> list[bool]:
    compiled = compile_schema(json.dumps(schema), "maskscope")
    backend = make_backend(backend_name, model, compiled)
    try:
        allowed = []
        for i, token in enumerate(model.tokenize(text, add_special=False, parse_special=False)):
            if i % every == 0:
                allowed.append(bool(backend.full_mask()[token]))
            assert backend.check(np.array([token], dtype=np.int32))[0]
            backend.accept(token)
        return allowed
    finally:
        backend.close()


@pytest.mark.parametrize(("backend", "every"), [("llguidance", 3), ("llamacpp", 8)])
def test_masks_under_pathological_patterns_are_computed(model, backend: str, every: int) -> None:
    # What a run does at each step: the whole vocabulary's mask, inside the string.
    for pattern, text in ((BACKTRACKS, '"' + "a" * 40), (EXPLODES, '"' + "ab" * 20 + "a")):
        with returns_quickly():
            allowed = _masks_along(
                model, backend, {"type": "string", "pattern": pattern}, text, every
            )
        assert all(allowed)


@pytest.mark.parametrize("backend", ["llguidance", "llamacpp"])
def test_check_judges_an_instance_against_a_backtracking_pattern(model, backend: str) -> None:
    # What `maskscope check` does for each instance: feed it through the grammar, ask
    # jsonschema, and explain a disagreement.
    case = Case("evil.json", None, {"type": "string", "pattern": BACKTRACKS},
                (Instance(EVIL, False), Instance("a" * 29, True)))  # fmt: skip
    with returns_quickly():
        result = check_case(model, case, "maskscope", backend)
    assert result.error is None
    assert [(v.valid, v.accepted) for v in result.verdicts] == [(False, False), (True, True)]
