"""The number automata accept a number's text exactly when its value meets the keywords.

Checked on the DFA itself (fast, many examples); test_numbers_grammar.py checks that the GBNF
written from it means the same to llama.cpp and llguidance.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from hypothesis import example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from engine.check.write import write
from engine.grammar.compilers.maskscope.numbers import language
from engine.grammar.report import Unenforced


def written(value: Fraction) -> str:
    """The text `maskscope check` writes: an integer, or the shortest positional decimal."""
    if value.denominator == 1:
        return str(value.numerator)
    return format(Decimal(value.numerator) / Decimal(value.denominator), "f")


def meets(node: dict[str, object], value: Fraction) -> bool:
    """JSON Schema's meaning of the numeric keywords, in exact arithmetic."""
    checks = {
        "minimum": lambda b: value >= b,
        "exclusiveMinimum": lambda b: value > b,
        "maximum": lambda b: value <= b,
        "exclusiveMaximum": lambda b: value < b,
        "multipleOf": lambda b: (value / b).denominator == 1,
    }
    return all(checks[k](Fraction(str(v))) for k, v in node.items())


def accepts(node: dict[str, object], text: str, fraction: bool, float_step: bool = False) -> bool:
    """Whether the automaton takes `text`; nothing may be reported, but for a float step
    the note that jsonschema divides in floating point."""
    gaps: list[Unenforced] = []
    dfa = language(node, "$", gaps, fraction)
    assert [g.keyword for g in gaps] == (["multipleOf"] if float_step else []), gaps
    return dfa is None or dfa.accepts(text)


# Bounds small enough to collide with the values often, and some far apart.
small = st.integers(-60, 60)
wide = st.integers(-(10**15), 10**15)
integers = st.one_of(small, wide)
decimals = st.builds(lambda n, places: Fraction(n, 10**places), integers, st.integers(0, 4))
keywords = st.sampled_from(["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"])


def bound_nodes(values: st.SearchStrategy) -> st.SearchStrategy[dict[str, object]]:
    def as_json(v: Fraction) -> int | float:
        return v.numerator if v.denominator == 1 else float(Decimal(v.numerator) / v.denominator)

    return st.dictionaries(keywords, values.map(as_json), min_size=1, max_size=3)


@settings(max_examples=120, deadline=None)
@given(bound_nodes(integers), integers)
@example({"minimum": -2, "maximum": 2147483647}, -3)
@example({"exclusiveMinimum": 0, "exclusiveMaximum": 1}, 0)
def test_integer_bounds_are_exact(node: dict[str, object], value: int) -> None:
    assert accepts(node, str(value), fraction=False) == meets(node, Fraction(value))


@settings(max_examples=90, deadline=None)
@given(bound_nodes(decimals), integers)
@example({"minimum": 1.5}, 1)
@example({"maximum": -0.5}, -1)
def test_fractional_bounds_round_for_integers(node: dict[str, object], value: int) -> None:
    assert accepts(node, str(value), fraction=False) == meets(node, Fraction(value))


@settings(max_examples=120, deadline=None)
@given(bound_nodes(decimals), decimals)
@example({"minimum": 1.1}, Fraction(11, 10))
@example({"exclusiveMinimum": 1.1}, Fraction(11, 10))
@example({"maximum": 300}, Fraction(30005, 100))
@example({"minimum": -2}, Fraction(-20001, 10000))
def test_number_bounds_are_exact(node: dict[str, object], value: Fraction) -> None:
    assert accepts(node, written(value), fraction=True) == meets(node, value)


@settings(max_examples=100, deadline=None)
@given(bound_nodes(decimals), decimals, st.integers(1, 3))
def test_trailing_zeros_keep_the_value(
    node: dict[str, object], value: Fraction, zeros: int
) -> None:
    text = written(value)
    padded = text + ("" if "." in text else ".") + "0" * zeros
    assert accepts(node, padded, fraction=True) == meets(node, value)


@settings(max_examples=90, deadline=None)
@given(st.integers(1, 40), st.one_of(small, wide), st.booleans(), bound_nodes(small))
@example(7, 65535, False, {"minimum": 1, "maximum": 65535})
def test_integer_multiples(step: int, value: int, bounded: bool, bounds: dict[str, object]) -> None:
    node = {"multipleOf": step, **(bounds if bounded else {})}
    assert accepts(node, str(value), fraction=False) == meets(node, Fraction(value))


@settings(max_examples=90, deadline=None)
@given(
    st.integers(5000, 10**9),
    st.tuples(
        st.integers(-30, 30), st.integers(-1, 1), st.sampled_from(["minimum", "exclusiveMinimum"])
    ),
    st.tuples(
        st.integers(0, 60), st.integers(-1, 1), st.sampled_from(["maximum", "exclusiveMaximum"])
    ),
    st.tuples(st.integers(-32, 32), st.integers(-1, 1)),
    st.booleans(),
)
def test_large_steps_between_close_bounds(
    step: int,
    low: tuple[int, int, str],
    span: tuple[int, int, str],
    near: tuple[int, int],
    fraction: bool,
) -> None:
    """Too many remainders for an automaton, so the few multiples in range are listed; when
    even the list is too long, multiples of a divisor (or the bounds alone) hold, reported."""
    bounds = {low[2]: low[0] * step + low[1], span[2]: (low[0] + span[0]) * step + span[1]}
    node = {**bounds, "multipleOf": step}
    value = near[0] * step + near[1]
    text = str(value) + (".0" if fraction and near[1] == 0 else "")
    gaps: list[Unenforced] = []
    dfa = language(node, "$", gaps, fraction)
    assert dfa is not None
    assert [g.keyword for g in gaps] in ([], ["multipleOf"])
    kept = node if not gaps else {**bounds, "multipleOf": _divisor(gaps[0])}
    assert dfa.accepts(text) == meets(kept, Fraction(value))


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([1000, 10**6, 3 * 10**5, 10**12, 7 * 10**9, 2000]),
    st.integers(-(10**4), 10**4),
    st.sampled_from([0, 0, 1, -1, 10, 10**5]),
    st.booleans(),
)
def test_steps_with_many_zeros(step: int, n: int, off: int, fraction: bool) -> None:
    """10^c * b needs c trailing zeros and a remainder mod b: small, exact automata."""
    value = n * step + off
    text = str(value) + (".00" if fraction and value else "")
    node = {"multipleOf": step}
    assert accepts(node, text, fraction) == meets(node, Fraction(value))


binary_steps = st.sampled_from([0.5, 0.25, 1.5, 2.5, 0.125, 3.0, 10.0, 1.0])


@settings(max_examples=90, deadline=None)
@given(binary_steps, decimals)
@example(1.5, Fraction(-45, 10))
@example(1.5, Fraction(35))
def test_number_multiples(step: float, value: Fraction) -> None:
    node = {"multipleOf": step}
    assert accepts(node, written(value), fraction=True, float_step=True) == meets(node, value)


# Bounds with at most about 60 digits written out; values of any size.
float_bounds = st.floats(-1e30, 1e30).filter(lambda x: x == 0 or abs(x) > 1e-30)
any_float = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(keywords, float_bounds, min_size=1, max_size=3), any_float)
@example({"minimum": 0.1}, 0.30000000000000004)
@example({"exclusiveMaximum": 5e-324 * 0}, -5e-324)
def test_as_check_writes_floats_and_jsonschema_judges(
    node: dict[str, object], value: float
) -> None:
    """Floats written by `maskscope check`, judged by jsonschema itself: the same verdict."""
    valid = Draft202012Validator({"type": "number", **node}).is_valid(value)
    assert accepts(node, write(value), fraction=True) == valid


@settings(max_examples=120, deadline=None)
@given(
    st.dictionaries(keywords, st.one_of(float_bounds, integers), min_size=1, max_size=3),
    st.one_of(integers, st.integers(), any_float.filter(float.is_integer)),
)
def test_integers_as_jsonschema_judges_them(node: dict[str, object], value: float) -> None:
    valid = Draft202012Validator({"type": "integer", **node}).is_valid(value)
    assert accepts(node, write(value), fraction=False) == valid


def test_negative_zero_is_never_written() -> None:
    for node, fraction in (
        ({"maximum": 0}, False),
        ({"maximum": 0}, True),
        ({"multipleOf": 3}, False),
    ):
        dfa = language(node, "$", [], fraction)
        assert dfa is not None
        assert dfa.accepts("0") and not dfa.accepts("-0")
        assert not dfa.accepts("-0.0") and not dfa.accepts("00") and not dfa.accepts("01")


def test_decimal_steps_are_enforced_and_the_float_division_reported() -> None:
    gaps: list[Unenforced] = []
    dfa = language({"multipleOf": 0.01}, "$.x", gaps, fraction=True)
    assert dfa is not None
    assert dfa.accepts("0.07") and dfa.accepts("12.3") and not dfa.accepts("0.071")
    assert [(g.path, g.keyword) for g in gaps] == [("$.x", "multipleOf")]


def test_draft4_boolean_exclusive_bounds() -> None:
    dfa = language({"minimum": 5, "exclusiveMinimum": True}, "$", [], fraction=False)
    assert dfa is not None
    assert not dfa.accepts("5") and dfa.accepts("6")


def test_a_huge_step_between_close_bounds_is_listed() -> None:
    node = {"minimum": 0, "maximum": 10**9, "multipleOf": 123456789}
    gaps: list[Unenforced] = []
    dfa = language(node, "$", gaps, fraction=False)
    assert dfa is not None and not gaps
    assert dfa.accepts("987654312") and not dfa.accepts("987654313")


def test_too_large_is_looser_and_reported() -> None:
    gaps: list[Unenforced] = []
    dfa = language({"multipleOf": 123456789, "minimum": 0}, "$", gaps, fraction=False)
    assert dfa is not None and dfa.accepts("9") and not dfa.accepts("5") and not dfa.accepts("-9")
    assert [(g.keyword, _divisor(g)) for g in gaps] == [("multipleOf", 9)]
    gaps.clear()
    assert language({"minimum": 1e308}, "$", gaps, fraction=False) is None
    assert [g.keyword for g in gaps] == ["minimum"]


def test_empty_ranges_accept_nothing() -> None:
    for node in ({"minimum": 5, "maximum": 3}, {"exclusiveMinimum": 1, "exclusiveMaximum": 2}):
        dfa = language(node, "$", [], fraction=False)
        assert dfa is not None and dfa.empty


@settings(max_examples=30, deadline=None)
@given(st.integers(4001, 10**12), st.integers(-(10**6), 10**6), st.integers(-5, 5))
def test_a_step_too_large_still_allows_its_multiples(step: int, n: int, off: int) -> None:
    """Past the automaton's size, a divisor's multiples are enforced: looser, never tighter.
    (Steps like 10^12 stay exact: trailing zeros cost one state each.)"""
    gaps: list[Unenforced] = []
    dfa = language({"multipleOf": step}, "$", gaps, fraction=False)
    assert [g.keyword for g in gaps] in ([], ["multipleOf"])
    if dfa is None:  # a prime step: no divisor helps, every integer is allowed, as reported
        assert gaps
        return
    enforced = _divisor(gaps[0]) if gaps else step
    assert dfa.accepts(str(n * step))
    assert dfa.accepts(str(n * step + off)) == ((n * step + off) % enforced == 0)


def _divisor(gap: Unenforced) -> int:
    """The divisor a reported multipleOf was enforced through; 1 when none was."""
    if "only as multiples of " not in gap.note:
        return 1
    return int(gap.note.split("only as multiples of ")[1].split(";")[0])


def test_the_test_suites_huge_float_multiple_is_rejected() -> None:
    """multipleOf 0.123456789 on integers: 1e308 is no multiple of 9, let alone of the step."""
    gaps: list[Unenforced] = []
    dfa = language({"multipleOf": 0.123456789}, "$", gaps, fraction=False)
    assert dfa is not None
    assert not dfa.accepts("1" + "0" * 308)
    assert dfa.accepts(str(123456789 * 10**300)) and dfa.accepts("0")
    assert {g.keyword for g in gaps} == {"multipleOf"}
