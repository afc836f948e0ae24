"""The compiler asks jsonschema whether a value (an enum entry, a key) meets its subschema;
a question that gets no answer (a pattern past its time limit, a validator that fails) is
"not checked", a GrammarError, never "valid" (issue 22: any exception answered "valid", so
the grammar allowed a value no check had passed)."""

from __future__ import annotations

import json

import pytest

from engine.errors import GrammarError
from engine.grammar.compile import compile_schema
from engine.grammar.compilers.maskscope.normalize import Context
from engine.grammar.compilers.maskscope.resolve import Resolver

LONG_EVIL = "a" * 40 + "!"  # tests/engine/test_pathological_regex.py: hours for `regex`


def test_a_pattern_past_its_time_limit_is_not_checked_rather_than_valid():
    schema = {"type": "string", "enum": [LONG_EVIL, "b"], "pattern": "^(?!(a|aa)+$)"}
    with pytest.raises(GrammarError, match="not checked") as failed:
        compile_schema(json.dumps(schema), "maskscope")
    assert "took over 1 s" in failed.value.message and "\n" not in failed.value.message


def test_a_validator_that_fails_is_not_checked_rather_than_valid(monkeypatch):
    ctx = Context(Resolver({"type": "string"}))

    class Broken:
        def evolve(self, **_):
            return self

        def is_valid(self, value):
            raise RuntimeError("the validator broke")

    monkeypatch.setattr(ctx, "_validator", Broken())
    with pytest.raises(GrammarError, match=r"not checked.*RuntimeError: the validator broke"):
        ctx.valid({"type": "string"}, "x")
