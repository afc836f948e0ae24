"""Regular expressions as GBNF over the JSON-escaped text of a string.

The judge of a `pattern` is jsonschema, which runs Python's `re.search`; so the pattern is
read by Python's own parser and means what Python makes of it: `\\d` and `\\w` are Unicode
classes, `$` also matches before a final newline, and an unanchored pattern only has to
occur somewhere in the string. The grammar matches each character in the form json.dumps
writes it (`"` as `\\"`, a newline as `\\n`, ...), one grammar unit per character, so that
lengths count characters.
"""

from __future__ import annotations

import array
import json
import re
import re._constants as sre
import re._parser as sre_parse
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Literal

from engine.errors import GrammarError
from engine.grammar.compilers.maskscope.charsets import (
    ANY,
    MAX_CODE,
    SURROGATES,
    Ranges,
    complement,
    normalize,
    without_surrogates,
)
from engine.grammar.compilers.maskscope.rules import Rules, alternatives, literal

# llama.cpp's grammar engine crashes or refuses on repeats much longer than this.
MAX_REPEAT = 1000
# How many anchored alternatives `(^|x)...` may expand into before we give up.
_MAX_FORMS = 32


class RegexUnsupported(GrammarError):
    """The pattern cannot become a grammar (a lookaround, a backreference, ...)."""


# ---------------------------------------------------------------- character sets


@cache
def _all_chars() -> str:
    """Every code point but the surrogates, in order: Python's own engine scans it to learn
    which characters a class matches."""
    codes = array.array("I", range(SURROGATES[0]))
    codes.extend(range(SURROGATES[1] + 1, MAX_CODE + 1))
    return codes.tobytes().decode(f"utf-32-{sys.byteorder[0]}e")


def _index_to_code(i: int) -> int:
    return i if i < SURROGATES[0] else i + (SURROGATES[1] - SURROGATES[0] + 1)


@cache
def _matched_by(regex: str, flags: int) -> Ranges:
    """The characters that the one-character Python regex `regex` matches."""
    spans = re.finditer(f"(?:{regex})+", _all_chars(), flags)
    return normalize(
        [(_index_to_code(a), _index_to_code(b - 1)) for a, b in (m.span() for m in spans)]
    )


_CATEGORIES = {
    sre.CATEGORY_DIGIT: (r"\d", False),
    sre.CATEGORY_NOT_DIGIT: (r"\d", True),
    sre.CATEGORY_SPACE: (r"\s", False),
    sre.CATEGORY_NOT_SPACE: (r"\s", True),
    sre.CATEGORY_WORD: (r"\w", False),
    sre.CATEGORY_NOT_WORD: (r"\w", True),
}


def _category(code: object, flags: int) -> Ranges:
    regex, negate = _CATEGORIES[code]  # type: ignore[index]
    found = _matched_by(regex, flags & sre.SRE_FLAG_ASCII)
    return complement(found) if negate else found


def _case_closed(ranges: Ranges, flags: int) -> Ranges:
    """What a class matches under IGNORECASE: Python decides, for every character."""
    if not ranges:
        return ranges
    body = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges)
    return _matched_by(f"[{body}]", flags & (sre.SRE_FLAG_IGNORECASE | sre.SRE_FLAG_ASCII))


# ---------------------------------------------------------------- the regex as a tree


@dataclass(frozen=True, slots=True)
class Chars:
    ranges: Ranges


@dataclass(frozen=True, slots=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Repeat:
    item: Node
    lo: int
    hi: int | None  # None: unbounded


@dataclass(frozen=True, slots=True)
class Anchor:
    kind: Literal["start", "eol", "end"]  # `^`/`\A`; `$` (end or before a final \n); `\Z`


Node = Chars | Seq | Alt | Repeat | Anchor
EMPTY = Seq(())
_UNSUPPORTED = {
    sre.ASSERT: "a lookahead or lookbehind",
    sre.ASSERT_NOT: "a negative lookahead or lookbehind",
    sre.GROUPREF: "a backreference",
    sre.GROUPREF_EXISTS: "a conditional group",
    sre.ATOMIC_GROUP: "an atomic group",
    sre.POSSESSIVE_REPEAT: "a possessive repeat",
}


def parse(pattern: str, flags: int = 0) -> Node:
    """The pattern as a tree of character sets, sequences, alternatives and repeats."""
    try:
        parsed = sre_parse.parse(pattern, flags)
    except re.error as exc:
        # jsonschema cannot run it either; ECMA-262's own syntax then says what it means.
        ecma = _from_ecma(pattern)
        if ecma == pattern:
            raise RegexUnsupported(f"not a regular expression Python can read ({exc})") from None
        try:
            parsed = sre_parse.parse(ecma, flags)
        except re.error:
            raise RegexUnsupported(f"not a regular expression Python can read ({exc})") from None
    if parsed.state.flags & sre.SRE_FLAG_LOCALE:
        raise RegexUnsupported("the pattern depends on the locale")
    return _tree(list(parsed), parsed.state.flags)


_ECMA_PROPERTY = re.compile(r"\\([pP])\{([A-Za-z_]+)(?:=([A-Za-z_]+))?\}")
_ECMA_NAMED_GROUP = re.compile(r"\(\?<(?![=!])[A-Za-z_$][\w$]*>")
_CATEGORY_NAMES = {
    "Letter": "L",
    "Cased_Letter": "LC",
    "Uppercase_Letter": "Lu",
    "Lowercase_Letter": "Ll",
    "Titlecase_Letter": "Lt",
    "Modifier_Letter": "Lm",
    "Other_Letter": "Lo",
    "Mark": "M",
    "Nonspacing_Mark": "Mn",
    "Spacing_Mark": "Mc",
    "Enclosing_Mark": "Me",
    "Number": "N",
    "Decimal_Number": "Nd",
    "digit": "Nd",
    "Letter_Number": "Nl",
    "Other_Number": "No",
    "Punctuation": "P",
    "punct": "P",
    "Connector_Punctuation": "Pc",
    "Dash_Punctuation": "Pd",
    "Open_Punctuation": "Ps",
    "Close_Punctuation": "Pe",
    "Initial_Punctuation": "Pi",
    "Final_Punctuation": "Pf",
    "Other_Punctuation": "Po",
    "Symbol": "S",
    "Math_Symbol": "Sm",
    "Currency_Symbol": "Sc",
    "Modifier_Symbol": "Sk",
    "Other_Symbol": "So",
    "Separator": "Z",
    "Space_Separator": "Zs",
    "Line_Separator": "Zl",
    "Paragraph_Separator": "Zp",
    "Other": "C",
    "Control": "Cc",
    "cntrl": "Cc",
    "Format": "Cf",
    "Unassigned": "Cn",
    "Private_Use": "Co",
    "Surrogate": "Cs",
}


def _from_ecma(pattern: str) -> str:
    """ECMA-262 syntax Python lacks, in Python's: `\\p{L}` as its ranges, `(?<name>` as a
    plain group. A `\\p{Script=...}` it cannot know is left as it is (and so refused)."""
    pattern = _ECMA_NAMED_GROUP.sub("(?:", pattern)
    out, i, in_class = [], 0, False
    while i < len(pattern):
        found = _ECMA_PROPERTY.match(pattern, i) if pattern[i] == "\\" else None
        if found is not None and (ranges := _property(found)) is not None:
            body = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges)
            out.append(body if in_class else f"[{body}]")
            i = found.end()
            continue
        step = 2 if pattern[i] == "\\" else 1
        if pattern[i] == "[" and not in_class:
            in_class = True
            if pattern.startswith("^]", i + 1) or pattern.startswith("]", i + 1):
                step += pattern.index("]", i + 1) - i  # a leading `]` is a member
        elif pattern[i] == "]":
            in_class = False
        out.append(pattern[i : i + step])
        i += step
    return "".join(out)


def _property(found: re.Match[str]) -> Ranges | None:
    kind, name, value = found.groups()
    if value is not None:
        if name not in ("General_Category", "gc"):
            return None  # Script=, Script_Extensions=: no table here
        name = value
    code = _CATEGORY_NAMES.get(name, name)
    ranges = _general_category(code)
    if ranges is None:
        return None
    return complement(ranges) if kind == "P" else ranges


@cache
def _categories() -> dict[str, Ranges]:
    spans: dict[str, list[tuple[int, int]]] = {}
    for i, ch in enumerate(_all_chars()):
        code = _index_to_code(i)
        found = spans.setdefault(unicodedata.category(ch), [])
        if found and found[-1][1] == code - 1:
            found[-1] = (found[-1][0], code)
        else:
            found.append((code, code))
    return {cat: tuple(r) for cat, r in spans.items()}


def _general_category(code: str) -> Ranges | None:
    table = _categories()
    if code == "LC":
        return normalize([r for cat in ("Lu", "Ll", "Lt") for r in table.get(cat, ())])
    if len(code) == 1 and code.isupper():
        return normalize([r for cat, rs in table.items() if cat[0] == code for r in rs])
    if len(code) == 2 and code in {"Cs"} | set(table):
        return table.get(code, ())
    return None


def _tree(items: list, flags: int) -> Node:
    nodes = [_node(op, av, flags) for op, av in items]
    flat: list[Node] = []
    for n in nodes:
        flat.extend(n.items if isinstance(n, Seq) else (n,))
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def _node(op: object, av: object, flags: int) -> Node:
    if op in _UNSUPPORTED:
        raise RegexUnsupported(
            f"the pattern uses {_UNSUPPORTED[op]}, which a grammar cannot express"
        )
    if op is sre.LITERAL:
        return Chars(_chars([(av, av)], flags))  # type: ignore[list-item]
    if op is sre.NOT_LITERAL:
        return Chars(complement(_chars([(av, av)], flags)))  # type: ignore[list-item]
    if op is sre.ANY:
        dot = ANY if flags & sre.SRE_FLAG_DOTALL else complement(((10, 10),))
        return Chars(dot)
    if op is sre.IN:
        return Chars(_in(av, flags))  # type: ignore[arg-type]
    if op is sre.BRANCH:
        return Alt(tuple(_tree(list(b), flags) for b in av[1]))  # type: ignore[index]
    if op is sre.SUBPATTERN:
        _group, add, remove, body = av  # type: ignore[misc]
        return _tree(list(body), (flags | add) & ~remove)
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):  # laziness changes the match, not the language
        lo, hi, body = av  # type: ignore[misc]
        return Repeat(_tree(list(body), flags), lo, None if hi == sre.MAXREPEAT else hi)
    if op is sre.AT:
        return _anchor(av, flags)
    raise RegexUnsupported(f"the pattern uses {str(op).lower()}, which a grammar cannot express")


def _anchor(at: object, flags: int) -> Anchor:
    multiline = flags & sre.SRE_FLAG_MULTILINE
    if at is sre.AT_BEGINNING_STRING or (at is sre.AT_BEGINNING and not multiline):
        return Anchor("start")
    if at is sre.AT_END and not multiline:
        return Anchor("eol")
    if at is sre.AT_END_STRING:
        return Anchor("end")
    if at in (sre.AT_BOUNDARY, sre.AT_NON_BOUNDARY):
        raise RegexUnsupported("the pattern uses a word boundary (\\b, \\B)")
    raise RegexUnsupported("the pattern uses line anchors (the MULTILINE flag)")


def _chars(ranges: list[tuple[int, int]], flags: int) -> Ranges:
    found = without_surrogates(normalize(ranges))
    return _case_closed(found, flags) if flags & sre.SRE_FLAG_IGNORECASE else found


def _in(items: list[tuple[object, object]], flags: int) -> Ranges:
    negate = bool(items) and items[0][0] is sre.NEGATE
    ranges: list[tuple[int, int]] = []
    for op, av in items[1:] if negate else items:
        if op is sre.LITERAL:
            ranges.append((av, av))  # type: ignore[arg-type]
        elif op is sre.RANGE:
            ranges.append(av)  # type: ignore[arg-type]
        elif op is sre.CATEGORY:
            ranges.extend(_category(av, flags))
        else:
            raise RegexUnsupported(f"the pattern's class uses {str(op).lower()}")
    found = _chars(ranges, flags)
    return complement(found) if negate else found


# ---------------------------------------------------------------- lengths


def length_range(node: Node) -> tuple[int, int | None]:
    """The fewest and most characters `node` matches (None: no most)."""
    if isinstance(node, Chars):
        return (1, 1) if node.ranges else (0, 0)
    if isinstance(node, Anchor):
        return 0, 0
    if isinstance(node, Seq):
        lo, hi = 0, 0
        for item in node.items:
            a, b = length_range(item)
            lo += a
            hi = None if hi is None or b is None else hi + b
        return lo, hi
    if isinstance(node, Alt):
        ranges = [length_range(o) for o in node.options]
        his = [b for _, b in ranges]
        return min(a for a, _ in ranges), None if None in his else max(his)  # type: ignore[type-var]
    a, b = length_range(node.item)
    hi = None if node.hi is None or b is None else b * node.hi
    return a * node.lo, hi


# ---------------------------------------------------------------- search -> whole string


@dataclass(frozen=True, slots=True)
class Whole:
    """Every string that a pattern accepts, as alternatives of whole-string trees."""

    options: tuple[Node, ...]

    def length_range(self) -> tuple[int, int | None]:
        return length_range(Alt(self.options))


@lru_cache(maxsize=1024)
def whole_strings(pattern: str, flags: int = 0) -> Whole:
    """The strings `re.search(pattern, s)` finds a match in, as whole-string trees."""
    forms = _forms(parse(pattern, flags))
    return Whole(tuple(_whole(start, body, end) for start, body, end in forms))


_End = Literal["none", "eol", "end"]
_Form = tuple[bool, tuple[Node, ...], _End]


def _forms(node: Node) -> list[_Form]:
    """Split the tree into (anchored at the start?, body, end anchor) alternatives."""
    if isinstance(node, Alt):
        forms = [f for option in node.options for f in _forms(option)]
    else:
        forms = _seq_forms(list(node.items) if isinstance(node, Seq) else [node])
    if len(forms) > _MAX_FORMS:
        raise RegexUnsupported("the pattern's anchors are spread over too many alternatives")
    return forms


def _seq_forms(items: list[Node]) -> list[_Form]:
    start = False
    while items and isinstance(items[0], Anchor) and items[0].kind == "start":
        start, items = True, items[1:]
    end: _End = "none"
    while items and isinstance(items[-1], Anchor) and items[-1].kind != "start":
        end = "end" if end == "end" or items[-1].kind == "end" else "eol"  # type: ignore[union-attr]
        items = items[:-1]
    # `(^|x)...` and `...(x|$)`: an alternative that holds an anchor is split out.
    if items and isinstance(items[0], Alt) and _has_anchor(items[0]) and not start:
        return _spread(items[0], lambda o: [o, *items[1:], *_end_anchor(end)])
    if items and isinstance(items[-1], Alt) and _has_anchor(items[-1]) and end == "none":
        return _spread(items[-1], lambda o: [*_start_anchor(start), *items[:-1], o])
    if any(_has_anchor(i) for i in items):
        raise RegexUnsupported("the pattern has an anchor (^, $) inside, not at its ends")
    return [(start, tuple(items), end)]


def _spread(alt: Alt, around: Callable[[Node], list[Node]]) -> list[_Form]:
    forms: list[_Form] = []
    for option in alt.options:
        forms += _seq_forms(_flatten(tuple(around(option))))
    return forms


def _start_anchor(start: bool) -> list[Node]:
    return [Anchor("start")] if start else []


def _end_anchor(end: _End) -> list[Node]:
    return [] if end == "none" else [Anchor(end)]


def _has_anchor(node: Node) -> bool:
    if isinstance(node, Anchor):
        return True
    if isinstance(node, Seq):
        return any(_has_anchor(i) for i in node.items)
    if isinstance(node, Alt):
        return any(_has_anchor(o) for o in node.options)
    if isinstance(node, Repeat):
        return _has_anchor(node.item)
    return False


_ANYTHING = Repeat(Chars(ANY), 0, None)
_NEWLINE = Chars(((10, 10),))


def _whole(start: bool, body: tuple[Node, ...], end: _End) -> Node:
    items = list(_flatten(body))
    if not start:
        items = _trim(items, front=True)
    if end == "none":
        items = _trim(items, front=False)
    prefix = [] if start else [_ANYTHING]
    suffix = {"none": [_ANYTHING], "eol": [Repeat(_NEWLINE, 0, 1)], "end": []}[end]
    whole = [*prefix, *items, *suffix]
    if start is False and end == "none" and not items:
        whole = [_ANYTHING]  # an empty search matches every string
    return whole[0] if len(whole) == 1 else Seq(tuple(whole))


def _flatten(items: tuple[Node, ...]) -> list[Node]:
    out: list[Node] = []
    for item in items:
        out.extend(_flatten(item.items) if isinstance(item, Seq) else (item,))
    return out


def _trim(items: list[Node], front: bool) -> list[Node]:
    """Next to an unanchored end, `x*` adds nothing and `x{2,5}` is as good as `x{2}`:
    the rest of the repeat can be read as part of the surrounding text."""
    items = list(items)
    while items:
        i = 0 if front else -1
        edge = items[i]
        if not isinstance(edge, Repeat):
            break
        if edge.lo == 0:
            items.pop(i)
            continue
        items[i] = edge.item if edge.lo == 1 else Repeat(edge.item, edge.lo, edge.lo)
        break
    return _flatten(tuple(items))


# ---------------------------------------------------------------- lengths on whole strings


def bounded(whole: Whole, lo: int, hi: int | None) -> Whole | None:
    """The same strings restricted to lo..hi characters, or None when that cannot be written
    (only a pattern whose one variable part is a repeat of fixed width can be re-bounded)."""
    options: list[Node] = []
    for option in whole.options:
        for part in _split_newline(option):
            a, b = length_range(part)
            if a >= lo and (hi is None or (b is not None and b <= hi)):
                options.append(part)
                continue
            rebound = _rebound(part, lo, hi)
            if rebound is None:
                return None
            if rebound is not EMPTY_LANGUAGE:
                options.append(rebound)
    return Whole(tuple(options))


EMPTY_LANGUAGE = Chars(())


def _split_newline(option: Node) -> list[Node]:
    """`x$`: x, or x then a newline; each can then be bounded on its own."""
    items = list(option.items) if isinstance(option, Seq) else [option]
    if items and items[-1] == Repeat(_NEWLINE, 0, 1):
        base = items[:-1]
        return [_seq(base), _seq([*base, _NEWLINE])]
    return [option]


def _seq(items: list[Node]) -> Node:
    flat = _flatten(tuple(items))
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def _rebound(option: Node, lo: int, hi: int | None) -> Node | None:
    """The one variable part of a sequence re-bounded: a repeat of fixed width gets new
    bounds, an alternative is bounded option by option."""
    items = list(option.items) if isinstance(option, Seq) else [option]
    variable = [i for i, item in enumerate(items) if _fixed_width(item) is None]
    if not variable:  # of one length, outside the bounds
        return EMPTY_LANGUAGE
    if len(variable) != 1:
        return None
    at = variable[0]
    fixed = sum(length_range(item)[0] for i, item in enumerate(items) if i != at)
    part = items[at]
    if isinstance(part, Alt):
        spread = [_seq([*items[:at], o, *items[at + 1 :]]) for o in part.options]
        found = bounded(Whole(tuple(spread)), lo, hi)
        if found is None:
            return None
        return Alt(found.options) if found.options else EMPTY_LANGUAGE
    if not isinstance(part, Repeat) or not _fixed_width(part.item):
        return None
    width = _fixed_width(part.item) or 1
    k_lo = max(part.lo, -(-(lo - fixed) // width))
    k_his = [k for k in (part.hi, None if hi is None else (hi - fixed) // width) if k is not None]
    k_hi = min(k_his) if k_his else None
    if k_hi is not None and k_hi < k_lo:
        return EMPTY_LANGUAGE
    items[at] = Repeat(part.item, k_lo, k_hi)
    return _seq(items)


def _fixed_width(node: Node) -> int | None:
    lo, hi = length_range(node)
    return lo if lo == hi else None


# ---------------------------------------------------------------- GBNF


@dataclass
class Emitted:
    """GBNF for a tree, and the repeats it had to loosen for llama.cpp."""

    gbnf: str
    loosened: list[str]


def to_gbnf(rules: Rules, whole: Whole) -> Emitted:
    """GBNF matching the JSON-escaped text (no quotes) of the strings `whole` holds."""
    loosened: list[str] = []
    options = [_emit(rules, option, loosened) for option in whole.options]
    if not options:
        raise RegexUnsupported("no string satisfies the pattern and the lengths together")
    return Emitted(alternatives(options), loosened)


def _emit(rules: Rules, node: Node, loosened: list[str]) -> str:
    if isinstance(node, Chars):
        return _emit_chars(rules, node.ranges)
    if isinstance(node, Seq):
        return _emit_seq(rules, node.items, loosened)
    if isinstance(node, Alt):
        return alternatives([_emit(rules, o, loosened) for o in node.options])
    if isinstance(node, Repeat):
        return _emit_repeat(rules, node, loosened)
    raise AssertionError(f"anchor left in a whole-string tree: {node}")


def _emit_seq(rules: Rules, items: tuple[Node, ...], loosened: list[str]) -> str:
    parts: list[str] = []
    text = ""  # runs of single characters become one literal
    for item in items:
        single = _single_char(item)
        if single is not None:
            text += single
            continue
        if text:
            parts.append(literal(text))
            text = ""
        parts.append(_emit(rules, item, loosened))
    if text:
        parts.append(literal(text))
    return " ".join(parts) if parts else '""'


def _single_char(node: Node) -> str | None:
    if isinstance(node, Chars) and len(node.ranges) == 1 and node.ranges[0][0] == node.ranges[0][1]:
        return _escaped(node.ranges[0][0])
    return None


def _emit_repeat(rules: Rules, node: Repeat, loosened: list[str]) -> str:
    lo, hi = node.lo, node.hi
    if hi is not None and hi > MAX_REPEAT:
        loosened.append(f"a repeat of at most {hi} is left unbounded")
        hi = None
    if lo > MAX_REPEAT:
        loosened.append(f"a repeat of at least {lo} is only held to {MAX_REPEAT}")
        lo = MAX_REPEAT
    if hi == 0:
        return '""'
    item = node.item
    if isinstance(item, Repeat) and (lo, hi) == (0, 1) and item.lo <= 1:
        item, hi = item.item, item.hi  # (x{1,4})? is x{0,4}
    elif isinstance(item, Repeat) and hi is None and item.hi is None and lo <= 1 and item.lo <= 1:
        item, lo = item.item, lo * item.lo  # (x*)+ is x*, (x+)+ is x+
    inner = _emit(rules, item, loosened)
    if _QUANTIFIED.fullmatch(inner) or inner.endswith((" )*", " )+", " )?", "}")):
        # llguidance reads `( x{1,4} )?` as `x{1,4}?`, which it refuses: name the part.
        inner = rules.add("pattern-part", inner)
    elif not _ATOM.fullmatch(inner):
        inner = f"( {inner} )"
    if (lo, hi) == (1, 1):
        return inner
    suffix = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((lo, hi))
    if suffix is None:
        suffix = f"{{{lo}}}" if lo == hi else f"{{{lo},{'' if hi is None else hi}}}"
    return inner + suffix


_ATOM_TEXT = r'(?:[a-z][a-z0-9-]*|"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\])'
_ATOM = re.compile(_ATOM_TEXT)
_QUANTIFIED = re.compile(_ATOM_TEXT + r"(?:[*+?]|\{[0-9,]+\})")

# Characters json.dumps escapes; everything else is written as itself.
_ESCAPED: Ranges = ((0, 0x1F), (0x22, 0x22), (0x5C, 0x5C))


def _escaped(code: int) -> str:
    return json.dumps(chr(code), ensure_ascii=False)[1:-1]


def _emit_chars(rules: Rules, ranges: Ranges) -> str:
    if ranges == ANY:
        return "json-char"  # any character, in any of JSON's spellings
    if not ranges:
        raise RegexUnsupported("the pattern has a class that matches no character")
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return literal(_escaped(ranges[0][0]))
    raw = _intersect(ranges, complement(_ESCAPED))
    special = [c for lo, hi in _intersect(ranges, _ESCAPED) for c in range(lo, hi + 1)]
    options = []
    if raw:
        # Positive even where the negated class is shorter: llama.cpp lets a negated class
        # take byte sequences past U+10FFFF, which are not UTF-8 (rules.char_class).
        options.append(_class_text(raw))
    if special:
        options.append(_trie({_escaped(c) for c in special}))
    body = alternatives(options)
    return rules.add("pattern-char", body) if len(body) > 40 else body


def _class_text(ranges: Ranges) -> str:
    """`[...]` as both llama.cpp and llguidance read it: `-` and `^` as hex escapes, since
    neither takes `\\-` or `\\^`."""
    parts = []
    for lo, hi in ranges:
        a, b = _class_char(lo), _class_char(hi)
        parts.append(a if lo == hi else f"{a}-{b}")
    return "[" + "".join(parts) + "]"


def _class_char(code: int) -> str:
    ch = chr(code)
    if ch in "]-^[" or (code < 0x100 and not ch.isprintable()):
        return f"\\x{code:02X}"
    if ch == "\\":
        return "\\\\"
    # Written as itself: llguidance misreads `\\u0085` (as `\\u85`) and `\\U0001F600`.
    return ch


def _intersect(a: Ranges, b: Ranges) -> Ranges:
    out = []
    for lo, hi in a:
        for lo2, hi2 in b:
            if lo2 <= hi and lo <= hi2:
                out.append((max(lo, lo2), min(hi, hi2)))
    return normalize(out)


def _trie(strings: set[str]) -> str:
    """Alternatives for a few short strings, sharing their prefixes (`"\\\\" ["n]`)."""
    if len(strings) == 1:
        return literal(next(iter(strings)))
    nexts: dict[str, set[str]] = {}
    for s in strings:
        if s:
            nexts.setdefault(s[0], set()).add(s[1:])
    by_rest: dict[frozenset[str], list[str]] = {}
    for ch, rest in nexts.items():
        by_rest.setdefault(frozenset(rest), []).append(ch)
    options = []
    for rest, chars in by_rest.items():
        if len(chars) == 1 and len(rest) == 1:
            options.append(literal(chars[0] + next(iter(rest))))
            continue
        head = (
            literal(chars[0])
            if len(chars) == 1
            else _class_text(normalize([(ord(c), ord(c)) for c in chars]))
        )
        options.append(head if rest == {""} else f"{head} {_trie(set(rest))}")
    body = alternatives(options)
    return f"( {body} )?" if "" in strings else body
