"""JSON values as text the way instances are written, and grammars for finite sets of them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import Decimal
from typing import Any
from weakref import WeakKeyDictionary

from engine.grammar.compilers.maskscope.rules import (
    MORE_DIGITS,
    Rules,
    alternatives,
    char_class,
    literal,
)

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


def string_except(
    rules: Rules, names: Iterable[str], prefixes: Iterable[str] = (), lead: str = ""
) -> str:
    """Any JSON string (quotes included) that starts with `lead` and is none of `names`
    and starts with none of `prefixes` (all three as raw text, names and prefixes counted
    after `lead`); the text as json.dumps writes it.

    A trie over the escaped text: at each node the string may end (unless a name ends
    there), go on into the trie (unless a prefix ends there), or leave it with any other
    character.
    """
    names, prefixes = tuple(names), tuple(prefixes)
    memo = _EXCEPT_MEMO.setdefault(rules, {})
    key = (names, prefixes, lead)
    if key not in memo:
        memo[key] = _string_except(rules, names, prefixes, lead)
    return memo[key]


# Objects of one schema often exclude the same names again: the trie is built once each.
_EXCEPT_MEMO: WeakKeyDictionary[Rules, dict[tuple[Any, ...], str]] = WeakKeyDictionary()


def _string_except(
    rules: Rules, names: tuple[str, ...], prefixes: tuple[str, ...], lead: str
) -> str:
    cut = {tuple(_units(_escaped(n))): False for n in names}
    cut.update({tuple(_units(_escaped(p))): True for p in prefixes})
    head = literal(_escaped(lead)) + " " if lead else ""
    if not cut:
        return rules.add("key", f'"\\"" {head}json-char* "\\""') if lead else "json-string"
    rest = rules.add("string-rest", 'json-char* "\\""')
    # One rule, quotes included: the key stays one lexeme, like a literal key beside it.
    return rules.add("key", '"\\"" ' + head + _trie_rule(rules, cut, rest))


def _escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _units(text: str) -> list[str]:
    """The escaped text cut into JSON characters: `a`, `\\n`, `\\u0001`."""
    out, i = [], 0
    while i < len(text):
        size = 1 if text[i] != "\\" else (6 if text[i + 1] == "u" else 2)
        out.append(text[i : i + size])
        i += size
    return out


def _trie_rule(rules: Rules, cut: dict[tuple[str, ...], bool], rest: str) -> str:
    """`cut` maps each name (False) or prefix (True), as JSON characters, still ahead."""
    children: dict[str, dict[tuple[str, ...], bool]] = {}
    for units, is_prefix in cut.items():
        if units:
            children.setdefault(units[0], {})[units[1:]] = is_prefix
    options = [] if () in cut else ['"\\""']
    for unit, tails in children.items():
        if tails.get(()) is not True:  # past a prefix, every string is cut
            options.append(f"{literal(unit)} {_trie_rule(rules, tails, rest)}")
    plain = [ord(u) for u in children if len(u) == 1]
    others = [char_class([(0x22, 0x22), (0x5C, 0x5C), (0, 0x1F)] + [(c, c) for c in plain], True)]
    escapes = [u[1] for u in children if len(u) == 2]
    kept = [(ord(c), ord(c)) for c in _ESCAPES if c not in escapes]
    others.append('"\\\\" ( ' + (char_class(kept) + " | " if kept else "") + '"u" [0-9a-fA-F]{4} )')
    options.append(f"( {' | '.join(others)} ) {rest}")
    return rules.add("key-other", alternatives(options))


def number_except(rules: Rules, excluded: Iterable[Any], fraction: bool) -> str | None:
    """JSON numbers (integers only unless `fraction`) other than these integral values, as
    instances are written; None when one of them is not integral."""
    texts = set()
    for value in excluded:
        if isinstance(value, float) and not value.is_integer():
            return None
        texts.add(str(int(value)))
    if "0" in texts:
        texts.add("-0")
    whole = _digits_except(rules, {t for t in texts if not t.startswith("-")})
    negative = _digits_except(rules, {t[1:] for t in texts if t.startswith("-")})
    integer = rules.add("int-except", f'( {whole} | "-" {negative} )')
    if not fraction:
        return integer
    # An excluded integer may still start a number with a fraction that is not zero.
    tails = [literal(t) for t in sorted(texts)]
    odd = f'{alternatives(tails)} "." {MORE_DIGITS} [1-9]' if tails else None
    body = f'{integer} ( "." [0-9] {MORE_DIGITS} )?' + (f" | {odd}" if odd else "")
    return rules.add("number-except", body)


def _digits_except(rules: Rules, texts: set[str]) -> str:
    """`0 | [1-9][0-9]*` except these digit strings (a trie, as for keys)."""
    start = "" if "0" in texts else '"0" | '
    deeper = {t for t in texts if t != "0"}
    return rules.add("digits-except", f"( {start}{_digit_node(rules, deeper, '', first=True)} )")


def _digit_node(rules: Rules, texts: set[str], prefix: str, first: bool = False) -> str:
    """Digit strings going on from `prefix` (which is no complete text here unless absent
    from `texts`), never one of `texts`."""
    digits = "123456789" if first else "0123456789"
    ahead = {t[len(prefix)] for t in texts if t.startswith(prefix) and len(t) > len(prefix)}
    options = [] if (first or prefix in texts) else ['""']
    for d in sorted(ahead):
        options.append(f'"{d}" {_digit_node(rules, texts, prefix + d)}')
    others = [(ord(c), ord(c)) for c in digits if c not in ahead]
    if others:
        options.append(f"{char_class(others)} {MORE_DIGITS}")
    return rules.add("digits", alternatives(options) if options else '""')
