"""JSON strings with minLength/maxLength, pattern and format, as GBNF (first version).

This first version enforces only that the value is a JSON string; every string keyword it
meets is reported, so that the rest of the compiler can import it already.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.grammar.maskscope.rules import Rules
from engine.grammar.report import Unenforced

_STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format")


def string_rule(rules: Rules, node: Mapping[str, Any], path: str, gaps: list[Unenforced]) -> str:
    """A GBNF expression for one whole JSON string (quotes included) satisfying node's
    minLength/maxLength, pattern and format; what it cannot enforce goes to `gaps`."""
    for keyword in _STRING_KEYWORDS:
        if keyword in node:
            gaps.append(Unenforced(path, keyword, "not translated to grammar yet"))
    return "json-string"


def regex_rule(rules: Rules, pattern: str, path: str, gaps: list[Unenforced]) -> str | None:
    """A GBNF expression for the JSON-escaped text (no quotes) of strings containing a match
    of `pattern`; None when the pattern cannot be translated (the caller reports it)."""
    return None
