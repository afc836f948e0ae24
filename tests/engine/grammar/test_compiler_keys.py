"""The key automaton (keys.py) classes a key by exactly the patterns Python's re finds in it,
and each class's grammar accepts exactly its keys."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.check.feed import grammar_accepts
from engine.grammar.compilers.maskscope.keys import key_classes
from engine.grammar.compilers.maskscope.rules import Rules

PATTERNS = ["f.o", "^x-", "^a+$", "[0-9]{2}", "b|_", "^(ab|ba)?c$", "o$"]
NAMES = ["foo", "x-y", "ab"]
KEYS = st.text(alphabet='abcfox-_19\n"\\é', max_size=6)


def signature(classes, key: str) -> frozenset[int]:
    state = classes.start
    for ch in key:
        code = ord(ch)
        state = next(
            t for ranges, t in classes.moves[state] if any(a <= code <= b for a, b in ranges)
        )
    return classes.signature(state)


@settings(max_examples=300, deadline=None)
@given(chosen=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=3, unique=True), key=KEYS)
def test_a_key_matches_exactly_the_patterns_re_finds_in_it(chosen, key):
    classes = key_classes(chosen, NAMES)
    expected = {i for i, p in enumerate(chosen) if re.search(p, key)}
    assert signature(classes, key) == frozenset(expected | ({-1} if key in NAMES else set()))


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(chosen=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=2, unique=True), key=KEYS)
def test_each_class_grammar_accepts_its_keys_only(model, chosen, key):
    classes = key_classes(chosen, NAMES)
    mine = signature(classes, key)
    for wanted in classes.signatures:
        rules = Rules()
        rule = classes.key_rule(rules, wanted)
        text = json.dumps(key, ensure_ascii=False)
        assert grammar_accepts(model, rules.gbnf(rule), text) == (wanted == mine)
