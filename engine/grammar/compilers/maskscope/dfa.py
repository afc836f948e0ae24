"""Small deterministic automata over number text, and their GBNF.

Numeric keywords are regular languages over the characters of a JSON number: "x >= 1.5" and
"x is a multiple of 7" each have a small DFA, and their intersection is a product DFA. A DFA
written as GBNF, one rule per state, is deterministic: llama.cpp keeps one stack alive and
llguidance's lexer never backtracks.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import TypeVar
from weakref import WeakKeyDictionary

from engine.grammar.compilers.maskscope.rules import Rules, char_class, literal

ALPHABET = "-.0123456789"
# An exploration that reaches this many states gives up: the caller falls back to a looser
# grammar rather than spend the compile-time budget.
EXPLORE_LIMIT = 20_000
# States nested into one expression before a state gets a rule of its own.
_INLINE_DEPTH = 6


@dataclass(frozen=True, slots=True)
class Dfa:
    """States 0..n-1; a symbol missing from `edges[s]` rejects. Every state can still accept."""

    start: int
    edges: tuple[dict[str, int], ...]
    accepting: frozenset[int]

    @property
    def size(self) -> int:
        return len(self.edges)

    @property
    def empty(self) -> bool:
        return not self.edges

    def accepts(self, text: str) -> bool:
        if self.empty:
            return False
        state = self.start
        for symbol in text:
            found = self.edges[state].get(symbol)
            if found is None:
                return False
            state = found
        return state in self.accepting


S = TypeVar("S", bound=Hashable)


def explore(
    start: S,
    step: Callable[[S, str], S | None],
    accepts: Callable[[S], bool],
    limit: int = EXPLORE_LIMIT,
) -> Dfa | None:
    """The minimal DFA of the states reachable from `start`; None past `limit` states."""
    index: dict[S, int] = {start: 0}
    edges: list[dict[str, int]] = [{}]
    todo = deque([start])
    while todo:
        state = todo.popleft()
        out = edges[index[state]]
        for symbol in ALPHABET:
            nxt = step(state, symbol)
            if nxt is None:
                continue
            if nxt not in index:
                if len(index) >= limit:
                    return None
                index[nxt] = len(edges)
                edges.append({})
                todo.append(nxt)
            out[symbol] = index[nxt]
    accepting = {i for s, i in index.items() if accepts(s)}
    return minimize(Dfa(0, tuple(edges), frozenset(accepting)))


def intersect(a: Dfa, b: Dfa, limit: int = EXPLORE_LIMIT) -> Dfa | None:
    """Texts both accept; None when the product passes `limit` states."""
    if a.empty or b.empty:
        return EMPTY

    def step(pair: tuple[int, int], symbol: str) -> tuple[int, int] | None:
        x, y = a.edges[pair[0]].get(symbol), b.edges[pair[1]].get(symbol)
        return None if x is None or y is None else (x, y)

    def accepts(pair: tuple[int, int]) -> bool:
        return pair[0] in a.accepting and pair[1] in b.accepting

    return explore((a.start, b.start), step, accepts, limit)


EMPTY = Dfa(0, (), frozenset())


def minimize(dfa: Dfa) -> Dfa:
    """Drop states that can never accept, then merge equivalent ones (Moore's refinement)."""
    live = _live_states(dfa)
    if dfa.start not in live:
        return EMPTY
    order = sorted(live)
    # Targets as rows of state numbers, -1 for none or dead; block[-1] is the dead block.
    rows = [
        [out[c] if out.get(c) in live else -1 for c in ALPHABET]
        for out in (dfa.edges[s] for s in order)
    ]
    block = [int(s in dfa.accepting) for s in range(dfa.size)] + [-1]
    count = len(set(block[s] for s in order))
    while True:
        signatures: dict[tuple[int, ...], int] = {}
        refined = [-1] * (dfa.size + 1)
        for s, row in zip(order, rows, strict=True):
            key = (block[s], *[block[t] for t in row])
            refined[s] = signatures.setdefault(key, len(signatures))
        block = refined
        if len(signatures) == count:
            break
        count = len(signatures)
    # Renumber in breadth-first order from the start, so that output is stable.
    number: dict[int, int] = {block[dfa.start]: 0}
    todo = deque([dfa.start])
    edges: list[dict[str, int]] = [{}]
    accepting = set()
    seen = {block[dfa.start]}
    while todo:
        s = todo.popleft()
        here = number[block[s]]
        if s in dfa.accepting:
            accepting.add(here)
        for symbol, t in dfa.edges[s].items():
            if t not in live:
                continue
            if block[t] not in seen:
                seen.add(block[t])
                number[block[t]] = len(edges)
                edges.append({})
                todo.append(t)
            edges[here][symbol] = number[block[t]]
    return Dfa(0, tuple(edges), frozenset(accepting))


def _live_states(dfa: Dfa) -> set[int]:
    incoming: dict[int, set[int]] = {}
    for s, out in enumerate(dfa.edges):
        for t in out.values():
            incoming.setdefault(t, set()).add(s)
    live = set(dfa.accepting)
    todo = list(live)
    while todo:
        for s in incoming.get(todo.pop(), ()):
            if s not in live:
                live.add(s)
                todo.append(s)
    return live


def to_gbnf(rules: Rules, dfa: Dfa, hint: str, max_run: int | None = None) -> str:
    """A GBNF expression for the DFA's language; states reached from several places get rules.

    With `max_run`, a state's loop repeats at most that many times in a row (`[0-9]{0,19}`):
    fewer texts, but the same states reached, since a loop can always be cut short (a text
    that needs 26 digits to pass a bound still gets them). The same language written twice
    into one grammar (two fields with the same bounds) reuses the first one's rules.
    """
    written = _WRITTEN.setdefault(rules, {})
    edges = tuple(tuple(sorted(out.items())) for out in dfa.edges)
    key = (hint, dfa.start, dfa.accepting, edges, max_run)
    if key not in written:
        written[key] = _Writer(rules, dfa, hint, max_run).expression()
    return written[key]


_WRITTEN: WeakKeyDictionary[Rules, dict[object, str]] = WeakKeyDictionary()


class _Writer:
    def __init__(self, rules: Rules, dfa: Dfa, hint: str, max_run: int | None) -> None:
        self.rules, self.dfa, self.hint = rules, dfa, hint
        self.repeat = "*" if max_run is None else f"{{0,{max_run}}}"
        sources: dict[int, set[int]] = {}
        for s, out in enumerate(dfa.edges):
            for t in out.values():
                if t != s:
                    sources.setdefault(t, set()).add(s)
        self.shared = {t for t, srcs in sources.items() if len(srcs) > 1 or t == dfa.start}
        self.names: dict[int, str] = {}

    def expression(self) -> str:
        # GBNF has no empty language that both engines read: the caller says "unsatisfiable".
        assert not self.dfa.empty, "an empty language has no GBNF"
        start = self.dfa.start
        if start in self.shared and not self._is_leaf(start):
            return self._named(start)
        return self._body(start, 0)

    def _ref(self, state: int, depth: int) -> str:
        """The state inline, or by name when several states lead to it or nesting is deep."""
        if not self._is_leaf(state) and (state in self.shared or depth >= _INLINE_DEPTH):
            return self._named(state)
        return self._body(state, depth)

    def _named(self, state: int) -> str:
        if state not in self.names:
            self.names[state] = self.rules.reserve(self.hint)
            self.rules.define(self.names[state], self._body(state, 0))
        return self.names[state]

    def _is_leaf(self, state: int) -> bool:
        return all(t == state for t in self.dfa.edges[state].values())

    def _body(self, state: int, depth: int) -> str:
        """`loop* ( class next | ... )`, the choice optional where the state accepts."""
        out = self.dfa.edges[state]
        loop = [c for c, t in out.items() if t == state]
        targets: dict[int, list[str]] = {}
        for symbol, t in out.items():
            if t != state:
                targets.setdefault(t, []).append(symbol)
        options = []
        for t, symbols in sorted(targets.items(), key=lambda item: min(map(ord, item[1]))):
            rest = self._ref(t, depth + 1)
            for cls in _classes(symbols):
                options.append(_join(cls, rest))
        parts = [_repeat(_classes(loop), self.repeat)] if loop else []
        if options:
            choice = " | ".join(options)
            if state in self.dfa.accepting:
                parts.append(f"{choice}?" if _atom(choice) else f"( {choice} )?")
            elif len(options) > 1:
                parts.append(f"( {choice} )")
            else:
                parts.append(choice)
        return " ".join(parts)


_LEADING_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"(?=$| )')


def _join(first: str, rest: str) -> str:
    """`first rest`, with `"a" "bc"` written `"abc"` (chains of digits read as one literal),
    `[0-9] [0-9]*` written `[0-9]+` and `[0-9] [0-9]{0,19}` written `[0-9]{1,20}`."""
    if rest == f"{first}*":
        return f"{first}+"
    run = _RUN.fullmatch(rest)
    if run and run.group(1) == first:
        return f"{first}{{1,{int(run.group(2)) + 1}}}"
    lead = _LEADING_LITERAL.match(rest)
    if first.startswith('"') and lead:
        return f'"{first[1:-1]}{lead.group(1)}"{rest[lead.end() :]}'
    return f"{first} {rest}".strip()


def _atom(expression: str) -> bool:
    """One literal or class, which a quantifier may follow without parentheses."""
    return _LEADING_LITERAL.fullmatch(expression) is not None or (
        expression.startswith("[") and expression.endswith("]") and " " not in expression
    )


_RUN = re.compile(r"(.*)\{0,(\d+)\}")


def _repeat(classes: list[str], quantifier: str) -> str:
    return (
        f"{classes[0]}{quantifier}"
        if len(classes) == 1
        else f"( {' | '.join(classes)} ){quantifier}"
    )


def _classes(symbols: Iterable[str]) -> list[str]:
    """GBNF for a set of symbols: "-" on its own (llguidance refuses `\\-` in a class)."""
    return list(_classes_of(frozenset(symbols)))


@cache
def _classes_of(symbols: frozenset[str]) -> tuple[str, ...]:
    chars = sorted(symbols, key=ord)
    out = [literal("-")] if "-" in chars else []
    chars = [c for c in chars if c != "-"]
    if len(chars) == 1:
        out.append(literal(chars[0]))
    elif chars:
        ranges: list[tuple[int, int]] = []
        for code in map(ord, chars):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
        out.append(char_class(ranges))
    return tuple(out)
