"""What `maskscope test` prints and writes: its exit code, the table on the terminal, and the
machine-readable result (`--json`).

Exit codes, for CI:

- 0 (EXIT_PASSED): every threshold holds.
- 1 (EXIT_FAILED): a threshold failed; the failing metrics are printed ("validity 0.75 <
  0.90 minimum").
- 2 (EXIT_ERROR): bad input or a harness error: nothing was run, the engine failed on a
  sample, the run was cancelled, or a threshold had nothing to measure. Never a test failure.
  The command line also exits 2 for a suite it cannot read or a model it cannot load.

The JSON result (FORMAT, VERSION) holds these keys, kept stable across versions that add keys:

- "format", "version"; "suite": the suite's name; "passed"; "exit_code";
- "metrics": n_samples, n_cases, validity_rate, truncation_rate, mean_valid_mass,
  min_valid_mass, n_steps, n_overruled, n_forced, fields_ok, fields_checked, field_accuracy,
  n_tokens, tokens_per_s, latency_ms_p50, latency_ms_p95 (wall time), service_ms_p50,
  service_ms_p95, queue_ms_p50, queue_ms_p95, n_server_timed (engine/suite/metrics.py: the
  time serving a sample and the time it waited; queue is null unless the server reported
  its own times), n_runaway, n_errors, n_cancelled,
  wall_s, n_planned, n_failed_open, mean_logprob, min_logprob (a rate is null when there is
  nothing to divide by; n_steps, n_overruled, n_forced and the valid mass are null for a
  server run, the logprobs for a local one);
- "server": for a run on a server (`--server`), {"url", "mode", "model", "response_format"}
  (the model the server names, the response_format form it took); absent for a local run;
- "thresholds": one {"key", "metric", "limit", "measured", "passed", "text"} per threshold set;
- "problems": why the run is no test result (exit 2), in words;
- "cases": one {"id", "n_samples", "n_valid", "validity_rate", "fields_ok", "fields_checked",
  "passed", "failing_samples", "missed_samples", "worst_sample"} per case, in suite order
  (sample indexes). A case fails, as its JUnit testcase does, only where its samples count
  against a missed threshold (engine/suite/verdicts.py); "missed_samples" are those that
  missed something (a field expectation, say) that fails nothing;
- "samples": one per case × sample: "case", "index", "seed", "text", "json", "valid",
  "truncated", "finish_reason", "parse_error", "errors" [{"path", "message"}], "message",
  "fields" [{"path", "ok", "why"}], "failures" (why it fails its case), "run_key" (the run
  cache's key of the sample's run, engine/suite/cache.py: `RunCache().get(key)` gives its
  steps back, so the window opens it from this file, as long as the cache holds it; null for a
  sample no suite runner made), and
  "metrics":
  n_tokens, tokens_per_s, latency_ms, service_ms, queue_ms, mean_valid_mass, min_valid_mass,
  n_overruled, n_forced,
  whitespace_steps, longest_whitespace_run, longest_repeat, repeated_piece, runaway,
  runaway_reason, mean_logprob, min_logprob; a sample made on a server also has "server":
  {"failed_open" (why its output ignores the schema; empty when it does not), "grammar" (the
  tested grammar on the output), "finish_reason" (the server's), "retries" (times the request
  was resent after a refused connection), "tokens", "logprobs"}.
"""

from __future__ import annotations

from typing import Any

from engine.figures import figure
from engine.suite.metrics import THRESHOLDS, CaseSummary, Check, Sample, Summary, Verdict
from engine.suite.server.note import ServerNote
from engine.suite.verdicts import case_verdict

FORMAT = "maskscope-test-result"
VERSION = 1

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_ERROR = 2


def exit_code(verdict: Verdict) -> int:
    if verdict.problems:
        return EXIT_ERROR
    return EXIT_FAILED if verdict.failed else EXIT_PASSED


# -- the table ------------------------------------------------------------------------------

_LABEL, _CELL = 44, 15


def _row(label: str, cell: str, target: str = "") -> str:
    return f"  {label:<{_LABEL}}{cell:>{_CELL}}   {target}".rstrip()


def _threshold_cells(verdict: Verdict) -> dict[str, str]:
    """Summary attribute -> "≥ 0.9 met" for the thresholds that were set."""
    cells = {}
    for check in verdict.checks:
        _, attr, unit, side = THRESHOLDS[check.key]
        attr = check.attr or attr
        state = "n/a" if check.measured is None else ("met" if check.passed else "missed")
        cells[attr] = f"{'≥' if side == 'min' else '≤'} {check.limit:g}{unit} {state}"
    return cells


def _metric_rows(s: Summary, verdict: Verdict) -> list[str]:
    bound = _threshold_cells(verdict)
    mass = f"{figure(s.mean_valid_mass)} / {figure(s.min_valid_mass)}"
    latency = f"{figure(s.latency_ms_p50)} / {figure(s.latency_ms_p95)}"
    served = any(x.server is not None for x in s.samples)
    # A local sample's service time is its latency: one row holds either threshold.
    latency_bound = bound.get("latency_ms_p95", "" if served else bound.get("service_ms_p95", ""))
    return [
        _row("metric", "measured", "threshold"),
        _row("validity rate", figure(s.validity_rate), bound.get("validity_rate", "")),
        _row(
            "truncation rate (cut at max_tokens)",
            figure(s.truncation_rate),
            bound.get("truncation_rate", ""),
        ),
        _row("valid mass mean / min (every step)", mass),
        _row(f"overruled steps{_of_steps(s)}", _count(s.n_overruled)),
        _row(f"forced steps{_of_steps(s)}", _count(s.n_forced)),
        _row(
            f"field accuracy ({s.fields_ok} of {s.fields_checked} fields)",
            figure(s.field_accuracy),
            bound.get("field_accuracy", ""),
        ),
        _row(f"tokens/s ({s.n_tokens} tokens)", figure(s.tokens_per_s)),
        _row("latency ms per object p50 / p95", latency, latency_bound),
        _row("runaway samples (whitespace or repetition)", str(s.n_runaway)),
        *_server_rows(s, bound),
    ]


def _count(value: int | None) -> str:
    return "n/a" if value is None else str(value)


def _of_steps(s: Summary) -> str:
    """The " (of 60)" after a step count; nothing for a server run, which saw no steps."""
    return "" if s.n_steps is None else f" (of {s.n_steps})"


def _server_rows(s: Summary, bound: dict[str, str]) -> list[str]:
    """The rows only a run on a server has: the latency split into service and queue."""
    if not any(x.server is not None for x in s.samples):
        return []
    logprob = f"{figure(s.mean_logprob)} / {figure(s.min_logprob)}"
    service = f"{figure(s.service_ms_p50)} / {figure(s.service_ms_p95)}"
    queue = f"{figure(s.queue_ms_p50)} / {figure(s.queue_ms_p95)}"
    # Without the server's timings, service is the request's own time, any wait inside it.
    how = "server's own" if s.n_server_timed else "request's"
    return [
        _row(f"  service ms p50 / p95 ({how})", service, bound.get("service_ms_p95", "")),
        _row("  queue wait ms p50 / p95", queue),
        _row("token logprob mean / min (from the server)", logprob),
        _row("failed open (output ignores the schema)", str(s.n_failed_open)),
    ]


def _worst_cell(case: CaseSummary) -> str:
    worst = case.worst
    if worst is None:
        return "no sample"
    if worst.failures:
        return f"#{worst.index + 1} (seed {worst.seed}): {worst.failures[0]}"
    if worst.runaway.runaway:
        return f"#{worst.index + 1} (seed {worst.seed}): runaway, {worst.runaway.reason}"
    if worst.min_valid_mass is None:  # made on a server: no masses
        return "all passed"
    return f"all passed; lowest valid mass {figure(worst.min_valid_mass)} (#{worst.index + 1})"


def _case_rows(s: Summary) -> list[str]:
    width = max([len("case"), *(len(c.case_id) for c in s.cases)])
    lines = [f"  {'case':<{width}}  {'valid':>7}  {'fields':>7}  worst sample"]
    for c in s.cases:
        fields = f"{c.fields_ok}/{c.fields_checked}" if c.fields_checked else "-"
        valid = f"{c.n_valid}/{len(c.samples)}"
        lines.append(f"  {c.case_id:<{width}}  {valid:>7}  {fields:>7}  {_worst_cell(c)}")
    return lines


def _outcome(verdict: Verdict, n_failing: int, n_samples: int) -> list[str]:
    code = exit_code(verdict)
    if code == EXIT_ERROR:
        return [f"ERROR (exit {code}): {p}" for p in verdict.problems]
    if code == EXIT_FAILED:
        return [f"FAILED (exit {code}): {c.text}" for c in verdict.failed]
    return [f"PASSED (exit {code}): {passed_reason(len(verdict.checks), n_failing, n_samples)}"]


def passed_reason(n_thresholds: int, n_failing: int, n_samples: int | None) -> str:
    """What a pass rests on, as the command line and the window word it: the thresholds
    held, or none was set; and, where samples failed their case, that the thresholds
    allowed them (a bare "passed" beside failing samples read as if none had failed)."""
    held = (
        f"{n_thresholds} threshold{'s hold' if n_thresholds > 1 else ' holds'}"
        if n_thresholds
        else "no thresholds are set"
    )
    if not n_failing:
        return held
    of = f" of {n_samples}" if n_samples else ""
    allowed = "within the thresholds" if n_thresholds else "no threshold limits them"
    return f"{held} ({n_failing}{of} samples failing their case, {allowed})"


def summary_text(
    summary: Summary, verdict: Verdict, suite_name: str = "", server: dict[str, str] | None = None
) -> str:
    """The block the command line prints after a run, in the style of `maskscope bench`;
    `server` (ServerInfo.to_json) names the server a --server run was made on."""
    name = f" · {suite_name}" if suite_name else ""
    head = f"Maskscope test{name} · {summary.n_cases} case(s), {summary.n_samples} sample(s)" + (
        f" in {summary.wall_s:.1f} s" if summary.wall_s is not None else ""
    )
    parts = [head, *([_server_line(server)] if server else []), ""]
    parts += _metric_rows(summary, verdict)
    if summary.cases:
        parts += ["", *_case_rows(summary)]
    outcome = _outcome(verdict, summary.n_failing, summary.n_samples)
    return "\n".join([*parts, "", *outcome]) + "\n"


def _server_line(server: dict[str, str]) -> str:
    form = f" ({server['response_format']})" if server.get("response_format") else ""
    model = server.get("model") or "a model it does not name"
    return f"on the server {server['url']} · mode {server['mode']}{form} · model {model}"


# -- the JSON result ------------------------------------------------------------------------


def _rounded(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


def _metrics_json(s: Summary) -> dict[str, Any]:
    return {
        "n_samples": s.n_samples,
        "n_cases": s.n_cases,
        "validity_rate": _rounded(s.validity_rate),
        "truncation_rate": _rounded(s.truncation_rate),
        "mean_valid_mass": _rounded(s.mean_valid_mass),
        "min_valid_mass": _rounded(s.min_valid_mass),
        "n_steps": s.n_steps,
        "n_overruled": s.n_overruled,
        "n_forced": s.n_forced,
        "fields_ok": s.fields_ok,
        "fields_checked": s.fields_checked,
        "field_accuracy": _rounded(s.field_accuracy),
        "n_tokens": s.n_tokens,
        "tokens_per_s": _rounded(s.tokens_per_s, 3),
        "latency_ms_p50": _rounded(s.latency_ms_p50, 3),
        "latency_ms_p95": _rounded(s.latency_ms_p95, 3),
        "service_ms_p50": _rounded(s.service_ms_p50, 3),
        "service_ms_p95": _rounded(s.service_ms_p95, 3),
        "queue_ms_p50": _rounded(s.queue_ms_p50, 3),
        "queue_ms_p95": _rounded(s.queue_ms_p95, 3),
        "n_server_timed": s.n_server_timed,
        "n_runaway": s.n_runaway,
        "n_errors": s.n_errors,
        "n_cancelled": s.n_cancelled,
        "wall_s": _rounded(s.wall_s, 3),
        "n_planned": s.n_planned,
        "n_failed_open": s.n_failed_open,
        "mean_logprob": _rounded(s.mean_logprob),
        "min_logprob": _rounded(s.min_logprob),
    }


def _check_json(c: Check) -> dict[str, Any]:
    return {
        "key": c.key,
        "metric": c.metric,
        "limit": c.limit,
        "measured": _rounded(c.measured),
        "passed": c.passed,
        "text": c.text,
    }


def _case_json(c: CaseSummary, verdict: Verdict) -> dict[str, Any]:
    worst, judged = c.worst, case_verdict(c, verdict)
    return {
        "id": c.case_id,
        "n_samples": len(c.samples),
        "n_valid": c.n_valid,
        "validity_rate": _rounded(c.validity_rate),
        "fields_ok": c.fields_ok,
        "fields_checked": c.fields_checked,
        "passed": judged.passed,
        "failing_samples": [s.index for s in judged.failing],
        "missed_samples": [s.index for s in judged.missed],
        "worst_sample": worst.index if worst is not None else None,
    }


def sample_to_json(s: Sample) -> dict[str, Any]:
    r, run, note = s.result, s.runaway, s.server
    return {
        "case": s.case_id,
        "index": s.index,
        "seed": s.seed,
        "text": r.text,
        "json": r.parsed,
        "valid": s.valid,
        "truncated": s.truncated,
        "finish_reason": r.finish_reason.value,
        "parse_error": r.parse_error,
        "errors": [{"path": e.path, "message": e.message} for e in r.errors],
        "message": r.message,
        "fields": [{"path": f.path, "ok": f.ok, "why": f.why} for f in s.fields],
        "failures": list(s.failures),
        "run_key": s.run_key or None,
        "metrics": {
            "n_tokens": s.n_tokens,
            "tokens_per_s": _rounded(s.tokens_per_s, 3),
            "latency_ms": _rounded(s.latency_ms, 3),
            "service_ms": _rounded(s.service_ms, 3),
            "queue_ms": _rounded(s.queue_ms, 3),
            "mean_valid_mass": _rounded(s.mean_valid_mass),
            "min_valid_mass": _rounded(s.min_valid_mass),
            "n_overruled": s.n_overruled,
            "n_forced": s.n_forced,
            "whitespace_steps": run.whitespace_steps,
            "longest_whitespace_run": run.longest_whitespace_run,
            "longest_repeat": run.longest_repeat,
            "repeated_piece": run.repeated_piece,
            "runaway": run.runaway,
            "runaway_reason": run.reason,
            "mean_logprob": _rounded(note.mean_logprob) if note else None,
            "min_logprob": _rounded(note.min_logprob) if note else None,
        },
    } | ({"server": _server_json(note)} if note else {})


def _server_json(note: ServerNote) -> dict[str, Any]:
    return {
        "failed_open": note.failed_open,
        "grammar": note.grammar,
        "finish_reason": note.finish_reason,
        "retries": note.retries,
        "tokens": list(note.tokens),
        "logprobs": [round(lp, 6) for lp in note.logprobs],
    }


def summary_to_json(
    summary: Summary, verdict: Verdict, suite_name: str = "", server: dict[str, str] | None = None
) -> dict[str, Any]:
    """The result `--json` writes; its keys are listed in this module's docstring."""
    result = {
        "format": FORMAT,
        "version": VERSION,
        "suite": suite_name,
        "passed": verdict.passed,
        "exit_code": exit_code(verdict),
        "metrics": _metrics_json(summary),
        "thresholds": [_check_json(c) for c in verdict.checks],
        "problems": list(verdict.problems),
        "cases": [_case_json(c, verdict) for c in summary.cases],
        "samples": [sample_to_json(s) for s in summary.samples],
    }
    return result | ({"server": server} if server else {})
