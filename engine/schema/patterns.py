"""`pattern` and `patternProperties` judged in bounded time.

jsonschema runs `re.search`, a backtracking matcher: `^(a+)+$` against forty `a`s and a
`!` takes minutes (`a*b` against a long text, quadratic time), and Python cannot interrupt
a match from another thread. So a pattern that can backtrack badly (two repeats, or
alternatives under a repeat), or any repeat over a long text, is matched here by
simulating its automaton, a set of positions read once per character: time grows with the
text times the pattern, never exponentially, and the verdict is the same, since only
whether a match exists is asked. Each character class is still judged by Python's own `re`
(one character at a time), so `\\d`, `\\w`, case folding and inline flags mean what they
mean to jsonschema.

A pattern an automaton cannot express (a backreference, a lookaround, an atomic group, a
conditional) or too large to build, where it could take long, goes to the `regex` package
instead, whose match can be stopped: past TIMEOUT_S it raises PatternTimeoutError, a
one-line message, rather than hang (`re` cannot be interrupted). Only patterns `re` reads
get there, so ECMA-262 syntax Python lacks (`\\p{L}`, `(?<name>`) is still re's error, as
jsonschema would say. The one known difference: `regex`'s Unicode tables put a few rare
characters in or out of `\\s` and `\\w` where `re` does not (U+001C-U+001F, combining
marks, superscript digits), and `[[:alpha:]]`, a POSIX class to regex but a set of
characters to re (which warns that it may be read so one day): only such patterns notice.

`install` puts this `search` in place of `re.search` in jsonschema's keyword modules, the
only places it matches patterns against instances (MODULES: where jsonschema 4 keeps them).
A jsonschema that moved them is left as it is, unbounded but working, with a warning.
"""

from __future__ import annotations

import importlib
import logging
import re
import re._compiler as sre_compile
import re._constants as sre
import re._parser as sre_parse
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import Any

import regex

from engine.errors import PatternTimeoutError

log = logging.getLogger(__name__)

# Past this many automaton states (`(a{1,300}){1,300}`) the automaton is not built.
MAX_STATES = 50_000
# Past this length even one repeat is slow in re: `a*b` against 30,000 `a`s takes 2 s.
LONG_TEXT = 2_000
# How long one match may take where only a backtracking matcher can run the pattern: the
# benign ones take microseconds, `^(?!(a|aa)+$)` against forty `a`s and a `!` takes hours.
TIMEOUT_S = 1.0
# The modules of jsonschema 4 that call re.search on instances.
MODULES = ("jsonschema._keywords", "jsonschema._legacy_keywords", "jsonschema._utils")
_VARIABLE = (sre.MAX_REPEAT, sre.MIN_REPEAT)
_REPEATS = (*_VARIABLE, sre.POSSESSIVE_REPEAT)


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
        if op in _REPEATS:
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
        elif op is sre.ATOMIC_GROUP:  # what is inside still backtracks until it is left
            count += _can_backtrack_badly(list(av), inside_repeat)
        elif op is sre.GROUPREF_EXISTS:
            _group, yes, no = av
            for branch in (yes, no) if no is not None else (yes,):
                count += _can_backtrack_badly(list(branch), inside_repeat)
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


def _could_take_long(risk: int, text: str) -> bool:
    """Whether re.search could take long: a pattern that can backtrack badly, or one repeat
    over a long text (`a*b` against n `a`s takes re n² steps)."""
    return risk >= 2 or (risk >= 1 and len(text) > LONG_TEXT)


def _automaton(pattern: str, text: str) -> _Automaton | None:
    """The automaton where re.search could take long and one can hold the pattern."""
    automaton, risk = _built(pattern)
    return automaton if _could_take_long(risk, text) else None


def _needs_a_timeout(pattern: str, text: str) -> bool:
    """re.search could take long, and no automaton holds the pattern."""
    automaton, risk = _built(pattern)
    return automaton is None and _could_take_long(risk, text)


def _timed(whole: bool, pattern: str, text: str) -> bool:
    """The `regex` package's verdict, stopped after TIMEOUT_S."""
    judge = _timed_verdict if len(text) <= 1_000 else _verdict_in_time
    verdict = judge(whole, pattern, text)
    if verdict == "timed out":
        raise PatternTimeoutError(
            f"the pattern /{_shown(pattern)}/ took over {TIMEOUT_S:g} s to match a string of "
            f"{len(text):,} characters: it backtracks too much to be judged"
        )
    return verdict == "match"


def _verdict_in_time(whole: bool, pattern: str, text: str) -> str:
    """One of "match", "no match" and "timed out"."""
    try:
        found = (regex.fullmatch if whole else regex.search)(pattern, text, timeout=TIMEOUT_S)
    except TimeoutError:
        return "timed out"
    except regex.error:  # re reads it but regex does not: re's verdict, unbounded
        found = re.fullmatch(pattern, text) if whole else re.search(pattern, text)
    return "match" if found is not None else "no match"


# The compiler asks of one declared name and one key pattern in several places: a name
# that takes TIMEOUT_S is timed once. Short texts only, so the cache stays small.
_timed_verdict = lru_cache(maxsize=256)(_verdict_in_time)


def _shown(pattern: str) -> str:
    """The pattern on one line, cut to 80 characters."""
    line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in pattern)
    return line if len(line) <= 80 else line[:77] + "..."


def search(pattern: str, text: str) -> bool:
    """`bool(re.search(pattern, text))`, in time bounded by len(text) × the pattern's size
    wherever an automaton can hold the pattern, and by TIMEOUT_S (PatternTimeoutError)
    where it could take long and none can."""
    automaton = _automaton(pattern, text)
    if automaton is not None:
        return automaton.search(text)
    if _needs_a_timeout(pattern, text):
        return _timed(False, pattern, text)
    return re.search(pattern, text) is not None


def fullmatch(pattern: str, text: str) -> bool:
    """`bool(re.fullmatch(pattern, text))`, bounded as `search` is."""
    automaton = _automaton(pattern, text)
    if automaton is not None:
        return automaton.search(text, whole=True)
    if _needs_a_timeout(pattern, text):
        return _timed(True, pattern, text)
    return re.fullmatch(pattern, text) is not None


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


def install() -> list[str]:
    """Bound every pattern match jsonschema makes (pattern, patternProperties, and the
    keys additionalProperties and unevaluatedProperties leave to them). The modules now
    bounded; one of MODULES that is gone or no longer matches with `re` is left as it is,
    with a warning: validation then works, unbounded, rather than fail to start."""
    bounded: list[str] = []
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            module = None
        held = getattr(module, "re", None)
        if held is re:
            module.re = _BoundedRe()  # type: ignore[union-attr]
        elif not isinstance(held, _BoundedRe):
            log.warning("jsonschema's %s does not match patterns with re: left unbounded", name)
            continue
        bounded.append(name)
    return bounded
