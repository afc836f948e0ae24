"""What a suite run measured: one Sample per case × sample, a Summary over all of them, and
the Verdict of the suite's thresholds on that summary.

Rules the numbers follow, so that two runs compare:

- **valid** is RunResult.valid: finished normally, parsed, and passed the schema. A run cut off
  at max_tokens is *truncated* and never valid.
- **valid mass** is each step's share of the model's probability that the grammar allowed; the
  summary's mean and minimum are over every step of every sample (step-weighted).
- **overruled** and **forced** steps are engine/explain/marks.py's `mark()`.
- **field accuracy** is fields ok / fields checked over every sample; a sample whose output is
  not a JSON object fails each of its fields. None when no case expects field values.
- **latency** is the wall time for one object, in ms; p50 and p95 are nearest-rank
  percentiles: the value at rank ceil(q/100 × n) of the n sorted latencies, so each is one of
  the latencies measured, never an interpolation. On a server it splits in two: **service**,
  the time the server spent on the sample (llama-server's `timings`: prompt_ms +
  predicted_ms), and **queue**, the rest of the request's wall time (waiting for a free slot,
  and HTTP). A server that reports no timings (llama-cpp-python's) has service = the request's
  wall time from when it was sent, and no queue: waiting inside that server cannot be told
  apart there. A local sample's service is its latency. The suite's `max_p95_latency_ms`
  holds the service p95 unless its thresholds ask for `"latency": "wall"`.
- **runaway**: a sample that spends many steps on whitespace alone, or repeats itself. A step is
  whitespace-only when its token's piece is non-empty and all whitespace. A sample runs away
  when its longest run of consecutive whitespace-only steps is at least RUNAWAY_WHITESPACE_RUN,
  or when at least RUNAWAY_WHITESPACE_SHARE of its steps are whitespace-only over at least
  RUNAWAY_SHARE_MIN_STEPS steps, or when the same non-whitespace piece comes at least
  RUNAWAY_REPEAT times in a row. (Gemma writes numbers digit by digit, so the repeat bound sits
  above any plausible run of equal digits such as 100000000.)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from engine.explain.marks import Mark, mark
from engine.records import FinishReason, RunResult, StepRecord
from engine.suite.format import Expectation, Thresholds
from engine.suite.server.note import ServerNote

RUNAWAY_WHITESPACE_RUN = 16
RUNAWAY_WHITESPACE_SHARE = 0.5
RUNAWAY_SHARE_MIN_STEPS = 32
RUNAWAY_REPEAT = 16


class FieldResult(NamedTuple):
    path: str
    ok: bool
    why: str  # why it failed, naming the path; empty when ok


@dataclass(frozen=True, slots=True)
class Runaway:
    """How much of a sample went on whitespace and repetition, and whether that is a runaway."""

    whitespace_steps: int
    longest_whitespace_run: int
    longest_repeat: int  # the longest run of one non-whitespace piece
    repeated_piece: str  # that piece; empty when no piece came twice in a row
    reason: str  # empty when the sample did not run away

    @property
    def runaway(self) -> bool:
        return bool(self.reason)


@dataclass(frozen=True, slots=True)
class Sample:
    """One case × one sample, with the numbers the summary adds up."""

    case_id: str
    index: int  # the sample's number within its case, from 0
    seed: int
    result: RunResult
    records: tuple[StepRecord, ...]
    latency_ms: float
    fields: tuple[FieldResult, ...]
    mean_valid_mass: float | None  # None for a sample without steps
    min_valid_mass: float | None
    n_overruled: int | None  # None for a sample made on a server: it has no per-step masks
    n_forced: int | None
    runaway: Runaway
    # The run cache's key of this sample's run (engine/suite/cache.py sample_key), which
    # opens it again from a result file; empty when the run was not made by a suite runner.
    run_key: str = ""
    server: ServerNote | None = None  # for a sample made on a server (engine/suite/server/run.py)
    # The server's own time on the sample, from its timings; None where it reported none.
    server_ms: float | None = None

    @property
    def service_ms(self) -> float:
        """The time spent serving this sample: the server's, else the whole latency."""
        return self.server_ms if self.server_ms is not None else self.latency_ms

    @property
    def queue_ms(self) -> float | None:
        """The wall time the server did not spend on the sample; None where it cannot say."""
        return None if self.server_ms is None else max(0.0, self.latency_ms - self.server_ms)

    @property
    def failed_open(self) -> str:
        """Why the server ignored the schema on this sample; empty when it did not."""
        return self.server.failed_open if self.server is not None else ""

    @property
    def valid(self) -> bool:
        return self.result.valid

    @property
    def truncated(self) -> bool:
        return self.result.truncated

    @property
    def n_tokens(self) -> int:
        return self.result.n_tokens

    @property
    def tokens_per_s(self) -> float:
        return self.result.tokens_per_s

    @property
    def fields_ok(self) -> int:
        return sum(f.ok for f in self.fields)

    @property
    def failures(self) -> tuple[str, ...]:
        """Why this sample fails its case, in words; empty when it passes."""
        invalid = _invalid_reasons(self.result)
        if self.failed_open:  # first: it says why the rest went wrong
            invalid = (f"the server failed open: {self.failed_open}", *invalid)
        if not _is_object(self.result):
            return invalid  # its fields went unchecked: the reason it is no object says it all
        return (*invalid, *(f.why for f in self.fields if not f.ok))

    @property
    def passed(self) -> bool:
        return not self.failures


def _finished(result: RunResult) -> bool:
    return result.finish_reason in (FinishReason.GRAMMAR_COMPLETE, FinishReason.END_OF_GENERATION)


def _is_object(result: RunResult) -> bool:
    """Whether the run ended with a whole JSON value whose fields can be checked."""
    return _finished(result) and result.parse_error is None


def _invalid_reasons(result: RunResult) -> tuple[str, ...]:
    if result.valid:
        return ()
    reason = result.finish_reason
    if not _finished(result):
        detail = f": {result.message}" if reason is FinishReason.ERROR and result.message else ""
        return (f"{reason.label}{detail}",)
    if result.parse_error is not None:
        return (f"not JSON: {result.parse_error}",)
    return tuple(f"{e.path}: {e.message}" for e in result.errors)


def _whitespace_only(piece: str) -> bool:
    return bool(piece) and not piece.strip()


def _longest_true_run(flags: Iterable[bool]) -> int:
    best = run = 0
    for flag in flags:
        run = run + 1 if flag else 0
        best = max(best, run)
    return best


def _longest_repeat(pieces: Sequence[str]) -> tuple[int, str]:
    """The longest run of one non-whitespace piece, and that piece."""
    best, best_piece, run = 0, "", 0
    for i, piece in enumerate(pieces):
        if not piece.strip():
            run = 0
            continue
        run = run + 1 if i and pieces[i - 1] == piece else 1
        if run > best:
            best, best_piece = run, piece
    return (best, best_piece) if best > 1 else (0, "")


def runaway_of(records: Sequence[StepRecord]) -> Runaway:
    return runaway_of_pieces([r.token_piece for r in records])


def runaway_of_pieces(pieces: Sequence[str]) -> Runaway:
    """The runaway measure over the output's token pieces (a server's sample has no records)."""
    white = [_whitespace_only(p) for p in pieces]
    n_white, longest_white = sum(white), _longest_true_run(white)
    repeat, repeated = _longest_repeat(pieces)
    reasons = []
    if longest_white >= RUNAWAY_WHITESPACE_RUN:
        reasons.append(f"{longest_white} whitespace-only tokens in a row")
    elif len(pieces) >= RUNAWAY_SHARE_MIN_STEPS and n_white >= RUNAWAY_WHITESPACE_SHARE * len(
        pieces
    ):
        reasons.append(f"{n_white} of {len(pieces)} tokens whitespace-only")
    if repeat >= RUNAWAY_REPEAT:
        reasons.append(f"{repeated!r} {repeat} times in a row")
    return Runaway(n_white, longest_white, repeat, repeated, "; ".join(reasons))


def field_results(
    result: RunResult, expectations: Iterable[Expectation]
) -> tuple[FieldResult, ...]:
    """Each expected field against the output; an output that is not a whole JSON value
    fails every field, so that field accuracy counts the same fields in every sample."""
    if not _is_object(result):
        why = f"not checked: no object ({_invalid_reasons(result)[0]})"
        return tuple(FieldResult(e.path, False, f"{e.path} {why}") for e in expectations)
    return tuple(FieldResult(e.path, *e.check(result.parsed)) for e in expectations)


def sample_from_run(
    case_id: str,
    index: int,
    seed: int,
    result: RunResult,
    records: Sequence[StepRecord],
    *,
    latency_ms: float | None = None,
    expectations: Iterable[Expectation] = (),
    run_key: str = "",
) -> Sample:
    """A Sample from one run. `latency_ms` is the wall time the caller measured for the object;
    without it, the run's own time less building the mask backends (prompt plus decoding)."""
    masses = [r.valid_mass for r in records]
    marks = [mark(r) for r in records]
    return Sample(
        case_id=case_id,
        index=index,
        seed=seed,
        result=result,
        records=tuple(records),
        latency_ms=latency_ms if latency_ms is not None else result.total_ms - result.setup_ms,
        fields=field_results(result, expectations),
        mean_valid_mass=sum(masses) / len(masses) if masses else None,
        min_valid_mass=min(masses, default=None),
        n_overruled=marks.count(Mark.OVERRULED),
        n_forced=marks.count(Mark.FORCED),
        runaway=runaway_of(records),
        run_key=run_key,
    )


# -- over all samples -----------------------------------------------------------------------


def nearest_rank(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile by nearest rank: the value at rank ceil(q/100 × n), 1-based, of the
    sorted values (rank 1 for q = 0); None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def _rate(count: int, total: int) -> float | None:
    return count / total if total else None


def _badness(sample: Sample) -> tuple[Any, ...]:
    """Sort key: the worst sample first (invalid, then truncated, then fewest fields ok,
    then lowest valid mass, then runaway)."""
    return (
        sample.valid,
        not sample.truncated,
        sample.fields_ok - len(sample.fields),
        sample.min_valid_mass if sample.min_valid_mass is not None else 1.0,
        not sample.runaway.runaway,
        sample.index,
    )


@dataclass(frozen=True, slots=True)
class CaseSummary:
    case_id: str
    samples: tuple[Sample, ...]

    @property
    def n_valid(self) -> int:
        return sum(s.valid for s in self.samples)

    @property
    def validity_rate(self) -> float | None:
        return _rate(self.n_valid, len(self.samples))

    @property
    def fields_ok(self) -> int:
        return sum(s.fields_ok for s in self.samples)

    @property
    def fields_checked(self) -> int:
        return sum(len(s.fields) for s in self.samples)

    @property
    def failing(self) -> tuple[Sample, ...]:
        return tuple(s for s in self.samples if not s.passed)

    @property
    def passed(self) -> bool:
        return not self.failing

    @property
    def worst(self) -> Sample | None:
        return min(self.samples, key=_badness, default=None)


@dataclass(frozen=True, slots=True)
class Summary:
    """What `maskscope test` reports. Rates are None when there is nothing to divide by."""

    samples: tuple[Sample, ...]
    cases: tuple[CaseSummary, ...]  # in the order the cases first appear
    validity_rate: float | None
    truncation_rate: float | None
    mean_valid_mass: float | None
    min_valid_mass: float | None
    # Per-step counts: None for a run made on a server, which has no per-step masks (n/a,
    # never 0: zero overruled steps would claim the grammar never overruled the model).
    n_steps: int | None
    n_overruled: int | None
    n_forced: int | None
    fields_ok: int
    fields_checked: int
    field_accuracy: float | None
    n_tokens: int
    tokens_per_s: float | None
    latency_ms_p50: float | None  # wall time
    latency_ms_p95: float | None
    n_runaway: int
    n_errors: int  # samples the engine failed on: a harness error, not a model failure
    n_cancelled: int
    wall_s: float | None  # the batch's wall time, when the caller measured it
    n_planned: int | None = None  # samples the run set out to make, when the caller says
    # Samples made on a server (engine/suite/server/run.py): those whose output ignored the
    # schema, and the token logprobs the server returned (mean and minimum over every token).
    n_failed_open: int = 0
    mean_logprob: float | None = None
    min_logprob: float | None = None
    service_ms_p50: float | None = None  # the time serving each sample (see the docstring)
    service_ms_p95: float | None = None
    queue_ms_p50: float | None = None  # None unless the server reported its own times
    queue_ms_p95: float | None = None
    n_server_timed: int = 0  # samples whose service time is the server's own

    @property
    def n_samples(self) -> int:
        return len(self.samples)

    @property
    def n_failing(self) -> int:
        """Samples that failed their case: each with failures of its own (Sample.failures)."""
        return sum(not s.passed for s in self.samples)

    @property
    def n_cases(self) -> int:
        return len(self.cases)


def _by_case(samples: Sequence[Sample]) -> tuple[CaseSummary, ...]:
    groups: dict[str, list[Sample]] = {}
    for s in samples:
        groups.setdefault(s.case_id, []).append(s)
    return tuple(CaseSummary(cid, tuple(group)) for cid, group in groups.items())


def _generation_s(result: RunResult) -> float:
    return max(0.0, result.total_ms - result.setup_ms - result.prompt_ms) / 1000.0


def summarise(
    samples: Iterable[Sample], *, wall_s: float | None = None, n_planned: int | None = None
) -> Summary:
    """The summary over `samples`. Tokens/s is every token over `wall_s` when the caller gives
    the batch's wall time (parallel sequences overlap, so their own times would add up to too
    much), else over the sum of each sample's decoding time. `n_planned`, the number of samples
    the run set out to make, lets the verdict see a run stopped between two samples."""
    samples = tuple(samples)
    n = len(samples)
    masses = [r.valid_mass for s in samples for r in s.records]
    marks = [mark(r) for s in samples for r in s.records]
    fields_ok = sum(s.fields_ok for s in samples)
    fields_checked = sum(len(s.fields) for s in samples)
    n_tokens = sum(s.n_tokens for s in samples)
    seconds = wall_s if wall_s is not None else sum(_generation_s(s.result) for s in samples)
    latencies = [s.latency_ms for s in samples]
    services = [s.service_ms for s in samples]
    queues = [q for s in samples if (q := s.queue_ms) is not None]
    reasons = [s.result.finish_reason for s in samples]
    logprobs = [lp for s in samples if s.server is not None for lp in s.server.logprobs]
    # Per-step marks exist only where samples were decoded here: on a server they are n/a.
    stepwise = not samples or any(s.server is None for s in samples)
    return Summary(
        samples=samples,
        cases=_by_case(samples),
        validity_rate=_rate(sum(s.valid for s in samples), n),
        truncation_rate=_rate(sum(s.truncated for s in samples), n),
        mean_valid_mass=sum(masses) / len(masses) if masses else None,
        min_valid_mass=min(masses, default=None),
        n_steps=len(masses) if stepwise else None,
        n_overruled=marks.count(Mark.OVERRULED) if stepwise else None,
        n_forced=marks.count(Mark.FORCED) if stepwise else None,
        fields_ok=fields_ok,
        fields_checked=fields_checked,
        field_accuracy=_rate(fields_ok, fields_checked),
        n_tokens=n_tokens,
        tokens_per_s=n_tokens / seconds if seconds > 0 else None,
        latency_ms_p50=nearest_rank(latencies, 50),
        latency_ms_p95=nearest_rank(latencies, 95),
        n_runaway=sum(s.runaway.runaway for s in samples),
        n_errors=reasons.count(FinishReason.ERROR),
        n_cancelled=reasons.count(FinishReason.CANCELLED),
        wall_s=wall_s,
        n_planned=n_planned,
        n_failed_open=sum(bool(s.failed_open) for s in samples),
        mean_logprob=sum(logprobs) / len(logprobs) if logprobs else None,
        min_logprob=min(logprobs, default=None),
        service_ms_p50=nearest_rank(services, 50),
        service_ms_p95=nearest_rank(services, 95),
        queue_ms_p50=nearest_rank(queues, 50),
        queue_ms_p95=nearest_rank(queues, 95),
        n_server_timed=len(queues),
    )


# -- the thresholds -------------------------------------------------------------------------

# Threshold field -> (the metric in words, the Summary attribute, unit, "min" or "max").
THRESHOLDS: dict[str, tuple[str, str, str, str]] = {
    "min_validity": ("validity", "validity_rate", "", "min"),
    "max_truncation": ("truncation", "truncation_rate", "", "max"),
    "min_field_accuracy": ("field accuracy", "field_accuracy", "", "min"),
    "max_p95_latency_ms": ("p95 latency", "service_ms_p95", " ms", "max"),
}
# What max_p95_latency_ms holds under `"latency": "wall"`: queueing counted in.
_WALL = ("p95 wall latency", "latency_ms_p95")
_UNMEASURED = {
    "field_accuracy": "no case expects field values",
}


def _pair(measured: float, limit: float, unit: str) -> tuple[str, str]:
    """Both numbers with as many decimals as it takes to tell them apart (0.895 against 0.90
    must not read 0.90 < 0.90)."""
    decimals = 0 if unit else 2
    while (
        decimals < 6 and measured != limit and f"{measured:.{decimals}f}" == f"{limit:.{decimals}f}"
    ):
        decimals += 1
    return f"{measured:.{decimals}f}{unit}", f"{limit:.{decimals}f}{unit}"


@dataclass(frozen=True, slots=True)
class Check:
    """One threshold against what was measured."""

    key: str  # the Thresholds field: min_validity, ...
    metric: str  # in words: validity, p95 latency
    limit: float
    measured: float | None  # None when the run gives nothing to measure it on
    passed: bool
    attr: str = ""  # the Summary attribute measured; THRESHOLDS' by default

    @property
    def text(self) -> str:
        """validity 0.75 < 0.90 minimum; p95 latency 812 ms ≤ 1000 ms maximum."""
        _, attr, unit, side = THRESHOLDS[self.key]
        attr = self.attr or attr
        bound = "minimum" if side == "min" else "maximum"
        if self.measured is None:
            why = _UNMEASURED.get(attr, "no sample finished")
            return f"{self.metric} not measured ({why}); its {bound} is {self.limit:g}{unit}"
        measured, limit = _pair(self.measured, self.limit, unit)
        signs = {"min": ("≥", "<"), "max": ("≤", ">")}[side]
        sign = signs[0] if self.passed else signs[1]
        return f"{self.metric} {measured} {sign} {limit} {bound}"


@dataclass(frozen=True, slots=True)
class Verdict:
    checks: tuple[Check, ...]
    # What makes the run no test result at all: nothing ran, the engine failed, a threshold
    # had nothing to measure. Any of them means exit code 2, never 1.
    problems: tuple[str, ...] = ()

    @property
    def failed(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.passed)

    @property
    def passed(self) -> bool:
        return not self.problems and not self.failed


def _check(key: str, limit: float, summary: Summary, latency: str) -> Check:
    metric, attr, _, side = THRESHOLDS[key]
    if key == "max_p95_latency_ms" and latency == "wall":
        metric, attr = _WALL
    measured = getattr(summary, attr)
    if measured is None:
        return Check(key, metric, limit, None, False, attr)
    ok = measured >= limit if side == "min" else measured <= limit
    return Check(key, metric, limit, measured, ok, attr)


def _problems(summary: Summary, checks: Sequence[Check]) -> tuple[str, ...]:
    found = []
    if not summary.n_samples:
        found.append("no sample was run")
    if summary.n_errors:
        first = next(s for s in summary.samples if s.result.finish_reason is FinishReason.ERROR)
        found.append(
            f"the engine failed on {summary.n_errors} of {summary.n_samples} samples "
            f"(case {first.case_id}, sample {first.index + 1}: "
            f"{first.result.message or 'no message'})"
        )
    if summary.n_failed_open:
        first = next(s for s in summary.samples if s.failed_open)
        found.append(
            f"the server failed open on {summary.n_failed_open} of {summary.n_samples} "
            f"samples: its outputs ignore the schema (case {first.case_id}, sample "
            f"{first.index + 1}: {first.failed_open})"
        )
    planned = max(summary.n_planned or 0, summary.n_samples)
    unfinished = summary.n_cancelled + planned - summary.n_samples
    if unfinished:
        found.append(f"cancelled: {unfinished} of {planned} samples unfinished")
    found.extend(c.text for c in checks if c.measured is None)
    return tuple(found)


def evaluate(summary: Summary, thresholds: Thresholds) -> Verdict:
    """Each threshold the suite sets, in THRESHOLDS order, against the summary."""
    checks = tuple(
        _check(key, limit, summary, thresholds.latency)
        for key in THRESHOLDS
        if (limit := getattr(thresholds, key)) is not None
    )
    return Verdict(checks, _problems(summary, checks))
