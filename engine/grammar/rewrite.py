"""Rewrites of llama.cpp's GBNF; each keeps the language exactly.

- Bounded repeats: llama.cpp's converter writes maxLength: 40 as
  `(char (char ( ... char?)?)?)?`, forty levels deep. Both GBNF and Lark read
  `char{0,40}` as the same language. llguidance's Lark parser refuses nesting that
  deep and llama.cpp's own recursive parser overflows on it, so schema_to_gbnf
  folds it for both backends.
- Rule names: llguidance's GBNF->Lark translation folds names that differ only in
  case, `-` or camelCase into one, and then refuses the grammar.
"""

from __future__ import annotations

import re

# A string literal or a character class.
_LITERAL = re.compile(r'"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]')
# An atom: a rule name, or a literal or class.
_ATOM = rf"(?:[A-Za-z][A-Za-z0-9_-]*|{_LITERAL.pattern})"
_ATOM_ONLY = re.compile(_ATOM)
# A unit: one or more atoms in sequence, such as `char` or `"," space item`.
_UNIT = rf"{_ATOM}(?: {_ATOM})*"
# `(u (u ... (u)?)?)?`: the openers, the innermost `(u)?` (or `a?` for one atom), then the
# closers. A literal or class is matched whole first, so nothing inside one is a chain.
_CHAIN = re.compile(
    rf"{_LITERAL.pattern}|\((?P<unit>{_UNIT}) (?P<openers>(?:\((?P=unit) )*)"
    rf"(?:\((?P=unit)\)|(?P<bare>(?P=unit)))\?(?P<closers>(?:\)\?)+)"
)


def _fold_chain(m: re.Match[str]) -> str:
    unit, openers, closers = m.group("unit", "openers", "closers")
    if unit is None:  # a literal or class
        return m.group(0)
    single = _ATOM_ONLY.fullmatch(unit) is not None
    if m.group("bare") is not None and not single:  # `a b?` is not `(a b)?`
        return m.group(0)
    levels = 1 + len(openers) // (len(unit) + 2)  # each opener is `(` unit ` `
    closed = len(closers) // 2
    # Closers past this chain's levels belong to enclosing groups; if there are fewer, the
    # outer levels hold more than the unit and only the inner `closed` levels fold.
    folded = min(levels, closed)
    unfolded = f"({unit} " * (levels - folded)
    repeated = unit if single else f"({unit})"
    return f"{unfolded}{repeated}{{0,{folded + 1}}}" + ")?" * (closed - folded)


def fold_bounded_repeats(gbnf: str) -> str:
    """Every nested-optional chain as `a{0,n}`, in one pass (maxLength: 65535 makes a chain
    65,535 levels deep, which also overflows llama.cpp's own recursive parser)."""
    return _CHAIN.sub(_fold_chain, gbnf)


_RULE_NAME = re.compile(r"^([A-Za-z0-9_-]+) ::= ", re.MULTILINE)
# A rule reference: a whole name between spaces, `(`, `|` and a repeat mark (not the
# numbers inside `{0,5}`).
_NAME = re.compile(r"(?<![^\s(|])[A-Za-z0-9_-]+(?![^\s)?*+{|])")


def _lark_key(name: str) -> str:
    """The name llguidance's GBNF->Lark translation gives a rule, up to letter case."""
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name.replace("-", "_")).lower()


def distinct_lark_names(gbnf: str) -> str:
    """Rename rules whose Lark names would clash or be invalid, so llguidance can translate
    the grammar.

    The translation lower-cases names, turns `-` into `_` and splits camelCase, so schema
    names that differ only there (`$defs` with `Tender` and `tender`; `fooBar` and
    `foo-bar`) become one name, and it refuses the grammar; a name that does not start
    with a letter (`--device-kv`) is not a Lark name at all. Such rules are renamed
    everywhere they are named; string literals and character classes are left alone, so
    the language is unchanged.
    """
    names = _RULE_NAME.findall(gbnf)
    existing = set(names)
    taken = {"start"}  # the translation renames `root` to `start`
    renames: dict[str, str] = {}
    for name in names:
        if name == "root":
            continue
        # A name must start with a letter in Lark (a `$defs` key of "" or "-" makes `-`).
        base = name if name[0].isalpha() else f"r{name}"
        new, i = base, 2
        while _lark_key(new) in taken or (new != name and new in existing):
            new, i = f"{base}-{i}", i + 1
        taken.add(_lark_key(new))
        if new != name:
            renames[name] = new
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
