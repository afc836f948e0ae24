"""Every `pattern` and `patternProperties` key in the MaskBench dev schemas: how many become
a grammar, and llama.cpp reads each one. Skipped where the shared data is not checked out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.grammar.compilers.maskscope.rules import Rules
from engine.grammar.compilers.maskscope.strings import regex_problem, regex_rule
from engine.grammar.judge.llama_parser import check_gbnf

DEV = Path(__file__).parents[3] / "../shared/data/maskbench-dev"


def patterns(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        if isinstance(value.get("pattern"), str):
            yield value["pattern"]
        if isinstance(value.get("patternProperties"), dict):
            yield from value["patternProperties"]
        for child in value.values():
            yield from patterns(child)
    elif isinstance(value, list):
        for child in value:
            yield from patterns(child)


@pytest.mark.skipif(not DEV.is_dir(), reason="../shared/data/maskbench-dev is not here")
def test_dev_patterns_become_grammars_llama_cpp_reads() -> None:
    found = sorted({p for f in DEV.glob("*.json") for p in patterns(json.loads(f.read_text()))})
    refused = {p: regex_problem(p) for p in found if regex_problem(p)}
    assert len(refused) <= len(found) // 20, refused  # at least 95% translate
    for pattern in set(found) - set(refused):
        rules = Rules()
        expr = regex_rule(rules, pattern, "$", [])
        assert expr is not None
        check_gbnf(rules.gbnf(f'"\\"" {expr} "\\""'))
