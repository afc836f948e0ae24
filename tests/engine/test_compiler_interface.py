"""Every compiler sits behind the one interface (engine/grammar/compile.py): a row per name
in engine.settings.COMPILERS, whose cheap report (gaps_of) is what its compile reports."""

from __future__ import annotations

import json

import pytest

from engine.grammar.compile import compile_schema, gaps_of
from engine.settings import COMPILERS

SCHEMA = {
    "type": "object",
    "properties": {"email": {"type": "string", "format": "email", "maxLength": 80}},
    "required": ["email"],
}


@pytest.mark.parametrize("compiler", COMPILERS)
def test_the_cheap_report_is_the_compiles_report(compiler):
    compiled = compile_schema(json.dumps(SCHEMA), compiler)
    assert compiled.compiler == compiler
    gaps = gaps_of(SCHEMA, compiler)
    assert gaps is not None
    assert {(g.path, g.keyword) for g in gaps} == {(g.path, g.keyword) for g in compiled.unenforced}


def test_an_unknown_compiler_has_no_report():
    assert gaps_of(SCHEMA, "nonesuch") is None
