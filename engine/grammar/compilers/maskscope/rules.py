"""GBNF under construction: named rules, literals and character classes.

Every part of the compiler writes its rules through one `Rules`, so that identical bodies
share one name and the grammar stays small. The text is GBNF as llama.cpp reads it, and
as llguidance's `gbnf_to_lark` translates it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from engine.grammar.compilers.maskscope.charsets import complement, normalize, without_surrogates

# Digits a number may run to where the schema leaves its length open: without a cap, Gemma 3
# 270M writes `180.000000...` until max_tokens. 20 hold every 64-bit integer, and a double's
# 17 significant digits after a few zeros; digits that a schema's own bounds fix come on top
# (numbers.py). llama-cpp-python's converter caps integer parts at 16.
NUMBER_DIGITS = 20
# A run of digits after the first: an integer part's, or a fraction's.
MORE_DIGITS = f"[0-9]{{0,{NUMBER_DIGITS - 1}}}"

# A character a JSON string holds as itself: anything but `"`, `\` and controls. Written
# as char_class writes it (tests/engine/grammar/test_utf8_soundness.py holds them equal).
_JSON_PLAIN = "[ -!#-\\[\\]-\ud7ff\ue000-\U0010ffff]"

# The JSON building blocks every grammar may use; added on first use.
PRIMITIVES: dict[str, str] = {
    # Bounded, so that a model cannot spend a whole run on whitespace.
    "ws": '( " " | "\\n" [ \\t]{0,20} )? ws-break',
    # Matches only the empty text. llguidance's gbnf_to_lark turns every rule without
    # recursion into one greedy lexeme, and its lexer cannot back out of a long lexeme
    # (`, "b": 1`) once the text leaves it for a shorter one (`,` then `"a"`): valid
    # objects were refused. This rule recurses, so every rule that names `ws` stays a
    # parser rule, with punctuation, keys and values as small lexemes.
    "ws-break": '"" | ws-never ws-break',
    # Matches nothing on either engine. llama.cpp never matches code point 0 (it ends
    # every decoded token), so it stops at the first class; llguidance reads the pair as
    # one lexeme, NUL then a class with no character in it. That empty class alone does
    # not do: llama.cpp decodes bytes 0xF5-0xFF as code points past U+10FFFF, which a
    # negated class lets through, so lone byte tokens passed as whitespace.
    "ws-never": "[\\x00] [^\\x00-\U0010ffff]",
    # Positive, as every class Maskscope writes (char_class): a negated class on llama.cpp
    # also takes the byte sequences past U+10FFFF that no UTF-8 text holds.
    "json-char": f'{_JSON_PLAIN} | "\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F]{{4}} )',
    "json-string": '"\\"" json-char* "\\""',
    "json-int": f'"-"? ( "0" | [1-9] {MORE_DIGITS} )',
    # No exponent: `maskscope check` writes numbers positionally, and so should a model.
    "json-number": f'json-int ( "." [0-9] {MORE_DIGITS} )?',
    "json-bool": '"true" | "false"',
    "json-null": '"null"',
    "json-value": "json-object | json-array | json-string | json-number | json-bool | json-null",
    "json-object": '"{" ws ( json-kv ( "," ws json-kv )* )? "}" ws',
    "json-kv": 'json-string ws ":" ws json-value',
    "json-array": '"[" ws ( json-value ( "," ws json-value )* )? "]" ws',
}
_NAME = re.compile(r"[a-z][a-z0-9-]*")


class Rules:
    """Named GBNF rules; `add` returns a name, reusing it for a body seen before."""

    def __init__(self) -> None:
        self._by_body: dict[str, str] = {}
        self._bodies: dict[str, str] = {}  # name -> body, in definition order
        self._used: set[str] = set()
        self._counts: dict[str, int] = {}  # names given per base: finding the next is O(1)

    def add(self, hint: str, body: str) -> str:
        """A rule for `body`, named after `hint`; the same body always gets the same name."""
        found = self._by_body.get(body)
        if found is not None:
            return found
        name = self.reserve(hint)
        self.define(name, body)
        return name

    def reserve(self, hint: str) -> str:
        """A fresh name to define later: for rules that refer to themselves ($ref cycles)."""
        base = re.sub(r"[^a-z0-9]+", "-", hint.lower()).strip("-") or "r"
        if base[0].isdigit() or base in PRIMITIVES or base == "root":
            base = f"r-{base}"
        n = self._counts.get(base, 0)
        name = base if n == 0 else f"{base}-{n + 1}"
        while name in self._used:  # a base that is another base's numbered name
            n += 1
            name = f"{base}-{n + 1}"
        self._counts[base] = n + 1
        self._used.add(name)
        return name

    def define(self, name: str, body: str) -> None:
        self._bodies[name] = body
        self._by_body.setdefault(body, name)

    def gbnf(self, root_body: str) -> str:
        """The whole grammar: `root`, the rules it reaches, and the primitives they name."""
        rules = _reachable({"root": root_body, **self._bodies})
        lines = [f"{name} ::= {body}" for name, body in rules.items()]
        lines += [f"{name} ::= {PRIMITIVES[name]}" for name in _primitives_used(rules.values())]
        return "\n".join(lines) + "\n"


def _reachable(rules: dict[str, str]) -> dict[str, str]:
    """The rules `root` reaches, in definition order: a compiler may write rules it ends up
    not using (a branch found to allow nothing), and those may name rules never defined."""
    seen, todo = set(), ["root"]
    while todo:
        name = todo.pop()
        if name in seen or name not in rules:
            continue
        seen.add(name)
        todo += _NAME.findall(_strip_literals(rules[name]))
    return {name: body for name, body in rules.items() if name in seen}


def _primitives_used(bodies: Iterable[str]) -> list[str]:
    todo = [n for body in bodies for n in _NAME.findall(_strip_literals(body)) if n in PRIMITIVES]
    seen: list[str] = []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.append(name)
        todo += [n for n in _NAME.findall(_strip_literals(PRIMITIVES[name])) if n in PRIMITIVES]
    return sorted(seen)


_LITERAL_OR_CLASS = re.compile(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]')


def _strip_literals(body: str) -> str:
    return _LITERAL_OR_CLASS.sub(" ", body)


def _escape_char(ch: str, special: str) -> str:
    code = ord(ch)
    if ch in special or ch == "\\":
        # llguidance's gbnf_to_lark knows no `\-` or `\^`; a hex escape means the same.
        return f"\\x{code:02X}" if ch in "-^" else "\\" + ch
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02X}"
    if 0xD800 <= code <= 0xDFFF or code in (0x2028, 0x2029):
        return f"\\u{code:04X}"
    return ch


def literal(text: str) -> str:
    """A GBNF literal matching exactly `text` (empty text: the empty literal `""`)."""
    return '"' + "".join(_escape_char(c, '"') for c in text) + '"'


def char_class(ranges: Iterable[tuple[int, int]], negate: bool = False) -> str:
    """A GBNF character class over code point ranges, both ends included; `negate` takes
    every other character.

    Always written positive and without surrogates: llama.cpp decodes any byte sequence,
    including the overlong, surrogate and past-U+10FFFF ones that are not UTF-8, and a
    negated class lets the last two through."""
    merged = normalize(ranges)
    parts = []
    for lo, hi in complement(merged) if negate else without_surrogates(merged):
        a, b = _escape_char(chr(lo), "]^-["), _escape_char(chr(hi), "]^-[")
        parts.append(a if lo == hi else f"{a}-{b}")
    return "[" + "".join(parts) + "]"


def alternatives(options: Iterable[str]) -> str:
    """`( a | b | ... )`, without duplicates, in the order given."""
    unique = list(dict.fromkeys(options))
    if len(unique) == 1:
        return unique[0]
    return "( " + " | ".join(unique) + " )"
