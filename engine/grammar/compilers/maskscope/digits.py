"""DFAs over the text of a JSON number: bounds compared digit by digit, and multiples.

The text is positional, as `maskscope check` writes it: `-?(0|[1-9][0-9]*)(\\.[0-9]+)?`, no
exponent and never `-0`. A fraction may end in zeros (`1.50`), since its value is still 1.5.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from math import gcd

from engine.grammar.compilers.maskscope.dfa import EMPTY, Dfa, explore


@dataclass(frozen=True, slots=True)
class Bound:
    """One side of a range; `keyword` is the schema keyword it came from, for reports."""

    value: Decimal
    inclusive: bool
    keyword: str

    def negated(self) -> Bound:
        # copy_negate is exact; unary minus rounds to the context's 28 digits.
        return Bound(self.value.copy_negate(), self.inclusive, self.keyword)


def tighter_lower(a: Bound | None, b: Bound | None) -> Bound | None:
    """The stronger of two lower bounds: the larger, and the exclusive one on a tie."""
    if a is None or b is None:
        return a or b
    if a.value != b.value:
        return a if a.value > b.value else b
    return a if not a.inclusive else b


def tighter_upper(a: Bound | None, b: Bound | None) -> Bound | None:
    if a is None or b is None:
        return a or b
    if a.value != b.value:
        return a if a.value < b.value else b
    return a if not a.inclusive else b


def signed_range(lower: Bound | None, upper: Bound | None, fraction: bool) -> Dfa | None:
    """Number texts whose value lies within the bounds (None: unbounded on that side)."""
    zero = Bound(Decimal(0), True, "")
    positive = _magnitude(tighter_lower(lower, zero), upper, fraction)
    # -m for m > 0: "-0" is never written, so the magnitude of a negative is above zero.
    negative = _magnitude(
        tighter_lower(upper.negated() if upper else None, Bound(Decimal(0), False, "")),
        lower.negated() if lower else None,
        fraction,
    )

    def step(
        state: tuple[str, tuple[_Cmp, ...]], symbol: str
    ) -> tuple[str, tuple[_Cmp, ...]] | None:
        sign, inner = state
        if sign == "":
            if symbol == "-":
                return None if negative is None else ("-", negative.start)
            branch, sign = positive, "+"
        else:
            branch = positive if sign == "+" else negative
        if branch is None:
            return None
        nxt = branch.step(inner, symbol)
        return None if nxt is None else (sign, nxt)

    def accepts(state: tuple[str, tuple[_Cmp, ...]]) -> bool:
        sign, inner = state
        branch = positive if sign == "+" else negative if sign == "-" else None
        return branch is not None and branch.accepts(inner)

    if positive is None and negative is None:
        return EMPTY
    start = positive.start if positive else ()
    return explore(("", start), step, accepts)


def multiples(step: Decimal, fraction: bool, limit: int) -> Dfa | None:
    """Number texts whose value is an exact multiple of `step` (> 0); None past `limit` states.

    With step = a / 10^d, x is a multiple when x * 10^d is an integer divisible by a: the
    state is that integer's remainder so far, and the count of fraction digits read. An
    integer step 10^c * b (b prime to 10) needs c trailing zeros and a remainder mod b only,
    so that 10^12 takes 13 states, not 10^12.
    """
    a, d = _scaled(step)
    if not fraction:
        a, d = a // gcd(a, 10**d), 0
    tens, a = _split_tens(a) if d == 0 else (0, a)
    if a * (d + 1) * (tens + 1) > limit:
        return None
    # (phase, remainder, fraction digits read, trailing zeros of the integer part up to tens)
    State = tuple[str, int, int, int]

    def step_fn(state: State, symbol: str) -> State | None:
        phase, rem, used, zeros = state
        if symbol == "-":
            return state if phase == "s" else None
        if symbol == ".":
            if not fraction or phase != "i":
                return None
            if d == 0:  # only zeros may follow: the integer part decides, once
                return ("f", 0, 0, tens) if accepts(state) else None
            return ("f", rem, 0, zeros)
        digit = int(symbol)
        if phase == "s" and digit == 0:
            return ("i", 0, 0, tens)  # a lone 0 is a multiple of anything
        if phase in "si":
            zeros = min(zeros + 1, tens) if digit == 0 else 0
            return ("i", (rem * 10 + digit) % a, 0, zeros)
        if used < d:
            return ("f", (rem * 10 + digit) % a, used + 1, zeros)
        return state if digit == 0 else None  # trailing zeros keep the value

    def accepts(state: State) -> bool:
        phase, rem, used, zeros = state
        return phase != "s" and zeros == tens and rem * pow(10, d - used, a) % a == 0

    return explore(("s", 0, 0, 0), step_fn, accepts, limit)


def _split_tens(a: int) -> tuple[int, int]:
    """(c, b) with a == 10^c * b and b prime to 10; (0, a) when no such split exists."""
    c, b = 0, a
    while b % 10 == 0:
        c, b = c + 1, b // 10
    return (c, b) if gcd(b, 10) == 1 else (0, a)


def integer_step(step: Decimal, fraction: bool) -> int | None:
    """k when the multiples of `step` among these texts are the multiples of the integer k.

    An integer is a multiple of a / 10^d when it is one of a / gcd(a, 10^d): 1.5 -> 3.
    """
    a, d = _scaled(step)
    if not fraction:
        return a // gcd(a, 10**d)
    return a if d == 0 else None


def literals(texts: Iterable[str], fraction: bool) -> Dfa | None:
    """Exactly these integer texts; with `fraction`, each may also end in `.0`, `.00`, ..."""
    words = frozenset(texts)
    prefixes = {w[:i] for w in words for i in range(len(w) + 1)}
    State = tuple[str, str]

    def step(state: State, symbol: str) -> State | None:
        mode, prefix = state
        if mode == "w":
            if prefix + symbol in prefixes:
                return ("w", prefix + symbol)
            return ("dot", prefix) if fraction and symbol == "." and prefix in words else None
        return ("zeros", prefix) if symbol == "0" else None

    def accepts(state: State) -> bool:
        return state[0] == "zeros" or (state[0] == "w" and state[1] in words)

    return explore(("w", ""), step, accepts)


def coarser_steps(step: Decimal, fraction: bool, limit: int, max_states: int) -> list[Decimal]:
    """Steps that `step` is a multiple of, largest first, whose automata may be small enough.

    Every multiple of 123456789 is a multiple of 9: when the exact automaton is too large, a
    divisor's is a looser grammar that still rejects most wrong values. Divisors explored up
    to `limit` remainders; a part prime to 10 above `max_states` would stay after
    minimisation, so those are skipped.
    """
    a, d = _scaled(step)
    if not fraction:
        a, d = a // gcd(a, 10**d), 0
    found = []
    for b in range(min(a - 1, limit // (d + 2)), 1, -1):
        if a % b == 0 and _prime_to_ten(b) <= max_states:
            found.append(Decimal(b).scaleb(-d))
            if len(found) == 3:
                break
    return found


def least_states(step: Decimal, fraction: bool) -> int:
    """A lower bound on the states of `multiples(step, fraction)` once minimised.

    Divisibility by m, m prime to 10, takes exactly m states: the remainders stay apart.
    """
    a, d = _scaled(step)
    if not fraction:
        a = a // gcd(a, 10**d)
    return _prime_to_ten(a)


def _prime_to_ten(n: int) -> int:
    for p in (2, 5):
        while n % p == 0:
            n //= p
    return n


def _scaled(step: Decimal) -> tuple[int, int]:
    """(a, d) with step == a / 10^d, a a positive integer, d as small as possible."""
    # Read from the digits: normalize() would round a long step to 28 digits.
    sign, digits, exponent = step.as_tuple()
    assert isinstance(exponent, int) and not sign
    a = int("".join(map(str, digits)) or "0")
    while exponent < 0 and a % 10 == 0:
        a, exponent = a // 10, exponent + 1
    if exponent >= 0:
        return a * 10**exponent, 0
    return a, -exponent


# A comparator's state: (phase, position, relation so far), relation one of "<", "=", ">".
_Cmp = tuple[str, int, str]


@dataclass(frozen=True, slots=True)
class _Magnitude:
    """Unsigned texts compared with several bounds at once; one comparator per bound."""

    comparators: tuple[_Comparator, ...]

    @property
    def start(self) -> tuple[_Cmp, ...]:
        return tuple(("s", 0, "=") for _ in self.comparators)

    def step(self, state: tuple[_Cmp, ...], symbol: str) -> tuple[_Cmp, ...] | None:
        out = []
        for comparator, inner in zip(self.comparators, state, strict=True):
            nxt = comparator.step(inner, symbol)
            if nxt is None:
                return None
            out.append(nxt)
        return tuple(out)

    def accepts(self, state: tuple[_Cmp, ...]) -> bool:
        return all(c.accepts(s) for c, s in zip(self.comparators, state, strict=True))


def _magnitude(lower: Bound | None, upper: Bound | None, fraction: bool) -> _Magnitude | None:
    """Unsigned texts within [lower, upper] (lower >= 0 always); None when none can be."""
    if upper is not None and (
        upper.value < 0 or (lower is not None and _empty_between(lower, upper))
    ):
        return None
    # Positive and negative magnitudes always have a lower bound (0), so at least one
    # comparator checks the text's shape.
    comparators = []
    if lower is not None:
        comparators.append(_Comparator(lower.value, ">=" if lower.inclusive else ">", fraction))
    if upper is not None:
        comparators.append(_Comparator(upper.value, "<=" if upper.inclusive else "<", fraction))
    return _Magnitude(tuple(comparators))


def _empty_between(lower: Bound, upper: Bound) -> bool:
    if lower.value != upper.value:
        return lower.value > upper.value
    return not (lower.inclusive and upper.inclusive)


_ALLOWED = {">=": {"=", ">"}, ">": {">"}, "<=": {"<", "="}, "<": {"<"}}


class _Comparator:
    """Reads an unsigned number text and compares its value with a constant c >= 0.

    Phases: "s" start, "i" integer digits, "z" the integer part is a lone 0, "d" just after
    the point, "f" fraction digits. In the integer part, the position counts digits read
    (-1 once there are more than c has); in the fraction, digits matched against c's.
    """

    def __init__(self, c: Decimal, op: str, fraction: bool) -> None:
        # copy_abs: a negated 0 bound is Decimal("-0"), which formats with its sign.
        whole, _, frac = format(c.copy_abs(), "f").partition(".")
        self.whole = whole.lstrip("0") or "0"
        self.frac = frac.rstrip("0")
        self.allowed = _ALLOWED[op]
        self.fraction = fraction

    def step(self, state: _Cmp, symbol: str) -> _Cmp | None:
        phase, pos, rel = state
        if symbol == "-":
            return None
        if symbol == ".":
            if not self.fraction or phase not in "iz":
                return None
            return ("d", 0, self._whole_outcome(pos, rel))
        if phase == "s":
            return ("z" if symbol == "0" else "i", 1, _cmp(symbol, self.whole[0]))
        if phase == "z":
            return None
        if phase == "i":
            if pos == -1 or pos == len(self.whole):
                return ("i", -1, ">")
            return ("i", pos + 1, rel if rel != "=" else _cmp(symbol, self.whole[pos]))
        if rel != "=":
            return ("f", 0, rel)
        target = self.frac[pos] if pos < len(self.frac) else "0"
        return ("f", min(pos + 1, len(self.frac)), _cmp(symbol, target))

    def accepts(self, state: _Cmp) -> bool:
        phase, pos, rel = state
        if phase in "iz":
            outcome = self._whole_outcome(pos, rel)
            if outcome == "=" and self.frac:
                outcome = "<"
        elif phase == "f":
            outcome = "<" if rel == "=" and pos < len(self.frac) else rel
        else:
            return False
        return outcome in self.allowed

    def _whole_outcome(self, pos: int, rel: str) -> str:
        if pos == -1:
            return ">"
        return "<" if pos < len(self.whole) else rel


def _cmp(a: str, b: str) -> str:
    return "<" if a < b else ">" if a > b else "="
