"""`pattern` and `patternProperties` judged in bounded time.

jsonschema runs `re.search`, a backtracking matcher: `^(a+)+$` against forty `a`s and a
`!` takes minutes (`a*b` against a long text, quadratic time), and Python cannot interrupt
a match from another thread. So a pattern that can backtrack badly (two repeats, or
alternatives under a repeat), or any repeat over a long text, is matched here by
simulating its automaton, a set of positions read once per character: time grows with the
text times the pattern, never exponentially, and the verdict is the same, since only
whether a match exists is asked. Each character class is still judged by Python's own `re`
(one character at a time), so `\\d`, `\\w`, case folding and inline flags mean what they
mean to jsonschema. A pattern an automaton cannot express (a backreference, a lookaround,
an atomic group) or too large to build keeps `re.search`: the one known gap.

`install` puts this `search` in place of `re.search` in jsonschema's keyword modules, the
only places it matches patterns against instances.
"""

from __future__ import annotations

import re
import re._compiler as sre_compile
import re._constants as sre
import re._parser as sre_parse
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import Any

# Past this many automaton states (`(a{1,300}){1,300}`) the automaton is not built.
MAX_STATES = 50_000
# Past this length even one repeat is slow in re: `a*b` against 30,000 `a`s takes 2 s.
LONG_TEXT = 2_000
_VARIABLE = (sre.MAX_REPEAT, sre.MIN_REPEAT)


class _Unsupported(Exception):
    """The pattern needs a backtracking matcher (or too big an automaton)."""


@dataclass(slots=True)
class _State:
    """One automaton state: reads a character, tests a position, or forks."""

    reads: Callable[[str], bool] | None = None
    at: Callable[[str, int], bool] | None = None
    next: list[int] = field(default_factory=list)


class _Automaton:
    """A Thompson automaton, built back to front so that each part knows what follows."""

    def __init__(self, parsed: sre_parse.SubPattern) -> None:
        self.states: list[_State] = [_State()]  # state 0: the match
        self._parsed = parsed
        self.start = self._seq(list(parsed), parsed.state.flags, 0)

    def _add(self, state: _State) -> int:
        if len(self.states) >= MAX_STATES:
            raise _Unsupported("too many states")
        self.states.append(state)
        return len(self.states) - 1

    def _seq(self, items: list[tuple[Any, Any]], flags: int, out: int) -> int:
        for op, av in reversed(items):
            out = self._item(op, av, flags, out)
        return out

    def _item(self, op: Any, av: Any, flags: int, out: int) -> int:
        if op in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN):
            return self._add(_State(reads=self._reader(op, av, flags), next=[out]))
        if op is sre.BRANCH:
            return self._add(_State(next=[self._seq(list(b), flags, out) for b in av[1]]))
        if op is sre.SUBPATTERN:
            _group, add, remove, body = av
            return self._seq(list(body), (flags | add) & ~remove, out)
        if op in _VARIABLE:
            return self._repeat(av, flags, out)
        if op is sre.AT:
            return self._add(_State(at=_position_test(av, flags), next=[out]))
        raise _Unsupported(str(op))

    def _repeat(self, av: Any, flags: int, out: int) -> int:
        lo, hi, body = av
        if hi == sre.MAXREPEAT:
            loop = self._add(_State())  # forks into the body (back to itself) or on
            self.states[loop].next = [self._seq(list(body), flags, loop), out]
            cur = loop
        else:
            cur = out
            for _ in range(hi - lo):
                cur = self._add(_State(next=[self._seq(list(body), flags, cur), out]))
        for _ in range(lo):
            cur = self._seq(list(body), flags, cur)
        return cur

    def _reader(self, op: Any, av: Any, flags: int) -> Callable[[str], bool]:
        """Python's own verdict on one character, for this class under these flags."""
        state = self._parsed.state
        body = sre_parse.SubPattern(state, [(op, av)])
        scoped = (sre.SUBPATTERN, (None, flags & ~state.flags, state.flags & ~flags, body))
        one = sre_compile.compile(sre_parse.SubPattern(state, [scoped]), 0)
        return lru_cache(maxsize=256)(lambda ch: one.fullmatch(ch) is not None)

    def search(self, text: str, whole: bool = False) -> bool:
        """Whether the pattern matches somewhere in `text` (a match may start anywhere),
        or, `whole`, matches all of it."""
        current: set[int] = set()
        for pos in range(len(text) + 1):
            starts = {self.start} if pos == 0 or not whole else set()
            reading, matched = self._close(current | starts, text, pos)
            if matched and (not whole or pos == len(text)):
                return True
            if pos == len(text) or (whole and not reading):
                return False
            ch = text[pos]
            current = {n for s in reading if s.reads(ch) for n in s.next}  # type: ignore[misc]
        return False

    def _close(self, states: set[int], text: str, pos: int) -> tuple[list[_State], bool]:
        """Follow forks and position tests to the states that read the next character,
        and say whether the match (state 0) is among the states reached."""
        stack, seen = list(states), set(states)
        reading: list[_State] = []
        while stack:
            state = self.states[stack.pop()]
            if state.reads is not None:
                reading.append(state)
                continue
            if state.at is not None and not state.at(text, pos):
                continue
            for n in state.next:
                if n not in seen:
                    seen.add(n)
                    stack.append(n)
        return reading, 0 in seen


def _position_test(at: Any, flags: int) -> Callable[[str, int], bool]:
    multiline = flags & sre.SRE_FLAG_MULTILINE
    if at is sre.AT_BEGINNING_STRING or (at is sre.AT_BEGINNING and not multiline):
        return lambda text, pos: pos == 0
    if at is sre.AT_BEGINNING:
        return lambda text, pos: pos == 0 or text[pos - 1] == "\n"
    if at is sre.AT_END_STRING:
        return lambda text, pos: pos == len(text)
    if at is sre.AT_END and not multiline:
        return lambda text, pos: pos == len(text) or (pos == len(text) - 1 and text[pos] == "\n")
    if at is sre.AT_END:
        return lambda text, pos: pos == len(text) or text[pos] == "\n"
    word = re.compile(r"\w", flags & (sre.SRE_FLAG_ASCII | sre.SRE_FLAG_IGNORECASE)).fullmatch

    def boundary(text: str, pos: int) -> bool:
        before = pos > 0 and word(text[pos - 1]) is not None
        after = pos < len(text) and word(text[pos]) is not None
        return before != after

    if at is sre.AT_BOUNDARY:
        return boundary
    if at is sre.AT_NON_BOUNDARY:
        return lambda text, pos: not boundary(text, pos)
    raise _Unsupported(str(at))


def _can_backtrack_badly(items: list[tuple[Any, Any]], inside_repeat: bool = False) -> int:
    """How many repeats could make a backtracking matcher try many ways (a count > 1
    means it may); alternatives under a repeat count as two."""
    count = 0
    for op, av in items:
        if op in _VARIABLE:
            lo, hi, body = av
            simple = lo == hi and all(o in (sre.LITERAL, sre.IN, sre.ANY) for o, _ in body)
            count += 0 if simple else 1
            count += _can_backtrack_badly(list(body), True)
        elif op is sre.BRANCH:
            count += 2 if inside_repeat else 0
            count += sum(_can_backtrack_badly(list(b), inside_repeat) for b in av[1])
        elif op is sre.SUBPATTERN:
            count += _can_backtrack_badly(list(av[3]), inside_repeat)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            count += _can_backtrack_badly(list(av[1]), inside_repeat)
    return count


@lru_cache(maxsize=512)
def _built(pattern: str) -> tuple[_Automaton | None, int]:
    """The pattern's automaton (None where it has no repeat or cannot have one), and how
    many ways it has to backtrack (see _can_backtrack_badly)."""
    try:
        parsed = sre_parse.parse(pattern)
        risk = _can_backtrack_badly(list(parsed))
    except (re.error, RecursionError):  # re says the same, or nests too deep to walk
        return None, 0
    if risk == 0 or parsed.state.flags & sre.SRE_FLAG_LOCALE:
        return None, risk
    try:
        return _Automaton(parsed), risk
    except (_Unsupported, RecursionError):
        return None, risk


def _automaton(pattern: str, text: str) -> _Automaton | None:
    """The automaton where re.search could take long: a pattern that can backtrack badly,
    or one repeat over a long text (`a*b` against n `a`s takes re n² steps)."""
    automaton, risk = _built(pattern)
    if automaton is None or (risk < 2 and len(text) <= LONG_TEXT):
        return None
    return automaton


def search(pattern: str, text: str) -> bool:
    """`bool(re.search(pattern, text))`, in time bounded by len(text) × the pattern's size
    wherever an automaton can hold the pattern."""
    automaton = _automaton(pattern, text)
    if automaton is None:
        return re.search(pattern, text) is not None
    return automaton.search(text)


def fullmatch(pattern: str, text: str) -> bool:
    """`bool(re.fullmatch(pattern, text))`, bounded as `search` is."""
    automaton = _automaton(pattern, text)
    if automaton is None:
        return re.fullmatch(pattern, text) is not None
    return automaton.search(text, whole=True)


class _BoundedRe(ModuleType):
    """`re`, but with `search` bounded; jsonschema only tests its result for truth."""

    def __init__(self) -> None:
        super().__init__("re")

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)

    @staticmethod
    def search(pattern: str, string: str, flags: int = 0) -> bool:
        if flags or not isinstance(pattern, str) or not isinstance(string, str):
            return re.search(pattern, string, flags) is not None
        return search(pattern, string)


def install() -> None:
    """Bound every pattern match jsonschema makes (pattern, patternProperties, and the
    keys additionalProperties and unevaluatedProperties leave to them)."""
    from jsonschema import _keywords, _legacy_keywords, _utils

    bounded = _BoundedRe()
    for module in (_keywords, _legacy_keywords, _utils):
        if getattr(module, "re", None) is re:
            module.re = bounded  # type: ignore[attr-defined]
