"""JSON integers and numbers within a subschema's bounds, as GBNF.

First version: plain `json-int` / `json-number`; every numeric keyword is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.grammar.maskscope.rules import Rules
from engine.grammar.report import Unenforced

_NUMERIC_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


def integer_rule(rules: Rules, node: Mapping[str, Any], path: str, gaps: list[Unenforced]) -> str:
    """JSON integers within node's bounds and multipleOf (2020-12, numeric bounds)."""
    _report_all(node, path, gaps)
    return "json-int"


def number_rule(rules: Rules, node: Mapping[str, Any], path: str, gaps: list[Unenforced]) -> str:
    """JSON numbers (no exponent) within node's bounds, as exactly as a grammar can."""
    _report_all(node, path, gaps)
    return "json-number"


def _report_all(node: Mapping[str, Any], path: str, gaps: list[Unenforced]) -> None:
    for keyword in _NUMERIC_KEYWORDS:
        if keyword in node:
            gaps.append(Unenforced(path, keyword, "numeric bounds are not enforced yet"))
