r"""A case's expected values as one line of text, for a table cell, and back.

    $.currency = "USD"; $.total = 384.5 ± 0.01; $.number ~ /A-\d+/; $.email absent

`path = value` compares exactly (the value is JSON; a bare word is read as a string),
`path = N ± T` numerically within a tolerance (`+-` works too), `path ~ /regex/` by a
full regex match, `path absent` wants no such key and `path absent or null` no key or a
null. Expectations are separated by `;`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from engine.errors import MaskscopeError
from engine.suite.format import Expectation

_TOLERANCE = re.compile(r"^(?P<value>.+?)\s*(?:±|\+-)\s*(?P<tolerance>[^\s]+)$")
_REGEX_END = re.compile(r"/\s*(?:;|$)")
# `$.email absent`, `$.email absent or null`: words after the path, no operator.
_ABSENT = re.compile(r"^(?P<path>.+?)\s+(?P<form>absent(?:\s+or\s+null)?)\s*$")
_ABSENT_WORDS = {"absent": "absent", "absent_or_null": "absent or null"}


class ExpectedTextError(MaskscopeError):
    """An expected-values cell that cannot be read."""

    kind = "suite"


def expectations_text(expected: tuple[Expectation, ...]) -> str:
    return "; ".join(_one_text(e) for e in expected)


def _one_text(e: Expectation) -> str:
    if e.kind in _ABSENT_WORDS:
        return f"{e.path} {_ABSENT_WORDS[e.kind]}"
    if e.kind == "regex":
        return f"{e.path} ~ /{e.value}/"
    if e.kind == "tolerance":
        return f"{e.path} = {_json(e.value)} ± {_json(e.tolerance)}"
    return f"{e.path} = {_json(e.value)}"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def parse_expected(text: str) -> dict[str, Any]:
    """The suite file's "expected" object for the cell's text; ExpectedTextError in words."""
    out: dict[str, Any] = {}
    rest = text.strip()
    while rest:
        path, op, rest = _path_and_operator(rest)
        if op in _ABSENT_WORDS:
            spec: Any = {op: True}
        elif op == "~":
            spec, rest = _regex(path, rest)
        else:
            value_text, _, rest = _split_top(rest)
            spec = _value(path, value_text.strip())
        if path in out:
            raise ExpectedTextError(f"{path} is expected twice")
        out[path] = spec
        rest = rest.strip()
    return out


def _path_and_operator(text: str) -> tuple[str, str, str]:
    quote = False
    for i, ch in enumerate(text):
        if ch == '"':
            quote = not quote
        elif not quote and ch in "=~":
            path = text[:i].strip()
            if not path:
                raise ExpectedTextError(f"a JSON path such as $.field comes before {ch!r}")
            return path, ch, text[i + 1 :].lstrip()
        elif not quote and ch == ";":
            break
    part, _, rest = _split_top(text)
    absent = _ABSENT.match(part.strip())
    if absent:
        form = "absent_or_null" if "null" in absent["form"] else "absent"
        return absent["path"], form, rest
    raise ExpectedTextError(
        f"{part.strip()!r} is not 'path = value', 'path ~ /regex/' or 'path absent'"
    )


def _regex(path: str, text: str) -> tuple[dict[str, str], str]:
    end = _REGEX_END.search(text, 1) if text.startswith("/") else None
    if end is None:
        raise ExpectedTextError(f"{path} ~ needs a /regex/ between slashes")
    return {"regex": text[1 : end.start()]}, text[end.end() :]


def _split_top(text: str) -> tuple[str, str, str]:
    """Split at the first `;` outside JSON strings and brackets."""
    quote, escaped, depth = False, False, 0
    for i, ch in enumerate(text):
        if quote:
            escaped, quote = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            quote = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == ";" and depth <= 0:
            return text[:i], ";", text[i + 1 :]
    return text, "", ""


def _value(path: str, text: str) -> Any:
    if not text:
        raise ExpectedTextError(f"{path} = needs a value")
    tolerance = _TOLERANCE.match(text)
    if tolerance:
        value, limit = _number(tolerance["value"]), _number(tolerance["tolerance"])
        if value is None or limit is None:
            raise ExpectedTextError(f"{path}: 'N ± T' takes two numbers, not {text!r}")
        return {"value": value, "tolerance": limit}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        if text[:1] in '"[{':  # meant as JSON: say so rather than read it as a word
            raise ExpectedTextError(f"{path}: {text!r} is not JSON") from None
        return text
    return {"equals": value} if isinstance(value, dict) else value


def _number(text: str) -> float | int | None:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return value if ok else None
