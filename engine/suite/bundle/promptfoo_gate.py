"""How much of `maskscope test`'s verdict the bundle's promptfooconfig.yaml carries in
promptfoo's own exit code, and how.

`maskscope test` judges a suite on aggregates (engine/suite/metrics.py THRESHOLDS): a share of
samples valid, a share truncated, a share of expected fields met, a p95 latency. promptfoo
0.121.20 judges each test, then the whole eval by one number (src/commands/eval.ts; in the
pinned package dist/src/main.js): it exits PROMPTFOO_FAILED_TEST_EXIT_CODE (100 when unset)
when successes / (successes + failures + errors) × 100 is below PROMPTFOO_PASS_RATE_THRESHOLD
(100 when unset: any failed test). It reads that variable through src/envars.ts getEnvString,
which looks in the config's own `env` before the process's (getEnvOverrides, which is
state.config.env), so the config sets it.

promptfoo's rows are its tests × its providers, and the config has one provider per sample
(the suite's seed + i, as `maskscope test` seeds sample i), so a pass rate counts samples. It
carries a threshold that is a share of samples meeting a condition, where a test passes on
exactly that condition:

- min_validity: the sample is valid: `is-json` against the schema copy, and a finish reason
  other than `length` (`not-finish-reason`): Maskscope counts an output cut at max_tokens
  invalid even where its text parses, as llama-server's trimmed trailing whitespace does;
- max_truncation: its finish reason is not `length`;
- min_field_accuracy, where every case expects exactly one field (fields are then samples), or
  where every field must be met (min_field_accuracy above (F-1)/F of F fields).

A test passes on the deciding assertions alone by promptfoo's assertion `weight` and test
`threshold` (src/assertions/index.ts, AssertionsResult.testResult: the score is
Σ score × weight / Σ weight; with a `threshold` the test passes when the score reaches it,
without one when no assertion failed; src/evaluator.ts: a test without a threshold takes
defaultTest's). Each deciding assertion weighs W = M + 1, M being the most other assertions a
test has, each weighing 1; a test with d deciding and m other assertions gets the threshold
(Wd - 1/2) / (Wd + m), strictly between its best score with a deciding assertion failed,
(W(d-1) + m) / (Wd + m), and its worst with all d passed, Wd / (Wd + m) (row_threshold).
The other assertions still run and show; they decide nothing.

One pass rate holds one count. It carries one threshold; or several that each need every
sample (min_validity 0.95 of 10 samples needs all 10); and max_truncation besides, where a
carried condition implies it (a valid sample, or one whose field was met, was not cut off) and
its count is at least truncation's. Of those ways the config takes the one that carries the
most thresholds, the first in the suite format's order on a tie; the bundle's README and
report.json name the rest, which only `maskscope test` judges. Counts follow `maskscope
test`'s arithmetic (count / total against the limit, in floats), and the pass-rate threshold
sits half a sample below the count needed, so no rounding moves it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from engine.suite.format import Suite
from engine.suite.metrics import THRESHOLDS

PASS_RATE_ENV = "PROMPTFOO_PASS_RATE_THRESHOLD"
FAILED_EXIT = 100  # PROMPTFOO_FAILED_TEST_EXIT_CODE's default

# The per-sample condition each carried threshold counts, as the config's assertions say it.
VALID, COMPLETE, FIELDS = "valid", "complete", "fields"
_CONDITION = {"min_validity": VALID, "max_truncation": COMPLETE, "min_field_accuracy": FIELDS}
_ORDER = list(THRESHOLDS)
_WORDS = {
    VALID: "is valid (`is-json` on the schema copy, and not cut off at max_tokens)",
    COMPLETE: "was not cut off at max_tokens (`not-finish-reason` `length`)",
    FIELDS: "meets every field it expects (its `javascript` assertions)",
}
_LATENCY_WHY = (
    "promptfoo has no percentile of latency, and the latency it measures is the client's "
    "wall time under promptfoo's own concurrency, not the server's service time: "
    "`maskscope test --server` measures it"
)


@dataclass(frozen=True, slots=True)
class Gate:
    """What promptfoo's exit code decides: `need` of the `n` rows (cases × samples) must pass,
    a row passing when its sample meets every condition in `deciding`."""

    n: int
    need: int  # 0 when nothing is carried; n + 1 when a carried threshold cannot be met
    deciding: frozenset[str]  # VALID, COMPLETE, FIELDS
    carried: tuple[str, ...]  # threshold keys, in THRESHOLDS order
    left: tuple[tuple[str, str], ...]  # (threshold key, why promptfoo does not decide it)

    @property
    def pass_rate(self) -> float:
        """PROMPTFOO_PASS_RATE_THRESHOLD, a percentage: half a row below `need` rows."""
        if not self.need or not self.n:
            return 0.0
        return (self.need - 0.5) / self.n * 100

    def env_value(self) -> str:
        return f"{self.pass_rate:.6g}"

    def sentences(self) -> list[str]:
        """The README's and report's words for it, one sentence a line."""
        lines = []
        if self.carried:
            names = " and ".join(_metric(k) for k in self.carried)
            if self.need > self.n:
                count = f"more than all {self.n} rows, which no run can"
            elif self.need == self.n:
                count = f"all {self.n} of its rows (cases × samples)"
            else:
                count = f"at least {self.need} of its {self.n} rows (cases × samples)"
            lines.append(
                f"promptfoo's exit code carries the suite's {names}: "
                f"`{PASS_RATE_ENV}` {self.env_value()} in the config's `env` makes it exit "
                f"{FAILED_EXIT} unless {count} pass, and a row passes exactly when its sample "
                + " and ".join(_WORDS[c] for c in (VALID, COMPLETE, FIELDS) if c in self.deciding)
                + ": those assertions' `weight` and each test's `threshold` make it so, and the "
                "other assertions show but decide nothing."
            )
        else:
            lines.append(
                f"promptfoo's exit code carries none of the suite's thresholds: `{PASS_RATE_ENV}` "
                "0 makes it exit 0 whichever rows fail, as `maskscope test` passes a suite "
                "that sets none."
                if not self.left
                else f"promptfoo's exit code carries none of the suite's thresholds "
                f"(`{PASS_RATE_ENV}` 0: it exits 0 whichever rows fail)."
            )
        for key, why in self.left:
            lines.append(f"Not carried: {_metric(key)}: {why}.")
        if self.left:
            lines.append(
                "So promptfoo can exit 0 where `maskscope test` fails on those; where promptfoo "
                f"exits {FAILED_EXIT}, `maskscope test` fails too."
            )
        lines.append(
            "A row promptfoo could not run (an HTTP error) counts as failed there, where "
            "`maskscope test` exits 2 (no result)."
        )
        return lines

    def to_json(self) -> dict[str, object]:
        return {
            "pass_rate_threshold": self.pass_rate,
            "rows": self.n,
            "rows_needed": self.need,
            "carried": list(self.carried),
            "not_carried": [{"key": k, "why": why} for k, why in self.left],
        }


def row_threshold(deciding: int, others: int, weight: int) -> float:
    """A test's `threshold` with `deciding` assertions of `weight` and `others` of weight 1
    (others < weight): reached exactly when every deciding assertion passes."""
    if not deciding:
        return 0.0  # nothing decides the row: it passes
    return (weight * deciding - 0.5) / (weight * deciding + others)


def _metric(key: str) -> str:
    return f"`{key}` ({THRESHOLDS[key][0]})"


def _at_least(total: int, share: float) -> int:
    """The fewest of `total` whose share reaches `share`, as metrics.evaluate compares it;
    total + 1 when none does."""
    return next((k for k in range(total + 1) if k / total >= share), total + 1)


def _at_most(total: int, share: float) -> int:
    """The most of `total` whose share stays within `share`; -1 when none does."""
    return next((k for k in range(total, -1, -1) if k / total <= share), -1)


def gate(suite: Suite) -> Gate:
    """The way that carries the most of the suite's thresholds (see the module's docstring)."""
    n = len(suite.cases) * suite.samples
    t = suite.thresholds
    needs: dict[str, int] = {}  # key -> rows whose sample must meet its condition
    left: list[tuple[str, str]] = []
    if n and t.min_validity is not None:
        needs["min_validity"] = _at_least(n, t.min_validity)
    if n and t.max_truncation is not None:
        needs["max_truncation"] = n - _at_most(n, t.max_truncation)
    if n and t.min_field_accuracy is not None:
        field_need = _fields_need(suite, t.min_field_accuracy, n)
        if isinstance(field_need, int):
            needs["min_field_accuracy"] = field_need
        else:
            left.append(("min_field_accuracy", field_need))
    if t.max_p95_latency_ms is not None:
        left.append(("max_p95_latency_ms", _LATENCY_WHY))
    if not needs:
        return Gate(n, 0, frozenset(), (), _ordered(left))
    ways = _ways(needs, n)
    carried, need = min(ways, key=lambda way: (-len(way[0]), [_ORDER.index(k) for k in way[0]]))
    deciding = frozenset(_CONDITION[k] for k in carried if _decides(k, carried))
    chosen = ", ".join(_metric(k) for k in carried)
    for key in needs.keys() - set(carried):
        left.append((key, _conflict(key, needs[key], n, chosen)))
    return Gate(n, need, deciding, tuple(carried), _ordered(left))


def _fields_need(suite: Suite, share: float, n: int) -> int | str:
    """Rows that must meet every field they check, or why field accuracy is no share of rows."""
    counts = {len(case.expected) for case in suite.cases}
    fields = sum(len(case.expected) for case in suite.cases) * suite.samples
    if not fields:
        return "no case expects a field, so `maskscope test` cannot measure it either (exit 2)"
    if counts == {1}:
        return _at_least(n, share)
    needed = _at_least(fields, share)
    if needed >= fields:  # every field of every sample: every row must meet all of its own
        return n if needed == fields else n + 1
    return (
        "field accuracy is a share of fields, and these cases do not each expect exactly one, "
        "so it is no share of promptfoo's rows; promptfoo reports `field_accuracy_rate` "
        "among its derived metrics (per sample column), and `maskscope test` judges it"
    )


def _ways(needs: dict[str, int], n: int) -> list[tuple[list[str], int]]:
    """Each way one count can carry thresholds: (keys carried in THRESHOLDS order, count)."""
    ways = []
    full = [k for k in needs if needs[k] >= n]
    if full:
        ways.append((_with_implied(full, needs, n), max(needs[k] for k in full)))
    for key in needs:
        if key not in full:
            ways.append((_with_implied([key], needs, needs[key]), needs[key]))
    return ways


def _with_implied(keys: list[str], needs: dict[str, int], need: int) -> list[str]:
    """`keys`, with max_truncation where a carried valid or field condition implies it."""
    implies = any(k in ("min_validity", "min_field_accuracy") for k in keys)
    if "max_truncation" in needs and implies and need >= needs["max_truncation"]:
        keys = [*keys, "max_truncation"]
    return sorted(set(keys), key=_ORDER.index)


def _decides(key: str, carried: Iterable[str]) -> bool:
    """Whether `key`'s condition decides a row: max_truncation does not where a carried valid
    or field condition implies it (is-json's rows and the field assertions check the finish
    reason too)."""
    implied = any(k in ("min_validity", "min_field_accuracy") for k in carried)
    return key != "max_truncation" or not implied


_DERIVED = {
    "min_validity": "`is_json_rate` and `truncation_rate`",
    "max_truncation": "`truncation_rate`",
    "min_field_accuracy": "`field_accuracy_rate`",
}


def _conflict(key: str, count: int, n: int, chosen: str) -> str:
    what = "more rows than there are" if count > n else f"{count} of {n} rows"
    return (
        f"its count ({what}) would need a pass rate of its own, and promptfoo's exit code "
        f"holds one, given to {chosen}; promptfoo reports {_DERIVED[key]} among its "
        "derived metrics (per sample column), and `maskscope test` judges it"
    )


def _ordered(left: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(left, key=lambda item: _ORDER.index(item[0])))
