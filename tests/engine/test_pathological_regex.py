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
import threading
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from typing import Any

import numpy as np
import pytest

from engine.check.inputs import FileInstance, SchemaCase
from engine.check.run import check_case
from engine.decode.loop import finish_run
from engine.errors import MaskscopeError, PatternTimeoutError
from engine.grammar.compile import compile_schema
from engine.masking.base import make_backend
from engine.records import FinishReason
from engine.schema import patterns
from engine.schema.validate import validation_issues
from engine.settings import GenerationSettings
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
    case = SchemaCase("evil.json", None, {"type": "string", "pattern": BACKTRACKS},
                (FileInstance(EVIL, False), FileInstance("a" * 29, True)))  # fmt: skip
    with returns_quickly():
        result = check_case(model, case, "maskscope", backend)
    assert result.error is None
    assert [(v.valid, v.accepted) for v in result.verdicts] == [(False, False), (True, True)]


# Patterns only a backtracking matcher can run: `regex` runs them, stopped after TIMEOUT_S.
LOOKAROUND = "^(?!(a|aa)+$)"  # the regex package too takes hours on forty a's and a !
BACKREFERENCE = "^(a|aa)+\\1$"
LONG_EVIL = "a" * 40 + "!"
GUARD_S = 30.0  # a hang guard, not a speed check: each call here stops after TIMEOUT_S


def _in_a_thread(call: Any) -> Any:
    """call()'s result or exception; the test fails, rather than hangs, if it never ends."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = call()
        except Exception as exc:  # carried back to the test
            out["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(GUARD_S)
    assert not worker.is_alive(), "the match did not stop"
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_patterns_with_lookarounds_or_backreferences_get_a_time_limit() -> None:
    # The route, not its speed: a pattern that could take long and that no automaton holds
    # goes to the matcher that can be stopped; one that cannot take long keeps re.
    timed = [LOOKAROUND, BACKREFERENCE, "(?=(a+)+b)", "(?>(a|aa)+)!", "(a)?(?(1)(a|aa)+|c)$"]
    for pattern in timed:
        assert patterns._needs_a_timeout(pattern, "x"), pattern
    assert not patterns._needs_a_timeout(r"^(a+)\1$", "x")  # one repeat, a short text
    assert not patterns._needs_a_timeout(BACKTRACKS, "x")  # the automaton holds it
    assert patterns._needs_a_timeout(r"(?=x)?a*b", "a" * (patterns.LONG_TEXT + 1))


def test_a_bounded_matcher_agrees_with_re() -> None:
    cases = [
        LOOKAROUND, BACKREFERENCE, r"^(?=.*\d)(?=.*[a-z])\w+$", r"(?<=x)(ab|b)+\b", r"(\w+)\s+\1",
        r"(?i)^(?!.*ab)(a|b)+$", r"(?>a+|b)+c", r"^(a)?(?(1)b+|c+)$", r"(?m)^(?!x)\w+ ?\w*(?<!z)$",
    ]  # fmt: skip
    rng = random.Random(13)
    alphabet = "aAbBcxz 1_\n"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9))) for _ in range(300)]
    for pattern in cases:
        assert patterns._needs_a_timeout(pattern, ""), pattern  # regex is what runs
        for text in texts:
            assert patterns.search(pattern, text) == bool(re.search(pattern, text)), (pattern, text)
            whole = bool(re.fullmatch(pattern, text))
            assert patterns.fullmatch(pattern, text) == whole, (pattern, text)


@pytest.mark.parametrize("pattern", [LOOKAROUND, BACKREFERENCE], ids=["lookaround", "backref"])
def test_validation_past_the_time_limit_says_so_in_one_line(pattern: str) -> None:
    with pytest.raises(PatternTimeoutError) as raised:
        _in_a_thread(lambda: validation_issues(LONG_EVIL, {"type": "string", "pattern": pattern}))
    message = str(raised.value)
    assert isinstance(raised.value, MaskscopeError) and "\n" not in message
    assert f"/{pattern}/" in message and "41 characters" in message
    assert "backtracks too much" in message


def test_a_benign_lookaround_still_validates_both_ways() -> None:
    schema = {"type": "string", "pattern": r"^(?=.*\d)(?!.*\s)\w{6,}$"}  # a password rule
    assert _in_a_thread(lambda: validation_issues("secret1", schema)) == ()
    (issue,) = _in_a_thread(lambda: validation_issues("secret one", schema))
    assert "does not match" in issue.message
    names = {"propertyNames": {"pattern": r"^(?!_)\w+$"}}
    assert not validation_issues({"ok": 1}, names) and validation_issues({"_no": 1}, names)


def test_a_suites_regex_expectation_past_the_time_limit_is_a_failure_that_says_why() -> None:
    expect = Expectation("$.name", "regex", LOOKAROUND + ".*")
    ok, why = _in_a_thread(lambda: expect.check({"name": LONG_EVIL}))
    assert not ok and why.startswith("$.name cannot be judged: the pattern ")
    assert expect.check({"name": "b"}) == (True, "")


LOOKAROUNDS = [
    {"type": "string", "pattern": LOOKAROUND},
    {"type": "string", "pattern": BACKREFERENCE},
    # a declared name the compiler checks against a pattern only regex runs: timed out
    {"type": "object", "properties": {LONG_EVIL: {}}, "patternProperties": {LOOKAROUND: {}}},
]


@pytest.mark.parametrize("compiler", ["maskscope", "llamacpp", "llguidance"])
@pytest.mark.parametrize("schema", LOOKAROUNDS, ids=["lookaround", "backref", "names"])
def test_no_compiler_hangs_on_a_lookaround_or_a_backreference(compiler: str, schema: Any) -> None:
    def compiled() -> str:
        try:
            return compile_schema(json.dumps(schema), compiler).gbnf
        except MaskscopeError as exc:  # a refusal is fine, as long as it is a readable one
            return str(exc)

    assert _in_a_thread(compiled)


def test_jsonschema_still_matches_patterns_where_install_bounds_them(monkeypatch) -> None:
    # jsonschema's keyword modules are private: a release that moves its pattern matching
    # elsewhere would leave every pattern unbounded, silently. This says where to look.
    assert patterns.install() == list(patterns.MODULES), (
        f"jsonschema {version('jsonschema')} no longer has re in each of {patterns.MODULES}: "
        "find where it calls re.search now and update patterns.MODULES"
    )
    seen: list[tuple[str, str]] = []
    monkeypatch.setattr(patterns, "search", lambda p, s: seen.append((p, s)) or True)
    validation_issues("x", {"pattern": "p1"})
    validation_issues({"k": 1}, {"patternProperties": {"p2": {}}, "additionalProperties": False})
    validation_issues({"k": 1}, {"patternProperties": {"p3": {}}, "unevaluatedProperties": False})
    draft4 = "http://json-schema.org/draft-04/schema#"
    validation_issues({"k": 1}, {"$schema": draft4, "patternProperties": {"p4": {}}})
    for pattern in ("p1", "p2", "p3", "p4"):
        assert any(p == pattern for p, _ in seen), (
            f"jsonschema {version('jsonschema')} matched {pattern} without patterns.search: "
            f"its keyword code moved out of {patterns.MODULES}"
        )


def test_a_jsonschema_that_moved_its_modules_validates_unbounded(monkeypatch, caplog) -> None:
    import jsonschema._utils

    monkeypatch.setattr(patterns, "MODULES", ("jsonschema._gone", "jsonschema._utils"))
    monkeypatch.setattr(jsonschema._utils, "re", re)  # as a jsonschema that never was bounded
    with caplog.at_level("WARNING", logger=patterns.__name__):
        assert patterns.install() == ["jsonschema._utils"]
    assert "jsonschema._gone does not match patterns with re" in caplog.text
    monkeypatch.setattr(jsonschema._utils, "re", types.SimpleNamespace())  # re gone from it
    assert patterns.install() == []
    assert validation_issues("ab", {"pattern": "^a(?=b)"}) == ()


def test_check_says_an_instance_past_the_time_limit_cannot_be_judged(model) -> None:
    # `maskscope check` on a pattern only regex runs: the case ends with the reason, no hang.
    case = SchemaCase("evil.json", None, {"type": "string", "pattern": LOOKAROUND},
                (FileInstance(LONG_EVIL, True),))  # fmt: skip
    result = _in_a_thread(lambda: check_case(model, case, "maskscope", "llguidance"))
    assert result.error is not None
    assert result.error.startswith("jsonschema cannot judge instance 1: the pattern /")


def test_a_run_whose_output_cannot_be_judged_in_time_keeps_its_result_counted_invalid() -> None:
    schema = json.dumps({"type": "string", "pattern": LOOKAROUND})
    timings = {"total_ms": 1.0, "setup_ms": 0.0, "prompt_ms": 0.0, "forward_ms": 0.0}
    end = FinishReason.END_OF_GENERATION
    settings = GenerationSettings(max_tokens=16)
    text = json.dumps(LONG_EVIL)
    result = _in_a_thread(
        lambda: finish_run(
            text, compile_schema(schema), end, 12, "", mask_ms=0.0, settings=settings, **timings
        )
    )
    assert result.text == json.dumps(LONG_EVIL) and not result.valid
    (issue,) = result.errors
    assert issue.message.startswith("not checked: the pattern /^(?!(a|aa)+$)/ took over")
