"""What a suite run reports: per-sample numbers, the summary, the thresholds' verdict and the
exit code, from built records and one real saved run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.records import Candidate, FinishReason, RunResult, StepRecord, ValidationIssue
from engine.runs.saved import load_run
from engine.suite.format import Expectation, Thresholds
from engine.suite.metrics import (
    RUNAWAY_REPEAT,
    RUNAWAY_WHITESPACE_RUN,
    evaluate,
    nearest_rank,
    runaway_of,
    sample_from_run,
    summarise,
)
from engine.suite.summary import (
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_PASSED,
    FORMAT,
    exit_code,
    summary_text,
    summary_to_json,
)

RUNS = Path(__file__).parent.parent / "data" / "runs"


def _record(
    step: int, piece: str, *, forced: bool = False, overruled: bool = False, mass: float = 0.9
) -> StepRecord:
    chosen = Candidate(step + 10, piece, 0.5, 1.0, True, piece)
    wanted = Candidate(1, "The", 0.8, 0.0, False, "The")
    top_raw = (wanted, chosen) if overruled else (chosen,)
    n_valid = 1 if forced else 5
    return StepRecord(
        step, chosen.id, piece, piece, top_raw, (chosen,),
        mass, 0.0, n_valid, True, 1.0, 1.0, 0.1, step + 1,
    )  # fmt: skip


def _records(pieces: list[str], **kw: object) -> tuple[StepRecord, ...]:
    return tuple(_record(i, p, **kw) for i, p in enumerate(pieces))  # type: ignore[arg-type]


def _result(
    text: str = '{"currency": "USD"}',
    reason: FinishReason = FinishReason.GRAMMAR_COMPLETE,
    *,
    parsed: object = None,
    errors: tuple[ValidationIssue, ...] = (),
    n_tokens: int = 4,
    total_ms: float = 100.0,
) -> RunResult:
    if parsed is None and reason is not FinishReason.MAX_TOKENS:
        parsed = json.loads(text)
    parse_error = "Expecting value" if reason is FinishReason.MAX_TOKENS else None
    return RunResult(text, reason, n_tokens, parsed, parse_error, errors, total_ms=total_ms,
                     setup_ms=10.0, prompt_ms=10.0)  # fmt: skip


def _sample(case: str = "usd", index: int = 0, *, result: RunResult | None = None,
            records: tuple[StepRecord, ...] | None = None, latency_ms: float = 100.0,
            expect: tuple[Expectation, ...] = ()):  # fmt: skip
    return sample_from_run(
        case, index, index, result or _result(), records or _records(["{", "x", "}"]),
        latency_ms=latency_ms, expectations=expect,
    )  # fmt: skip


USD = Expectation("$.currency", "equals", "USD")


def test_validity_and_truncation_rates_count_a_truncated_sample_as_never_valid():
    cut = _result('{"currency": "US', FinishReason.MAX_TOKENS)
    bad = _result(errors=(ValidationIssue("$.currency", "'US' is not one of ['USD']"),))
    samples = [_sample(index=0), _sample(index=1, result=cut), _sample(index=2, result=bad),
               _sample(index=3)]  # fmt: skip
    summary = summarise(samples)
    assert summary.validity_rate == 0.5
    assert summary.truncation_rate == 0.25
    assert not samples[1].valid and samples[1].truncated
    assert samples[1].failures == ("truncated at max_tokens",)
    assert samples[2].failures == ("$.currency: 'US' is not one of ['USD']",)


def test_percentiles_are_nearest_rank_on_known_latencies():
    latencies = [float(v) for v in range(1, 21)]  # 1 .. 20 ms
    assert nearest_rank(latencies, 50) == 10.0
    assert nearest_rank(latencies, 95) == 19.0
    assert nearest_rank([5.0, 1.0, 3.0], 50) == 3.0
    assert nearest_rank([1.0, 2.0, 3.0, 4.0, 5.0], 50) == 3.0  # rank ceil(2.5) = 3
    assert nearest_rank([float(v) for v in range(1, 31)], 95) == 29.0  # rank ceil(28.5)
    assert nearest_rank([], 95) is None
    summary = summarise(_sample(index=i, latency_ms=v) for i, v in enumerate(reversed(latencies)))
    assert (summary.latency_ms_p50, summary.latency_ms_p95) == (10.0, 19.0)


def test_field_accuracy_counts_every_field_and_fails_fields_of_an_output_that_is_no_object():
    eur = _result('{"currency": "EUR"}')
    cut = _result('{"currency": "US', FinishReason.MAX_TOKENS)
    samples = [
        _sample(index=i, result=r, expect=(USD,)) for i, r in enumerate([_result(), eur, cut])
    ]
    summary = summarise(samples)
    assert (summary.fields_ok, summary.fields_checked) == (1, 3)
    assert summary.field_accuracy == pytest.approx(1 / 3)
    assert samples[1].fields[0].ok is False and "EUR" in samples[1].fields[0].why
    assert samples[1].valid and not samples[1].passed  # valid, but the wrong value
    assert "truncated" in samples[2].fields[0].why
    assert samples[2].failures == ("truncated at max_tokens",)  # unchecked fields: said once
    assert summarise([_sample()]).field_accuracy is None  # no expectations: nothing measured


def test_forced_and_overruled_steps_are_counted_per_sample_and_over_the_batch():
    records = (*_records(["{"], forced=True), *_records(["a", "b"], overruled=True),
               *_records(["c", "d"]))  # fmt: skip
    sample = _sample(records=records)
    assert (sample.n_forced, sample.n_overruled) == (1, 2)
    summary = summarise([sample, _sample(index=1, records=records)])
    assert (summary.n_forced, summary.n_overruled, summary.n_steps) == (2, 4, 10)


def test_valid_mass_mean_and_minimum_are_over_every_step():
    low = tuple(_record(i, "x", mass=m) for i, m in enumerate([0.2, 0.4]))
    high = tuple(_record(i, "x", mass=m) for i, m in enumerate([1.0, 1.0, 1.0, 1.0]))
    summary = summarise([_sample(records=low), _sample(index=1, records=high)])
    assert summary.mean_valid_mass == pytest.approx(4.6 / 6)
    assert summary.min_valid_mass == pytest.approx(0.2)
    assert _sample(records=low).mean_valid_mass == pytest.approx(0.3)


def test_a_long_whitespace_run_is_a_runaway_and_a_pretty_printed_object_is_not():
    spaces = ["{", *["\n"] * RUNAWAY_WHITESPACE_RUN, "}"]
    run = runaway_of(_records(spaces))
    assert run.runaway and run.longest_whitespace_run == RUNAWAY_WHITESPACE_RUN
    assert "whitespace-only tokens in a row" in run.reason
    short = runaway_of(_records(["{", *["\n"] * (RUNAWAY_WHITESPACE_RUN - 1), "}"]))
    assert not short.runaway and short.longest_whitespace_run == RUNAWAY_WHITESPACE_RUN - 1
    pretty = runaway_of(_records(["{", "\n", "  ", '"', "a", '":', " ", "1", "\n", "}"]))
    assert not pretty.runaway and pretty.whitespace_steps == 4
    summary = summarise([_sample(records=_records(spaces)), _sample(index=1)])
    assert summary.n_runaway == 1


def test_half_the_steps_on_whitespace_is_a_runaway_without_one_long_run():
    pieces = ["a", " "] * 20  # 40 steps, every other one a space: no long run
    run = runaway_of(_records(pieces))
    assert run.longest_whitespace_run == 1 and run.runaway
    assert "20 of 40 tokens whitespace-only" in run.reason


def test_one_piece_repeated_in_a_row_is_a_runaway_but_digits_of_a_round_number_are_not():
    looped = runaway_of(_records(['"', *["ha"] * RUNAWAY_REPEAT, '"']))
    assert looped.runaway and looped.longest_repeat == RUNAWAY_REPEAT
    assert looped.repeated_piece == "ha"
    amount = runaway_of(_records(["1", *["0"] * 8]))
    assert not amount.runaway and amount.longest_repeat == 8


def test_thresholds_pass_and_fail_with_the_failing_metric_named():
    cut = _result('{"currency": "US', FinishReason.MAX_TOKENS)
    samples = [_sample(index=i, expect=(USD,)) for i in range(3)]
    samples.append(_sample(index=3, result=cut, expect=(USD,), latency_ms=900.0))
    summary = summarise(samples)
    ok = evaluate(summary, Thresholds(min_validity=0.75, max_truncation=0.25))
    assert ok.passed and [c.passed for c in ok.checks] == [True, True]
    assert ok.checks[0].text == "validity 0.75 ≥ 0.75 minimum"
    bad = evaluate(summary, Thresholds(min_validity=0.9, max_truncation=0.1,
                                       min_field_accuracy=0.5, max_p95_latency_ms=500))  # fmt: skip
    assert not bad.passed and not bad.problems
    assert [c.text for c in bad.failed] == [
        "validity 0.75 < 0.90 minimum",
        "truncation 0.25 > 0.10 maximum",
        "p95 latency 900 ms > 500 ms maximum",
    ]
    assert bad.checks[2].passed and bad.checks[2].measured == 0.75  # field accuracy holds


def test_a_measured_value_just_under_its_limit_is_not_printed_as_equal():
    cut = _result('{"currency": "US', FinishReason.MAX_TOKENS)
    samples = [_sample(index=i, result=cut if i < 21 else None) for i in range(200)]
    check = evaluate(summarise(samples), Thresholds(min_validity=0.9)).checks[0]
    assert check.measured == pytest.approx(0.895)
    assert check.text == "validity 0.895 < 0.900 minimum"  # not "0.90 < 0.90"


def test_a_threshold_with_nothing_to_measure_or_an_engine_failure_is_a_problem_not_a_failure():
    summary = summarise([_sample()])
    verdict = evaluate(summary, Thresholds(min_field_accuracy=0.9))
    assert not verdict.passed and verdict.problems
    assert "field accuracy not measured (no case expects field values)" in verdict.problems[0]
    broken = RunResult("", FinishReason.ERROR, 0, message="llama_decode returned -1")
    failed = evaluate(summarise([_sample(result=broken, records=())]), Thresholds())
    assert "llama_decode returned -1" in failed.problems[0]
    assert evaluate(summarise([]), Thresholds()).problems == ("no sample was run",)
    stopped = evaluate(summarise([_sample()], n_planned=4), Thresholds(min_validity=0.5))
    assert stopped.problems == ("cancelled: 3 of 4 samples unfinished",)
    assert evaluate(summarise([_sample()], n_planned=1), Thresholds()).passed


def test_per_case_breakdown_names_the_worst_sample():
    cut = _result('{"currency": "US', FinishReason.MAX_TOKENS)
    samples = [_sample("usd", 0), _sample("usd", 1, result=cut), _sample("eur", 0)]
    cases = {c.case_id: c for c in summarise(samples).cases}
    assert list(cases) == ["usd", "eur"]
    assert cases["usd"].validity_rate == 0.5 and cases["usd"].worst.index == 1
    assert [s.index for s in cases["usd"].failing] == [1]
    assert cases["eur"].passed


def test_tokens_per_second_over_the_batch_uses_the_wall_time_when_given():
    samples = [_sample(index=i, result=_result(n_tokens=10, total_ms=1020.0)) for i in range(4)]
    assert summarise(samples).tokens_per_s == pytest.approx(40 / 4.0)  # 1 s of decoding each
    assert summarise(samples, wall_s=2.0).tokens_per_s == pytest.approx(20.0)


def test_a_real_saved_run_makes_a_valid_sample():
    run = load_run(RUNS / "currency-v2.json")
    sample = sample_from_run("usd", 0, 0, run.result, run.records, expectations=(USD,))
    assert sample.valid and sample.passed and sample.fields[0].ok
    assert sample.n_tokens == 10 == len(sample.records)
    assert sample.latency_ms == pytest.approx(run.result.total_ms - run.result.setup_ms)
    assert 0.0 < sample.min_valid_mass <= sample.mean_valid_mass <= 1.0
    assert sample.n_forced + sample.n_overruled <= 10
    assert not sample.runaway.runaway and sample.runaway.whitespace_steps == 2


def _mixed_run():
    cut = _result('{"currency": "US', FinishReason.MAX_TOKENS)
    eur = _result('{"currency": "EUR"}')
    samples = [_sample("usd", 0, expect=(USD,), latency_ms=120.0),
               _sample("usd", 1, result=eur, expect=(USD,), latency_ms=80.0),
               _sample("none", 0, result=cut, expect=(USD,), latency_ms=300.0)]  # fmt: skip
    return summarise(samples)


def test_exit_codes_tell_a_failed_threshold_from_a_harness_error():
    summary = _mixed_run()
    assert exit_code(evaluate(summary, Thresholds(min_validity=0.5))) == EXIT_PASSED == 0
    assert exit_code(evaluate(summary, Thresholds(min_validity=0.9))) == EXIT_FAILED == 1
    broken = RunResult("", FinishReason.ERROR, 0, message="llama_decode returned -1")
    harness = summarise([*summary.samples, _sample("x", 0, result=broken, records=())])
    # a failing threshold beside an engine failure is still no test result
    assert exit_code(evaluate(harness, Thresholds(min_validity=0.9))) == EXIT_ERROR == 2
    assert exit_code(evaluate(summarise([]), Thresholds())) == EXIT_ERROR


def test_the_printed_block_names_the_failing_metric_and_the_worst_sample_per_case():
    summary = _mixed_run()
    verdict = evaluate(summary, Thresholds(min_validity=0.9, max_p95_latency_ms=1000))
    text = summary_text(summary, verdict, "currency")
    assert text.startswith("Maskscope test · currency · 2 case(s), 3 sample(s)")
    assert "FAILED (exit 1): validity 0.67 < 0.90 minimum" in text
    assert "latency" not in text.split("FAILED")[1]  # the threshold that held is not listed
    usd = next(line for line in text.splitlines() if line.lstrip().startswith("usd"))
    assert "1/2" in usd and '#2 (seed 1): $.currency is "EUR", expected "USD"' in usd
    passed = summary_text(summary, evaluate(summary, Thresholds(min_validity=0.5)))
    # Two of the three samples failed their case: a pass says the threshold allowed them.
    assert passed.rstrip().endswith(
        "PASSED (exit 0): 1 threshold holds (2 of 3 samples failing their case, within the "
        "thresholds)"
    )


def test_the_json_result_has_its_documented_keys_and_every_sample():
    summary = _mixed_run()
    data = summary_to_json(summary, evaluate(summary, Thresholds(min_validity=0.9)), "currency")
    assert list(data) == ["format", "version", "suite", "passed", "exit_code", "metrics",
                          "thresholds", "problems", "cases", "samples"]  # fmt: skip
    assert (data["format"], data["passed"], data["exit_code"]) == (FORMAT, False, 1)
    assert data["metrics"]["validity_rate"] == pytest.approx(2 / 3, abs=1e-6)
    assert data["metrics"]["latency_ms_p95"] == 300.0
    assert data["thresholds"][0]["text"] == "validity 0.67 < 0.90 minimum"
    assert [c["id"] for c in data["cases"]] == ["usd", "none"]
    # valid with a field miss: no missed threshold counts it (issue 22), so a miss, no failure
    assert (data["cases"][0]["failing_samples"], data["cases"][0]["missed_samples"]) == ([], [1])
    assert len(data["samples"]) == 3
    eur = data["samples"][1]
    assert set(eur) >= {"case", "index", "seed", "text", "json", "valid", "errors", "fields",
                        "failures", "metrics", "finish_reason"}  # fmt: skip
    assert eur["text"] == '{"currency": "EUR"}' and eur["valid"] is True and eur["seed"] == 1
    assert eur["fields"] == [{"path": "$.currency", "ok": False,
                              "why": '$.currency is "EUR", expected "USD"'}]  # fmt: skip
    assert eur["metrics"]["n_tokens"] == 4 and eur["metrics"]["runaway"] is False
    assert data["samples"][2]["truncated"] and data["samples"][2]["finish_reason"] == "max_tokens"
    json.dumps(data)  # the result is plain JSON all through
