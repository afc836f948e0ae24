"""What a run on a server reports, without a server: the fail-open check on outputs of the
real model's tokenizer, and the summary, table, JSON result and comparison of samples that
have no per-step records."""

from __future__ import annotations

import json

import pytest

from engine.decode.loop import finish_run
from engine.grammar.compile import compile_schema
from engine.records import FinishReason
from engine.settings import GenerationSettings
from engine.suite.compare import compare_results, comparison_text
from engine.suite.format import Thresholds
from engine.suite.junit import junit_xml
from engine.suite.metrics import Sample, evaluate, field_results, runaway_of_pieces, summarise
from engine.suite.server.note import ServerNote
from engine.suite.server.run import GrammarCheck
from engine.suite.summary import EXIT_ERROR, exit_code, summary_text, summary_to_json

SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"currency": {"type": "string", "enum": ["USD", "EUR"]}},
        "required": ["currency"],
        "additionalProperties": False,
    }
)
SERVER = {"url": "http://gpu:8080", "mode": "response_format", "model": "m.gguf",
          "response_format": "json_object"}  # fmt: skip


def _result(text: str, finish: FinishReason):
    compiled = compile_schema(SCHEMA)
    settings = GenerationSettings(max_tokens=8)
    return finish_run(text, compiled, finish, 4, "", total_ms=100.0, setup_ms=0.0,
                      prompt_ms=0.0, forward_ms=0.0, mask_ms=0.0, settings=settings)  # fmt: skip


@pytest.fixture(scope="module")
def check(model):
    checker = GrammarCheck(model, compile_schema(SCHEMA))
    yield checker
    checker.close()


@pytest.mark.parametrize(
    ("text", "finish", "failed_open"),
    [
        ('{"currency": "USD"}', FinishReason.END_OF_GENERATION, False),
        ('{"currency": "US', FinishReason.MAX_TOKENS, False),  # cut off, a prefix it allows
        ('{"currency": "USD"}\n\nThe invoice', FinishReason.MAX_TOKENS, True),
        ("The currency is USD.", FinishReason.END_OF_GENERATION, True),
        ('{"currency": "GBP"}', FinishReason.END_OF_GENERATION, True),
        ('{"currency": ', FinishReason.END_OF_GENERATION, True),  # stopped where it wants more
    ],
)
def test_an_invalid_output_the_grammar_would_have_refused_failed_open(
    check, text, finish, failed_open
):
    where, reason = check.verdict(_result(text, finish))
    assert bool(reason) is failed_open, where
    if failed_open:
        assert reason == f"the output ignores the tested grammar: {where}"


def _sample(case: str, text: str, failed_open: str = "", logprobs=(-0.5, -1.0)) -> Sample:
    result = _result(text, FinishReason.END_OF_GENERATION)
    note = ServerNote(("a",) * len(logprobs), tuple(logprobs), "x", failed_open, "stop")
    return Sample(case, 0, 0, result, (), 100.0, field_results(result, ()), None, None,
                  None, None, runaway_of_pieces(["{", "}"]), server=note)  # fmt: skip


def test_a_server_run_reports_failing_open_as_a_harness_problem_with_no_step_metrics():
    samples = [
        _sample("usd", '{"currency": "USD"}'),
        _sample("eur", "EUR!", failed_open="the output ignores the tested grammar: rejected"),
    ]
    summary = summarise(samples, n_planned=2, wall_s=1.0)
    assert summary.n_overruled is None and summary.n_forced is None
    assert summary.mean_valid_mass is None and summary.n_failed_open == 1
    assert summary.mean_logprob == pytest.approx(-0.75) and summary.min_logprob == -1.0
    verdict = evaluate(summary, Thresholds(min_validity=0.1))
    assert exit_code(verdict) == EXIT_ERROR  # validity 0.5 holds, yet the run is no result
    assert verdict.problems[0].startswith(
        "the server failed open on 1 of 2 samples: its outputs ignore the schema"
    )
    assert samples[1].failures[0].startswith("the server failed open:")

    text = summary_text(summary, verdict, "s", SERVER)
    assert "on the server http://gpu:8080 · mode response_format (json_object) · model m.gguf" in (
        text
    )
    assert "n/a" in text.split("overruled steps")[1].splitlines()[0]  # no steps: never "of 0"
    assert "failed open (output ignores the schema)" in text

    result = summary_to_json(summary, verdict, "s", SERVER)
    assert result["server"] == SERVER
    assert result["metrics"]["n_forced"] is None and result["metrics"]["n_failed_open"] == 1
    assert result["samples"][1]["server"]["failed_open"].startswith("the output ignores")
    assert result["samples"][0]["metrics"]["mean_logprob"] == -0.75
    assert "failed open" in junit_xml(summary, verdict, "s")  # JUnit carries the problem too


def test_compare_names_the_server_and_counts_the_samples_that_failed_open():
    local = summarise([_sample("eur", '{"currency": "EUR"}')])
    served = summarise([_sample("eur", "EUR!", failed_open="ignores")])
    thresholds = Thresholds()
    a = summary_to_json(local, evaluate(local, thresholds), "s")
    del a["samples"][0]["server"]  # as a local run writes it
    b = summary_to_json(served, evaluate(served, thresholds), "s", SERVER)
    comparison = compare_results(a, b, ("local.json", "server.json"))
    assert comparison.sources[0] == "local"
    assert comparison.sources[1].startswith("server http://gpu:8080, mode response_format")
    (case,) = comparison.cases
    assert case.failed_open == (0, 1) and case.change.value == "regressed"
    assert "failed open 0 → 1" in comparison_text(comparison)
