"""Which cases failed, by one rule that the exit code, JUnit, the JSON result and the HTML
report all follow (docs/suite-format.md, "What fails a run").

The thresholds are the tests: `maskscope test` exits 1 only when one is missed. A case
therefore fails only where its samples count against a threshold that was missed (an invalid
sample under a missed min_validity, a truncated one under max_truncation, a missed field
expectation under min_field_accuracy), and errs where the engine failed on a sample or the
server failed open (exit 2). Anything else a sample missed, a field expectation with no
threshold or within it, is reported as a miss: it is what the suite measures, not a failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.records import FinishReason
from engine.suite.metrics import CaseSummary, Check, Sample, Verdict

# The samples each threshold counts against, by the threshold's key.
_COUNTED: dict[str, Callable[[Sample], bool]] = {
    "min_validity": lambda s: not s.valid,
    "max_truncation": lambda s: s.truncated,
    "min_field_accuracy": lambda s: any(not f.ok for f in s.fields),
}


@dataclass(frozen=True, slots=True)
class CaseVerdict:
    kind: str | None  # "error", "failure", or None when the case passed
    message: str  # the one-line reason for an error or a failure; empty when it passed
    failing: tuple[Sample, ...]  # the samples behind the error or failure
    missed: tuple[Sample, ...]  # samples that missed something no missed threshold counts

    @property
    def passed(self) -> bool:
        return self.kind is None


def _broken(sample: Sample) -> bool:
    return sample.result.finish_reason is FinishReason.ERROR or bool(sample.failed_open)


def _against(sample: Sample, missed: tuple[Check, ...]) -> tuple[Check, ...]:
    return tuple(c for c in missed if c.key in _COUNTED and _COUNTED[c.key](sample))


def case_verdict(case: CaseSummary, verdict: Verdict) -> CaseVerdict:
    """The case's outcome under the rule above."""
    n = len(case.samples)
    broken = tuple(s for s in case.samples if _broken(s))
    if broken:
        message = f"{len(broken)} of {n} samples could not be judged (a harness error)"
        return CaseVerdict("error", message, broken, ())
    missed_checks = tuple(c for c in verdict.checks if c.measured is not None and not c.passed)
    counted = tuple(s for s in case.samples if _against(s, missed_checks))
    rest = tuple(s for s in case.samples if s.failures and s not in counted)
    if not counted:
        return CaseVerdict(None, "", (), rest)
    names = {c.text: None for s in counted for c in _against(s, missed_checks)}
    message = f"{len(counted)} of {n} samples failed: they count against {'; '.join(names)}"
    return CaseVerdict("failure", message, counted, rest)


def sample_line(sample: Sample) -> str:
    """`sample 2 (seed 1): truncated at max_tokens; $.currency is missing`."""
    return f"sample {sample.index + 1} (seed {sample.seed}): {'; '.join(sample.failures)}"


def missed_lines(cases: tuple[CaseSummary, ...], verdict: Verdict) -> list[str]:
    """What samples missed without failing, one line each, for a report's notes."""
    return [
        f"{case.case_id}, {sample_line(s)}"
        for case in cases
        for s in case_verdict(case, verdict).missed
    ]
