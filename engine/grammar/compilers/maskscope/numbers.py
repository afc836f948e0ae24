"""JSON integers and numbers within a subschema's bounds and multipleOf, as GBNF.

Bounds and multipleOf are enforced exactly, as DFAs over the number's text (`digits.py`),
intersected and written as rules. When an automaton would be too large for a grammar, the
grammar allows more, and says so in `gaps`:
- multipleOf with many remainders (a prime like 4001, or 37 within int32 bounds): between
  close bounds its multiples are listed; else a small divisor's multiples are enforced
  (123456789 -> 9); else only the bounds are.
- a bound of more than 100 digits written out (1e308) is dropped.
- a float multipleOf is enforced on exact decimals, and reported: jsonschema's float division
  calls 0.07 no multiple of 0.01, and a long value such as 0.22406563000000002 one of 1e-8.

Digits are bounded on purpose, beyond what the schema says: a run of digits that the schema
leaves open (`rules.NUMBER_DIGITS`, 20) is the most the grammar writes. Without it, a small
model writes `180.000000...` until max_tokens. Digits the schema's own numbers fix come on
top, so `{"minimum": 1e25}` still takes 26 digits, and nothing a schema allows is lost but
numbers with over 20 digits past them. The cap holds each loop of the automaton, not a
cycle through several states: multiples of 7 (remainders in a cycle), or a fraction that
must not end in 0 between bounds, may still be written without end.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

from engine.grammar.compilers.maskscope import digits
from engine.grammar.compilers.maskscope.dfa import Dfa, intersect, to_gbnf
from engine.grammar.compilers.maskscope.digits import Bound
from engine.grammar.compilers.maskscope.normalize import Unsatisfiable
from engine.grammar.compilers.maskscope.rules import NUMBER_DIGITS, Rules
from engine.grammar.report import Unenforced

# Above this many DFA states (about as many rules), the grammar is looser and says so.
MAX_STATES = 300
# With bounds this close, the multiples between them are listed one by one.
MAX_LISTED = 64


def integer_rule(rules: Rules, node: Mapping[str, Any], path: str, gaps: list[Unenforced]) -> str:
    """JSON integers within node's minimum/maximum/exclusive* and multipleOf."""
    return _rule(rules, node, path, gaps, fraction=False)


def number_rule(rules: Rules, node: Mapping[str, Any], path: str, gaps: list[Unenforced]) -> str:
    """JSON numbers (no exponent) within node's bounds and multipleOf, exactly."""
    return _rule(rules, node, path, gaps, fraction=True)


def fraction_rule(
    rules: Rules, node: Mapping[str, Any], path: str, gaps: list[Unenforced]
) -> str | None:
    """Numbers that are not integers (a `not` of integer, or a oneOf branch beside one),
    within node's bounds and multipleOf; None when that is too large to write exactly."""
    dfa = language(node, path, gaps, fraction=True)
    if dfa is None:
        return None
    found = intersect(dfa, _NON_INTEGER)
    if found is None:
        return None
    if found.empty:
        raise Unsatisfiable(path, "no number with a fraction meets its bounds and multipleOf")
    return to_gbnf(rules, found, "fraction", _MAX_RUN)


def _non_integer() -> Dfa:
    r"""`-?(0|[1-9][0-9]*)\.[0-9]*[1-9]`: a fraction whose last digit is not 0."""
    nonzero = {d: 3 for d in "123456789"}
    edges = (
        {"-": 1, "0": 2, **nonzero},
        {"0": 2, **nonzero},
        {".": 4},
        {".": 4, "0": 3, **nonzero},
        {"0": 4, **{d: 5 for d in "123456789"}},
        {"0": 4, **{d: 5 for d in "123456789"}},
    )
    return Dfa(start=0, edges=edges, accepting=frozenset({5}))


_NON_INTEGER = _non_integer()


def _rule(
    rules: Rules, node: Mapping[str, Any], path: str, gaps: list[Unenforced], fraction: bool
) -> str:
    dfa = language(node, path, gaps, fraction)
    if dfa is None:
        return "json-number" if fraction else "json-int"
    if dfa.empty:
        kind = "number" if fraction else "integer"
        raise Unsatisfiable(path, f"no {kind} meets its minimum, maximum and multipleOf")
    return to_gbnf(rules, dfa, "number" if fraction else "integer", _MAX_RUN)


# The first free digit leads the loop: `[1-9] [0-9]{0,19}` is 20 digits at most.
_MAX_RUN = NUMBER_DIGITS - 1


def language(
    node: Mapping[str, Any], path: str, gaps: list[Unenforced], fraction: bool
) -> Dfa | None:
    """The DFA of the number texts node allows; None when its keywords constrain nothing
    (or nothing a grammar can hold: then `gaps` says so)."""
    lower, upper = _bounds(node, path, gaps)
    step = written_step = _multiple_of(node, path, gaps)
    if step is not None and not fraction and digits.integer_step(step, fraction) == 1:
        step = None  # every integer is a multiple of 1, 0.5, 1e-8...
    if written_step is not None and isinstance(node.get("multipleOf"), float):
        gaps.append(Unenforced(path, "multipleOf", _FLOAT_NOTE))
    if lower is None and upper is None and step is None:
        return None
    dfa, dropped = _automaton(lower, upper, step, fraction)
    gaps += [Unenforced(path, keyword, note) for keyword, note in dropped]
    return dfa


def _automaton(
    lower: Bound | None, upper: Bound | None, step: Decimal | None, fraction: bool
) -> tuple[Dfa | None, list[tuple[str, str]]]:
    """The tightest automaton small enough, and the (keyword, note) pairs it leaves out."""
    if step is not None:
        found = _with_multiples(lower, upper, step, fraction)
        if found is not None:
            return found
    dropped = [("multipleOf", f"with these bounds, {_TOO_LARGE}")] if step is not None else []
    bounds = [b for b in (lower, upper) if b is not None]
    for lo, hi in dict.fromkeys(((lower, upper), (lower, None), (None, upper))):
        if lo is None and hi is None:
            continue
        ranged = _small(digits.signed_range(lo, hi, fraction))
        if ranged is not None:
            lost = [b for b in bounds if b is not lo and b is not hi]
            return ranged, dropped + _long_bounds(lost)
    if step is not None:
        alone = _small(_multiples(step, fraction)) if _may_fit(step, fraction) else None
        if alone is not None:
            return alone, _long_bounds(bounds)
    return None, dropped + _long_bounds(bounds)


def _with_multiples(
    lower: Bound | None, upper: Bound | None, step: Decimal, fraction: bool
) -> tuple[Dfa, list[tuple[str, str]]] | None:
    """multipleOf within the bounds: exactly, as a list, or as multiples of a divisor."""
    ranged = digits.signed_range(lower, upper, fraction)
    exact = _small(_bounded_multiples(ranged, step, fraction)) if _may_fit(step, fraction) else None
    if exact is None:
        exact = _listed(lower, upper, step, fraction)
    if exact is not None:
        return exact, []
    for coarser in digits.coarser_steps(step, fraction, _MULTIPLES_LIMIT, MAX_STATES):
        loose = _small(_bounded_multiples(ranged, coarser, fraction))
        if loose is not None:
            return loose, [
                ("multipleOf", f"enforced only as multiples of {coarser:f}; {_TOO_LARGE}")
            ]
    return None


def _may_fit(step: Decimal, fraction: bool) -> bool:
    """Whether multiples of `step` can be small enough: skips building a hopeless automaton."""
    return digits.least_states(step, fraction) <= MAX_STATES


# A bound longer than this needs more states than MAX_STATES: skip building it.
_MAX_DIGITS = 100
_TOO_LARGE = "the exact grammar would need more rules than llama.cpp handles well"


def _long_bounds(bounds: list[Bound]) -> list[tuple[str, str]]:
    return [(b.keyword, f"a bound with this many digits: {_TOO_LARGE}") for b in bounds]


def _bounded_multiples(ranged: Dfa | None, step: Decimal, fraction: bool) -> Dfa | None:
    multiples = _multiples(step, fraction)
    if ranged is None or multiples is None:
        return None
    return intersect(ranged, multiples)


def _small(dfa: Dfa | None) -> Dfa | None:
    return dfa if dfa is not None and dfa.size <= MAX_STATES else None


def _multiples(step: Decimal, fraction: bool) -> Dfa | None:
    return digits.multiples(step, fraction, limit=_MULTIPLES_LIMIT)


# Remainders explored for multipleOf: a few thousand keep the compile within milliseconds.
_MULTIPLES_LIMIT = 4000


def _listed(lower: Bound | None, upper: Bound | None, step: Decimal, fraction: bool) -> Dfa | None:
    """The multiples of `step` between close bounds, listed, when they are integers."""
    k = digits.integer_step(step, fraction)
    if lower is None or upper is None or k is None:
        return None
    first = math.ceil(Fraction(lower.value) / k)
    last = math.floor(Fraction(upper.value) / k)
    if last - first + 1 > MAX_LISTED:
        return None
    inside = [
        n * k
        for n in range(first, last + 1)
        if (lower.inclusive or n * k != lower.value) and (upper.inclusive or n * k != upper.value)
    ]
    return _small(digits.literals([str(v) for v in inside], fraction))


_BOUNDS = (
    ("minimum", True, True),
    ("exclusiveMinimum", False, True),
    ("maximum", True, False),
    ("exclusiveMaximum", False, False),
)


def _bounds(
    node: Mapping[str, Any], path: str, gaps: list[Unenforced]
) -> tuple[Bound | None, Bound | None]:
    """The tightest lower and upper bound; draft-04's boolean exclusive* read as well."""
    lower: Bound | None = None
    upper: Bound | None = None
    for keyword, inclusive, is_lower in _BOUNDS:
        raw = node.get(keyword)
        if raw is None or isinstance(raw, bool):
            continue
        value = _decimal(raw)
        if value is None:
            gaps.append(Unenforced(path, keyword, "not a finite number"))
            continue
        if keyword in ("minimum", "maximum"):
            # Draft-04: `exclusiveMinimum: true` makes `minimum` itself exclusive.
            inclusive = node.get("exclusive" + keyword.capitalize()) is not True
        if len(format(value.copy_abs(), "f")) > _MAX_DIGITS:
            gaps.append(Unenforced(path, keyword, f"a bound with this many digits: {_TOO_LARGE}"))
            continue
        bound = Bound(value, inclusive, keyword)
        if is_lower:
            lower = digits.tighter_lower(lower, bound)
        else:
            upper = digits.tighter_upper(upper, bound)
    return lower, upper


def _multiple_of(node: Mapping[str, Any], path: str, gaps: list[Unenforced]) -> Decimal | None:
    raw = node.get("multipleOf")
    if raw is None:
        return None
    value = None if isinstance(raw, bool) else _decimal(raw)
    if value is None or value <= 0:
        gaps.append(Unenforced(path, "multipleOf", "not a positive number"))
        return None
    return value


# jsonschema divides by a float multipleOf in floating point: 0.07 / 0.01 is 7.000000000000001,
# no multiple, and 0.22406563000000002 / 1e-8 rounds to a whole number. The grammar, reading
# decimals, says the opposite of both.
_FLOAT_NOTE = (
    "enforced on exact decimals; jsonschema divides in floating point, so it rejects some "
    "exact multiples (0.07 of 0.01) and accepts some long non-multiples"
)


def _decimal(raw: object) -> Decimal | None:
    """The number as `maskscope check` writes it: an integral float exactly (2^60 has 19
    digits, not repr's 17), any other float as its shortest repr. Written alike, a bound and
    a value compare as their floats do."""
    if isinstance(raw, int):
        return Decimal(raw)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            return None
        return Decimal(int(raw)) if raw.is_integer() else Decimal(repr(raw))
    if isinstance(raw, Decimal):
        return raw if raw.is_finite() else None
    return None
