"""Rewrites of llama.cpp's GBNF that llguidance needs; each keeps the language exactly.

- Bounded repeats: llama.cpp's converter writes maxLength: 40 as
  `(char (char ( ... char?)?)?)?`, forty levels deep. Both GBNF and Lark read
  `char{0,40}` as the same language, and llguidance's Lark parser refuses nesting
  that deep, so its backend gets the folded form.
- Rule names: llguidance's GBNF->Lark translation folds names that differ only in
  case, `-` or camelCase into one, and then refuses the grammar.
"""

from __future__ import annotations

import re

# An atom: a rule name, a character class, or a string literal.
_ATOM = r'(?:[A-Za-z][A-Za-z0-9_-]*|\[(?:\\.|[^\]\\])*\]|"(?:\\.|[^"\\])*")'
_LITERAL = re.compile(r'"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]')
# `(a (a ... (a)?)?)?`: the openers, the innermost `(a)?` or `a?`, then the closers. A
# literal or class is matched whole first, so text inside one is never taken for a chain.
_CHAIN = re.compile(
    rf"{_LITERAL.pattern}|\((?P<atom>{_ATOM}) (?P<openers>(?:\((?P=atom) )*)"
    rf"(?:\((?P=atom)\)|(?P=atom))\?(?P<closers>(?:\)\?)+)"
)


def _fold_chain(m: re.Match[str]) -> str:
    atom, openers, closers = m.group("atom", "openers", "closers")
    if atom is None:  # a literal or class
        return m.group(0)
    levels = 1 + len(openers) // (len(atom) + 2)  # each opener is `(` atom ` `
    closed = len(closers) // 2
    # Closers past this chain's levels belong to enclosing groups; if there are fewer, the
    # outer levels hold more than the atom and only the inner `closed` levels fold.
    folded = min(levels, closed)
    unfolded = f"({atom} " * (levels - folded)
    return f"{unfolded}{atom}{{0,{folded + 1}}}" + ")?" * (closed - folded)


def fold_bounded_repeats(gbnf: str) -> str:
    """Every nested-optional chain as `a{0,n}`, in one pass (maxLength: 65535 makes a chain
    65,535 levels deep, which also overflows llama.cpp's own recursive parser)."""
    return _CHAIN.sub(_fold_chain, gbnf)


_RULE_NAME = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*) ::= ", re.MULTILINE)
_NAME = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9_-]*(?![\w-])")


def _lark_key(name: str) -> str:
    """The name llguidance's GBNF->Lark translation gives a rule, up to letter case."""
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name.replace("-", "_")).lower()


def distinct_lark_names(gbnf: str) -> str:
    """Rename rules whose Lark names would clash, so llguidance can translate the grammar.

    The translation lower-cases names, turns `-` into `_` and splits camelCase, so schema
    names that differ only there (`$defs` with `Tender` and `tender`; `fooBar` and
    `foo-bar`) become one name, and it refuses the grammar. Later clashing rules get a
    numeric suffix, everywhere they are named; string literals and character classes are
    left alone, so the language is unchanged.
    """
    names = _RULE_NAME.findall(gbnf)
    taken = {"start"}  # the translation renames `root` to `start`
    renames: dict[str, str] = {}
    for name in names:
        if name == "root":
            continue
        key = _lark_key(name)
        if key not in taken:
            taken.add(key)
            continue
        i = 2
        while _lark_key(f"{name}-{i}") in taken or f"{name}-{i}" in names:
            i += 1
        renames[name] = f"{name}-{i}"
        taken.add(_lark_key(renames[name]))
    if not renames:
        return gbnf

    def rename(text: str) -> str:
        return _NAME.sub(lambda m: renames.get(m.group(0), m.group(0)), text)

    out = []
    for line in gbnf.splitlines(keepends=True):
        pos = 0
        for lit in _LITERAL.finditer(line):
            out.append(rename(line[pos : lit.start()]))
            out.append(lit.group(0))
            pos = lit.end()
        out.append(rename(line[pos:]))
    return "".join(out)
