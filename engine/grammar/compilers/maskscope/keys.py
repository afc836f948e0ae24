"""Object keys as a finite automaton: which patternProperties a key matches, exactly.

An additional key's value must satisfy every pattern the key matches, and
additionalProperties only when it matches none; a declared name is no additional key at
all. So keys fall into classes by the set of patterns they match (their signature). One
automaton over the declared names and every pattern tells the signature of any key; the
grammar of one class is that automaton with that signature's states accepting.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterable
from itertools import pairwise

from engine.errors import GrammarError
from engine.grammar.compilers.maskscope.charsets import ANY, without_surrogates
from engine.grammar.compilers.maskscope.regex import Alt, Anchor, Chars, Node, Repeat, Seq, parse
from engine.grammar.compilers.maskscope.rules import Rules, alternatives, char_class, literal

_TOP = 0x110000
_NAMES = -1  # the signature tag of declared names
_MAX_STATES = 100  # past this, elimination blows up: keep the reported fallback
_MAX_COPIES = 64
_MAX_TEXT = 40000  # characters of one key expression


class _Unsupported(Exception):
    """The patterns cannot become an automaton here (anchors inside, too large)."""


class KeysTooLarge(Exception):
    """One class of keys would be too long an expression to write."""


class _Nfa:
    def __init__(self) -> None:
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[tuple[tuple[int, int], ...], int]]] = []
        self.tags: dict[int, int] = {}

    def state(self) -> int:
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def build(self, node: Node, start: int) -> int:
        """States for `node` from `start`; returns the state where it ends."""
        if isinstance(node, Chars):
            end = self.state()
            self.edges[start].append((tuple(node.ranges), end))
            return end
        if isinstance(node, Seq):
            for item in node.items:
                start = self.build(item, start)
            return start
        if isinstance(node, Alt):
            end = self.state()
            for option in node.options:
                entry = self.state()
                self.eps[start].append(entry)
                self.eps[self.build(option, entry)].append(end)
            return end
        if isinstance(node, Repeat):
            return self._repeat(node, start)
        raise _Unsupported("an anchor inside the pattern")

    def _repeat(self, node: Repeat, start: int) -> int:
        if max(node.lo, node.hi or 0) > _MAX_COPIES:
            raise _Unsupported("a long repeat")
        for _ in range(node.lo):
            start = self.build(node.item, start)
        if node.hi is None:
            loop = self.state()
            self.eps[start].append(loop)
            self.eps[self.build(node.item, loop)].append(loop)
            return loop
        end = self.state()
        for _ in range(node.hi - node.lo):
            self.eps[start].append(end)
            start = self.build(node.item, start)
        self.eps[start].append(end)
        return end

    def any_loop(self, start: int) -> int:
        loop = self.state()
        self.eps[start].append(loop)
        self.edges[loop].append((ANY, loop))
        return loop

    def add_pattern(self, pattern: str, tag: int, start: int) -> None:
        """A search for the pattern anywhere in the key, as JSON Schema's patterns are."""
        tree = parse(pattern)
        for option in tree.options if isinstance(tree, Alt) else (tree,):
            items = list(option.items) if isinstance(option, Seq) else [option]
            entry = self.state()
            self.eps[start].append(entry)
            at = entry
            if items and isinstance(items[0], Anchor) and items[0].kind == "start":
                items.pop(0)
            else:
                at = self.any_loop(at)
            end_kind = None
            if items and isinstance(items[-1], Anchor) and items[-1].kind in ("eol", "end"):
                end_kind = items.pop().kind
            at = self.build(Seq(tuple(items)), at)
            if end_kind == "eol":  # `$` also matches before a final newline
                newline = self.state()
                self.eps[at].append(newline)
                self.edges[at].append((((10, 10),), newline))
                at = newline
            elif end_kind is None:
                at = self.any_loop(at)
            self.tags[at] = tag

    def add_literal(self, text: str, tag: int, start: int) -> None:
        at = start
        for ch in text:
            nxt = self.state()
            self.edges[at].append((((ord(ch), ord(ch)),), nxt))
            at = nxt
        self.tags[at] = tag


State = frozenset[int]


class KeyClasses:
    """The automaton over keys; `signatures` are the pattern sets some key matches."""

    def __init__(self, patterns: list[str], names: Iterable[str]) -> None:
        nfa = _Nfa()
        root = nfa.state()
        for name in names:
            nfa.add_literal(name, _NAMES, root)
        for i, pattern in enumerate(patterns):
            nfa.add_pattern(pattern, i, root)
        self._nfa = nfa
        self.start = self._closure({root})
        self.moves: dict[State, list[tuple[tuple[tuple[int, int], ...], State]]] = {}
        self._explore()

    def _closure(self, states: Iterable[int]) -> State:
        todo, seen = list(states), set(states)
        while todo:
            for nxt in self._nfa.eps[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return frozenset(seen)

    def _explore(self) -> None:
        todo = [self.start]
        while todo:
            state = todo.pop()
            if state in self.moves:
                continue
            if len(self.moves) >= _MAX_STATES:
                raise _Unsupported("too many key states")
            self.moves[state] = self._step(state)
            todo += [t for _, t in self.moves[state] if t not in self.moves]

    def _step(self, state: State) -> list[tuple[tuple[tuple[int, int], ...], State]]:
        edges = [e for s in state for e in self._nfa.edges[s]]
        cuts = sorted(
            {0, _TOP} | {p for ranges, _ in edges for lo, hi in ranges for p in (lo, hi + 1)}
        )
        starts = [[lo for lo, _ in ranges] for ranges, _ in edges]
        by_target: dict[State, list[tuple[int, int]]] = {}
        for lo, nxt in pairwise(cuts):
            hit = {
                t
                for (ranges, t), los in zip(edges, starts, strict=True)
                if _inside(lo, ranges, los)
            }
            by_target.setdefault(self._closure(hit), []).append((lo, nxt - 1))
        kept = ((without_surrogates(r), t) for t, r in by_target.items())
        return [(r, t) for r, t in kept if r]

    def signature(self, state: State) -> frozenset[int]:
        return frozenset(self._nfa.tags[s] for s in state if s in self._nfa.tags)

    @property
    def signatures(self) -> list[frozenset[int]]:
        """Every pattern set a key may match exactly (declared names left out)."""
        found = {self.signature(s) for s in self.moves}
        return sorted((s for s in found if _NAMES not in s), key=sorted)

    def key_rule(self, rules: Rules, wanted: frozenset[int]) -> str | None:
        """The keys (quotes included) whose signature is `wanted`; None when none is;
        KeysTooLarge when the expression would be too long.

        Written without rule cycles (states eliminated into one expression), so that
        llguidance takes the key as one lexeme: a cyclic rule would be lexed a character
        at a time, past its parser's limits."""
        accepting = {s for s in self.moves if self.signature(s) == wanted}
        live = set(accepting)
        grew = True
        while grew:
            grew = False
            for s, moves in self.moves.items():
                if s not in live and any(t in live for _, t in moves):
                    live.add(s)
                    grew = True
        if self.start not in live:
            return None
        block, moves = _minimal(self.moves, live, accepting)
        edges: dict[tuple[object, object], list[str | None]] = {}
        for b, out in moves.items():
            for ranges, t in out:
                edges.setdefault((b, t), []).append(rules.add("key-chars", _escaped_class(ranges)))
        for b in {block[s] for s in accepting}:
            edges.setdefault((b, "end"), []).append('"\\""')
        edges[("begin", block[self.start])] = [None]
        body = _eliminate(edges, list(moves))
        if body is None:
            raise KeysTooLarge(f"the keys of signature {sorted(wanted)} need too long a rule")
        return rules.add("key", f'"\\"" {body}')


Moves = dict[State, list[tuple[tuple[tuple[int, int], ...], State]]]


def _minimal(
    moves: Moves, live: set[State], accepting: set[State]
) -> tuple[dict[State, int], dict[int, list[tuple[tuple[tuple[int, int], ...], int]]]]:
    """The live part of the automaton with equivalent states merged (Moore's refinement):
    each state's block, and each block's moves by merged character ranges."""
    block = {s: int(s in accepting) for s in live}
    while True:
        shapes = {s: (block[s], _moves_by_block(moves[s], block)) for s in live}
        numbering: dict[object, int] = {}
        refined = {s: numbering.setdefault(shape, len(numbering)) for s, shape in shapes.items()}
        if len(numbering) == len(set(block.values())):
            break
        block = refined
    out: dict[int, list[tuple[tuple[tuple[int, int], ...], int]]] = {}
    for s in live:
        out.setdefault(block[s], [(ranges, b) for b, ranges in _moves_by_block(moves[s], block)])
    return block, out


def _moves_by_block(
    out: list[tuple[tuple[tuple[int, int], ...], State]], block: dict[State, int]
) -> tuple[tuple[int, tuple[tuple[int, int], ...]], ...]:
    merged: dict[int, list[tuple[int, int]]] = {}
    for ranges, t in out:
        if t in block:
            merged.setdefault(block[t], []).extend(ranges)
    return tuple(sorted((b, _coalesce(r)) for b, r in merged.items()))


def _coalesce(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(hi, out[-1][1]))
        else:
            out.append((lo, hi))
    return tuple(out)


def _eliminate(
    edges: dict[tuple[object, object], list[str | None]], states: list[object]
) -> str | None:
    """State elimination: the expression for paths from "begin" to "end"."""
    label = {pair: _union(options) for pair, options in edges.items()}
    for state in sorted(states, key=lambda s: sum(_degree(label, s))):
        loop = label.pop((state, state), "")
        star = f"( {loop} )*" if loop else None
        ins = [(p, e) for (p, q), e in label.items() if q == state]
        outs = [(q, e) for (p, q), e in label.items() if p == state]
        for p, _ in ins:
            label.pop((p, state))
        for q, _ in outs:
            label.pop((state, q))
        for p, before in ins:
            for q, after in outs:
                path = _concat(before, star, after)
                old = label.get((p, q), _MISSING)  # None is a label too: the empty text
                label[(p, q)] = path if old is _MISSING else _union([old, path])
                if len(label[(p, q)] or "") > _MAX_TEXT:
                    return None
    return label.get(("begin", "end"))


def _degree(label: dict[tuple[object, object], str | None], state: object) -> tuple[int, int]:
    ins = sum(1 for p, q in label if q == state)
    outs = sum(1 for p, q in label if p == state)
    return ins, outs


_MISSING = object()


def _union(options: list[str | None]) -> str | None:
    texts = list(dict.fromkeys(o for o in options if o))
    if None in options or "" in options:
        if not texts:
            return None
        return (
            f"{alternatives(texts)}?"
            if len(texts) == 1 and " " not in texts[0]
            else f"( {alternatives(texts)} )?"
        )
    return alternatives(texts)


def _concat(*parts: str | None) -> str | None:
    kept = [p for p in parts if p]
    return " ".join(kept) if kept else None


def key_classes(patterns: list[str], names: Iterable[str]) -> KeyClasses | None:
    """The key automaton, or None when a pattern is beyond it."""
    try:
        return KeyClasses(patterns, names)
    except (_Unsupported, GrammarError, RecursionError):
        return None


def _inside(point: int, ranges: tuple[tuple[int, int], ...], los: list[int]) -> bool:
    i = bisect_right(los, point) - 1
    return i >= 0 and ranges[i][0] <= point <= ranges[i][1]


def _escaped_class(ranges: tuple[tuple[int, int], ...]) -> str:
    """Characters of the decoded key, as json.dumps writes them inside a string."""
    plain: list[tuple[int, int]] = []
    special: list[int] = []
    for lo, hi in ranges:
        for cut_lo, cut_hi in _without(lo, hi, [(0, 0x1F), (0x22, 0x22), (0x5C, 0x5C)]):
            plain.append((cut_lo, cut_hi))
        special += [c for c in [*range(0, 0x20), 0x22, 0x5C] if lo <= c <= hi]
    options = [char_class(plain)] if plain else []
    controls = [c for c in special if c < 0x20]
    if len(controls) > 4:  # some control characters: any escape (keys never hold them)
        options.append('"\\\\" ( [bfnrt] | "u" [0-9a-fA-F]{4} )')
        special = [c for c in special if c >= 0x20]
    options += [literal(json.dumps(chr(c))[1:-1]) for c in special]
    return alternatives(options)


def _without(lo: int, hi: int, holes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    pieces = [(lo, hi)]
    for h_lo, h_hi in holes:
        nxt = []
        for a, b in pieces:
            if b < h_lo or a > h_hi:
                nxt.append((a, b))
                continue
            if a < h_lo:
                nxt.append((a, h_lo - 1))
            if b > h_hi:
                nxt.append((h_hi + 1, b))
        pieces = nxt
    return pieces
