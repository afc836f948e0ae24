"""Fold llama.cpp's nested-optional spelling of bounded repeats into `{0,n}`.

llama.cpp's converter writes maxLength: 40 as `(char (char ( ... char?)?)?)?`,
forty levels deep. Both GBNF and Lark read `char{0,40}` as the same language,
and llguidance's Lark parser refuses nesting that deep, so its backend gets
the folded form. The rewrite only ever replaces a chain with its exact equal.
"""

from __future__ import annotations

import re

# An atom: a rule name, a character class, or a string literal.
_ATOM = r'(?:[A-Za-z][A-Za-z0-9_-]*|\[(?:\\.|[^\]\\])*\]|"(?:\\.|[^"\\])*")'
_OPTIONAL = re.compile(rf"(?<![\w\]\"-])({_ATOM})\?")
_PAREN_OPTIONAL = re.compile(rf"\(({_ATOM})\)\?")
_FOLD = re.compile(rf"\(({_ATOM}) \1\{{0,(\d+)\}}\)\?")


def fold_bounded_repeats(gbnf: str) -> str:
    out = []
    for line in gbnf.splitlines():
        if "?)?" not in line:
            out.append(line)
            continue
        line = _PAREN_OPTIONAL.sub(r"\1{0,1}", line)
        line = _OPTIONAL.sub(r"\1{0,1}", line)
        while True:
            folded = _FOLD.sub(lambda m: f"{m.group(1)}{{0,{int(m.group(2)) + 1}}}", line)
            if folded == line:
                break
            line = folded
        out.append(line)
    return "\n".join(out) + ("\n" if gbnf.endswith("\n") else "")
