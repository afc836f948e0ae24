"""JSON values as text the way instances are written, and grammars for finite sets of them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from engine.grammar.maskscope.rules import Rules, alternatives, char_class, literal

# What may follow a backslash in a JSON string, besides `u` and four hex digits.
_ESCAPES = '"\\/bfnrt'


def json_equal(a: Any, b: Any) -> bool:
    """JSON Schema's equality: 1 == 1.0, but true is not 1, and order matters in arrays."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def unique_values(values: Iterable[Any]) -> list[Any]:
    """The values once each (JSON equality), in the order given."""
    out: list[Any] = []
    for value in values:
        if not any(json_equal(value, seen) for seen in out):
            out.append(value)
    return out


def number_text(value: int | float) -> str:
    """A number as instances are written: positional, 1.0 -> 1, 1e-05 -> 0.00001."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return format(Decimal(repr(value)), "f")
    return str(value)


def json_text(value: Any) -> str:
    """The value written as `maskscope check` writes instances."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return number_text(value)
    if isinstance(value, dict):
        items = (f"{json.dumps(k, ensure_ascii=False)}: {json_text(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    return "[" + ", ".join(json_text(v) for v in value) + "]"


def values_rule(rules: Rules, values: Iterable[Any]) -> str:
    """Exactly these values. Scalars are literals; objects and arrays are written as
    structure (with `ws`), so that llguidance lexes them as it lexes other JSON: one long
    literal would be a lexeme competing with the `{` of every other object there."""
    return alternatives(_value_rule(rules, v) for v in values)


def _value_rule(rules: Rules, value: Any) -> str:
    if isinstance(value, dict):
        members = [
            f'{literal(json.dumps(k, ensure_ascii=False))} ws ":" ws {_value_rule(rules, v)} ws'
            for k, v in value.items()
        ]
        return rules.add("const-object", '"{" ws ' + ' "," ws '.join(members) + ' "}"')
    if isinstance(value, list):
        items = [f"{_value_rule(rules, v)} ws" for v in value]
        return rules.add("const-array", '"[" ws ' + ' "," ws '.join(items) + ' "]"')
    return literal(json_text(value))


def string_except(rules: Rules, names: Iterable[str]) -> str:
    """Any JSON string (quotes included) except these ones, as written by json.dumps.

    A trie over the names' escaped text: at each node the string may end (unless a name
    ends there), go on into the trie, or leave it with any other character.
    """
    units = sorted({tuple(_units(json.dumps(n, ensure_ascii=False)[1:-1])) for n in names})
    if not units:
        return "json-string"
    rest = rules.add("string-rest", 'json-char* "\\""')
    # One rule, quotes included: the key stays one lexeme, like a literal key beside it.
    return rules.add("key", '"\\"" ' + _trie_rule(rules, units, rest))


def _units(text: str) -> list[str]:
    """The escaped text cut into JSON characters: `a`, `\\n`, `\\u0001`."""
    out, i = [], 0
    while i < len(text):
        size = 1 if text[i] != "\\" else (6 if text[i + 1] == "u" else 2)
        out.append(text[i : i + size])
        i += size
    return out


def _trie_rule(rules: Rules, names: list[tuple[str, ...]], rest: str) -> str:
    children: dict[str, list[tuple[str, ...]]] = {}
    ends_here = False
    for name in names:
        if not name:
            ends_here = True
        else:
            children.setdefault(name[0], []).append(name[1:])
    options = [] if ends_here else ['"\\""']
    for unit, tails in children.items():
        options.append(f"{literal(unit)} {_trie_rule(rules, tails, rest)}")
    plain = [ord(u) for u in children if len(u) == 1]
    others = [char_class([(0x22, 0x22), (0x5C, 0x5C), (0, 0x1F)] + [(c, c) for c in plain], True)]
    escapes = [u[1] for u in children if len(u) == 2]
    kept = [(ord(c), ord(c)) for c in _ESCAPES if c not in escapes]
    others.append('"\\\\" ( ' + (char_class(kept) + " | " if kept else "") + '"u" [0-9a-fA-F]{4} )')
    options.append(f"( {' | '.join(others)} ) {rest}")
    return rules.add("key-other", alternatives(options))
