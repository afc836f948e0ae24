"""The longest valid output in tokens, read off the grammar itself.

The GBNF the compiler wrote is the exact language the model can write (separators, formats,
patterns, bounded repeats, open objects), so the bound is computed on it rather than on the
schema: a repeat without an upper bound (`*`, `+`, `{m,}`) or a recursive rule anywhere in the
root's reach makes the output unbounded (None). Where it is bounded, the count assumes:

- fixed text (keys, punctuation, enum values, literals) costs what the model's tokenizer
  makes of it, each literal tokenised on its own (so slightly more than a whole output would);
- every free character (one matched by a character class: a string's characters, digits)
  costs one token, the worst case for a model that spells out text it cannot predict;
- a JSON escape (`\\n`, `\\u00e9`) counts as the one character it stands for;
- whitespace the grammar allows between tokens (our compiler: a newline and up to 20 spaces
  or tabs at each separator) costs what the tokenizer makes of its longest form (one or two
  tokens), not one per character;
- a character the vocabulary lacks, which a model writes as several byte tokens, counts one.

So it is the longest output a model writes as it normally tokenises, not a proof against
every possible tokenisation; the end-of-generation token is not counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

INF = float("inf")
_WS = frozenset(" \t\n\r")
_TOKEN = re.compile(
    r"""(?P<space>\s+|\#[^\n]*)
    |(?P<define>[A-Za-z0-9_-]+)\s*::=
    |(?P<lit>"(?:\\.|[^"\\])*")
    |(?P<cls>\[(?:\\.|[^\]\\])*\])
    |(?P<name>[A-Za-z0-9_-]+)
    |(?P<rep>\{\s*\d*\s*(?:,\s*\d*\s*)?\})
    |(?P<op>[()|?*+])""",
    re.VERBOSE | re.DOTALL,
)
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.DOTALL)
_NAMED_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
_MAX_CHAR = 0x10FFFF
_RANGE = -1


class GrammarSyntax(ValueError):
    """Text this reader does not understand as GBNF (the bound is then unknown)."""


@dataclass(frozen=True, slots=True)
class CharClass:
    ranges: tuple[tuple[int, int], ...]  # what it matches, negation applied, merged

    @property
    def empty(self) -> bool:
        return not self.ranges

    @property
    def whitespace(self) -> bool:
        return bool(self.ranges) and all(
            hi - lo < len(_WS) and all(chr(c) in _WS for c in range(lo, hi + 1))
            for lo, hi in self.ranges
        )

    def sample(self) -> str:
        """A character it matches, a space where it can."""
        if any(lo <= 32 <= hi for lo, hi in self.ranges):
            return " "
        return chr(self.ranges[0][0])


# Nodes: ("lit", text) ("cls", CharClass) ("ref", name) ("seq", [nodes]) ("alt", [nodes])
# ("rep", node, low, high|None)
Node = tuple[Any, ...]


def output_bound(gbnf: str, tokenize: Callable[[str], list[int]]) -> int | None:
    """The longest valid output in tokens under the assumptions above; None if unbounded
    or the grammar cannot be read."""
    try:
        rules = parse_gbnf(gbnf)
    except GrammarSyntax:
        return None
    if "root" not in rules:
        return None
    # Bounded or not is known without the tokenizer, which may be slow to load: ask first.
    if _Bound(rules, _characters).rule_cost("root") == INF:
        return None
    cost = _Bound(rules, tokenize).rule_cost("root")
    return None if cost == INF else int(cost)


def _characters(text: str) -> list[int]:
    return [0] * len(text)


def parse_gbnf(gbnf: str) -> dict[str, Node]:
    tokens: list[tuple[str, str]] = []
    pos = 0
    for match in _TOKEN.finditer(gbnf):
        if match.start() != pos:
            raise GrammarSyntax(f"unexpected {gbnf[pos : match.start()][:20]!r}")
        pos = match.end()
        kind = match.lastgroup
        if kind != "space":
            tokens.append((kind or "", match.group(kind or 0)))
    if pos != len(gbnf):
        raise GrammarSyntax(f"unexpected {gbnf[pos:][:20]!r}")
    rules: dict[str, Node] = {}
    reader = _Reader(tokens)
    while reader.more():
        kind, name = reader.take()
        if kind != "define":
            raise GrammarSyntax(f"expected a rule, not {name!r}")
        rules.setdefault(name, reader.alternatives())
    return rules


class _Reader:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.i = 0

    def more(self) -> bool:
        return self.i < len(self.tokens)

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "")

    def take(self) -> tuple[str, str]:
        token = self.peek()
        self.i += 1
        return token

    def alternatives(self) -> Node:
        branches = [self.sequence()]
        while self.peek() == ("op", "|"):
            self.take()
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def sequence(self) -> Node:
        items: list[Node] = []
        while True:
            kind, text = self.peek()
            if kind in ("end", "define") or (kind == "op" and text in "|)"):
                break
            items.append(self.postfix(self.atom()))
        return items[0] if len(items) == 1 else ("seq", items)

    def atom(self) -> Node:
        kind, text = self.take()
        if kind == "lit":
            return ("lit", _unescape(text[1:-1]))
        if kind == "cls":
            return ("cls", _char_class(text[1:-1]))
        if kind == "name":
            return ("ref", text)
        if (kind, text) == ("op", "("):
            inner = self.alternatives()
            if self.take() != ("op", ")"):
                raise GrammarSyntax("a group is not closed")
            return inner
        raise GrammarSyntax(f"unexpected {text!r}")

    def postfix(self, node: Node) -> Node:
        while True:
            kind, text = self.peek()
            if kind == "op" and text in "?*+":
                self.take()
                low, high = {"?": (0, 1), "*": (0, None), "+": (1, None)}[text]
                node = ("rep", node, low, high)
            elif kind == "rep":
                self.take()
                node = ("rep", node, *_bounds(text))
            else:
                return node


def _bounds(text: str) -> tuple[int, int | None]:
    inner = text[1:-1].replace(" ", "")
    if "," not in inner:
        return int(inner), int(inner)
    low, high = inner.split(",")
    return int(low or 0), (int(high) if high else None)


def _unescape(body: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if len(code) > 1:
            return chr(int(code[1:], 16))
        return _NAMED_ESCAPES.get(code, code)

    return _ESCAPE.sub(one, body)


def _char_class(body: str) -> CharClass:
    negated = body.startswith("^")
    if negated:
        body = body[1:]
    items: list[int] = []  # code points, _RANGE between the two ends of a range
    i = 0
    while i < len(body):
        match = _ESCAPE.match(body, i)
        if match:
            items.append(ord(_unescape(match.group(0))))
            i = match.end()
        elif body[i] == "-" and items and items[-1] != _RANGE and i + 1 < len(body):
            items.append(_RANGE)
            i += 1
        else:
            items.append(ord(body[i]))
            i += 1
    ranges: list[tuple[int, int]] = []
    j = 0
    while j < len(items):
        if j + 2 < len(items) and items[j + 1] == _RANGE:
            ranges.append((items[j], items[j + 2]))
            j += 3
        else:
            ranges.append((items[j], items[j]))
            j += 1
    merged = _merge(ranges)
    return CharClass(_complement(merged) if negated else merged)


def _merge(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def _complement(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in ranges:
        if lo > start:
            out.append((start, lo - 1))
        start = max(start, hi + 1)
    if start <= _MAX_CHAR:
        out.append((start, _MAX_CHAR))
    return tuple(out)


@dataclass
class _Info:
    productive: bool
    whitespace: bool
    witness: str | None  # the longest whitespace text, for whitespace-only rules
    cost: float


_DEAD = _Info(False, False, None, 0)  # a rule that matches nothing, or none by that name


class _Bound:
    """Each rule's facts, rules finished before the rules that name them."""

    def __init__(self, rules: dict[str, Node], tokenize: Callable[[str], list[int]]) -> None:
        self.rules = rules
        self.tokenize = tokenize
        self.info: dict[str, _Info] = {}
        self._counts: dict[str, int] = {}
        self.dead = _dead_rules(rules)

    def rule_cost(self, root: str) -> float:
        # An explicit stack: a long object is a chain of thousands of rules.
        in_progress: set[str] = set()
        stack: list[tuple[str, bool]] = [(root, False)]
        while stack:
            name, done = stack.pop()
            if name in self.info:
                continue
            if done:
                in_progress.discard(name)
                self.info[name] = self._rule_info(name)
                continue
            if name in in_progress:
                continue
            in_progress.add(name)
            stack.append((name, True))
            for ref in _refs(self.rules.get(name), self.dead):
                if ref in in_progress:  # recursion: infinitely many outputs
                    self.info[ref] = _Info(True, False, None, INF)
                elif ref not in self.info:
                    stack.append((ref, False))
        return self.info[root].cost if self.info[root].productive else INF

    def _rule_info(self, name: str) -> _Info:
        node = self.rules.get(name)
        if node is None or not self.productive(node):
            return _DEAD
        if self.whitespace(node):
            text = self.witness(node)
            cost = INF if text is None else len(self._count_text(text))
            return _Info(True, True, text, cost)
        return _Info(True, False, None, self.cost(node))

    def _count_text(self, text: str) -> list[int]:
        return self.tokenize(text) if text else []

    def productive(self, node: Node) -> bool:
        kind = node[0]
        if kind == "lit":
            return True
        if kind == "cls":
            return not node[1].empty
        if kind == "ref":
            info = self.info.get(node[1])
            return info is not None and info.productive
        if kind == "seq":
            return all(self.productive(n) for n in node[1])
        if kind == "alt":
            return any(self.productive(n) for n in node[1])
        return node[2] == 0 or self.productive(node[1])

    def whitespace(self, node: Node) -> bool:
        kind = node[0]
        if kind == "lit":
            return all(c in _WS for c in node[1])
        if kind == "cls":
            return node[1].whitespace
        if kind == "ref":
            info = self.info.get(node[1], _DEAD)
            return info.whitespace or not info.productive
        if kind in ("seq", "alt"):
            return all(self.whitespace(n) for n in node[1] if self.productive(n))
        return not self.productive(node[1]) or self.whitespace(node[1])

    def witness(self, node: Node) -> str | None:
        """The longest text of a whitespace-only node; None when unbounded."""
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "cls":
            return node[1].sample()
        if kind == "ref":
            info = self.info.get(node[1], _DEAD)
            return info.witness if info.productive else ""
        if kind == "seq":
            parts = [self.witness(n) for n in node[1]]
            return None if None in parts else "".join(p for p in parts if p)
        if kind == "alt":
            options = [self.witness(n) for n in node[1] if self.productive(n)]
            return None if None in options else max(options, key=len, default="")
        if not self.productive(node[1]):
            return ""
        inner = self.witness(node[1])
        if inner is None or (node[3] is None and inner):
            return None
        return inner * (node[3] or 0)

    def cost(self, node: Node) -> float:
        kind = node[0]
        if kind == "lit":
            return self._literal(node[1])
        if kind == "cls":
            return 1
        if kind == "ref":
            return self.info.get(node[1], _DEAD).cost
        if self.whitespace(node):
            text = self.witness(node)
            return INF if text is None else len(self._count_text(text))
        if kind == "seq":
            return sum(self.cost(n) for n in node[1])
        if kind == "alt":
            live = [n for n in node[1] if self.productive(n)]
            if _escaped_char(live):
                return 1
            return max((self.cost(n) for n in live), default=0)
        if not self.productive(node[1]):
            return 0
        inner = self.cost(node[1])
        if node[3] is None:
            return INF if inner else 0
        return inner * node[3]

    def _literal(self, text: str) -> int:
        count = self._counts.get(text)
        if count is None:
            count = self._counts[text] = len(self._count_text(text))
        return count


def _escaped_char(branches: list[Node]) -> bool:
    """`[^"\\\\...] | "\\\\" (...)`: one character of a JSON string, written plain or escaped."""
    plain = [b for b in branches if b[0] == "cls"]
    escaped = [b for b in branches if b[0] == "seq" and _is_backslash(b[1][0])]
    return len(plain) == 1 and len(plain) + len(escaped) == len(branches) and bool(escaped)


def _is_backslash(node: Node) -> bool:
    if node[0] == "lit":
        return node[1] == "\\"
    return node[0] == "cls" and node[1].ranges == ((92, 92),)


def _dead_rules(rules: dict[str, Node]) -> frozenset[str]:
    """The rules that match nothing (`ws-never`), found by their classes and each other."""
    dead: frozenset[str] = frozenset()
    while True:
        found = frozenset(name for name, body in rules.items() if _dead(body, dead))
        if found == dead:
            return dead
        dead = found


def _refs(node: Node | None, dead: frozenset[str]) -> list[str]:
    """The rules a node names, leaving out branches that can match nothing whatever those
    rules are (`"" | ws-never ws-break` does not recurse)."""
    if node is None or _dead(node, dead):
        return []
    kind = node[0]
    if kind == "ref":
        return [node[1]]
    if kind in ("seq", "alt"):
        return [r for n in node[1] for r in _refs(n, dead)]
    if kind == "rep":
        return _refs(node[1], dead)
    return []


def _dead(node: Node, dead: frozenset[str]) -> bool:
    """Matches nothing, as its character classes and the `dead` rules show."""
    kind = node[0]
    if kind == "cls":
        return node[1].empty
    if kind == "ref":
        return node[1] in dead
    if kind == "seq":
        return any(_dead(n, dead) for n in node[1])
    if kind == "alt":
        return all(_dead(n, dead) for n in node[1])
    if kind == "rep":
        return node[2] > 0 and _dead(node[1], dead)
    return False
