"""Which of a suite's thresholds the exported promptfoo config's exit code carries
(engine/suite/bundle/promptfoo_gate.py), held to both sides' arithmetic: promptfoo 0.121's
pass rate (successes / rows × 100 against PROMPTFOO_PASS_RATE_THRESHOLD, src/commands/eval.ts)
and test score (Σ score × weight / Σ weight against the test's `threshold`,
src/assertions/index.ts) in the same IEEE doubles JavaScript uses, against `maskscope test`'s
count / total compared with the limit. The config itself runs under the real promptfoo in
tests/engine/test_bundle_promptfoo.py."""

from __future__ import annotations

import dataclasses

import pytest

from engine.suite.bundle.promptfoo import promptfoo_config
from engine.suite.bundle.promptfoo_gate import (
    COMPLETE,
    FIELDS,
    VALID,
    gate,
    row_threshold,
)
from engine.suite.bundled import load_bundled_suite
from engine.suite.format import Case, Expectation, Suite, Thresholds


def _suite(fields: list[int], samples: int = 1, **thresholds: float) -> Suite:
    """A suite of len(fields) cases, case i expecting fields[i] fields."""
    cases = tuple(
        Case(f"c{i}", {"x": str(i)}, tuple(Expectation(f"$.f{j}", "equals", j) for j in range(m)))
        for i, m in enumerate(fields)
    )
    return Suite(
        name="gate",
        schema_text='{"type": "object"}',
        prompt="{{x}}",
        cases=cases,
        samples=samples,
        generation={"seed": 7},
        thresholds=Thresholds(**thresholds),
    )


def test_the_currency_suite_carries_validity_and_truncation_and_names_the_rest():
    passing = gate(load_bundled_suite("currency"))  # 5 cases × 2 samples
    assert (passing.n, passing.need) == (10, 10)  # validity 0.95 of 10 needs all 10
    assert passing.carried == ("min_validity", "max_truncation")  # truncation 0.05: none
    assert passing.deciding == {VALID}  # a valid sample was not cut off
    assert [key for key, _ in passing.left] == ["min_field_accuracy", "max_p95_latency_ms"]
    assert passing.env_value() == "95"
    said = " ".join(passing.sentences())
    assert "Not carried: `min_field_accuracy`" in said and "4 of 10 rows" in said
    assert "percentile" in said  # why not the latency


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 19, 20, 29, 100, 101, 1000])
@pytest.mark.parametrize("share", [0.0, 0.05, 0.1, 0.29, 1 / 3, 0.5, 0.57, 0.7, 0.95, 0.999, 1.0])
def test_promptfoos_exit_code_is_maskscopes_verdict_for_every_count(n, share):
    """For every number of passing rows: promptfoo exits 100 exactly where `maskscope test`
    misses the carried threshold, whatever the rounding (29 / 100 × 100 is 28.999…)."""
    for key, missed in (
        ("min_validity", lambda k: not k / n >= share),
        ("max_truncation", lambda k: not (n - k) / n <= share),  # k rows not truncated
    ):
        passing = gate(_suite([0] * n, **{key: share}))
        assert passing.carried == (key,)
        pass_rate = float(passing.env_value())  # as promptfoo parses the config's string
        for k in range(n + 1):
            assert (k / n * 100 < pass_rate) == missed(k), (key, k)


def test_field_accuracy_is_carried_where_each_case_expects_one_field():
    passing = gate(_suite([1, 1], samples=2, min_field_accuracy=0.5))
    assert (passing.carried, passing.deciding, passing.n, passing.need) == (
        ("min_field_accuracy",), {FIELDS}, 4, 2
    )  # fmt: skip
    uneven = gate(_suite([2, 1], min_field_accuracy=0.5))
    assert not uneven.carried and [k for k, _ in uneven.left] == ["min_field_accuracy"]
    assert "do not each expect exactly one" in uneven.left[0][1]
    # Every field of every sample: a conjunction, whatever the counts; a case expecting none
    # has nothing to miss.
    every = gate(_suite([2, 1, 0], min_field_accuracy=1.0))
    assert (every.carried, every.need) == (("min_field_accuracy",), 3)
    none = gate(_suite([0, 0], min_field_accuracy=0.5))
    assert "cannot measure it" in none.left[0][1]


def test_one_count_carries_one_threshold_unless_every_sample_must_meet_them():
    # Both at a share of rows: the suite format's order decides, the other is named.
    both = gate(_suite([1, 1, 1, 1], min_validity=0.5, min_field_accuracy=0.5))
    assert both.carried == ("min_validity",)
    assert [k for k, _ in both.left] == ["min_field_accuracy"]
    # Where validity needs every row it joins field accuracy's every row: one conjunction.
    full = gate(_suite([1, 1], min_validity=1.0, min_field_accuracy=1.0, max_truncation=0.0))
    assert full.carried == ("min_validity", "max_truncation", "min_field_accuracy")
    assert (full.need, full.deciding) == (2, {VALID, FIELDS})
    # One that needs a share carries truncation along only where its count covers truncation's.
    along = gate(_suite([0] * 10, min_validity=0.8, max_truncation=0.2))  # 8 valid, 8 whole
    assert along.carried == ("min_validity", "max_truncation") and along.deciding == {VALID}
    apart = gate(_suite([0] * 10, min_validity=0.7, max_truncation=0.2))  # 7 valid, 8 whole
    assert apart.carried == ("min_validity",) and [k for k, _ in apart.left] == ["max_truncation"]
    alone = gate(_suite([0] * 4, max_truncation=0.25))
    assert alone.deciding == {COMPLETE}


def test_no_threshold_carries_nothing_and_promptfoo_then_exits_0():
    passing = gate(_suite([1]))
    assert (passing.need, passing.carried, passing.env_value()) == (0, (), "0")
    assert "carries none" in passing.sentences()[0]


@pytest.mark.parametrize("deciding", range(1, 6))
@pytest.mark.parametrize("others", range(0, 6))
def test_a_tests_threshold_is_reached_exactly_when_every_deciding_assertion_passes(
    deciding, others
):
    for weight in range(others + 1, others + 4):  # the config's weight: the most others + 1
        threshold = row_threshold(deciding, others, weight)
        for passed in range(deciding + 1):
            for also in range(others + 1):  # promptfoo's score: Σ score × weight / Σ weight
                score = (weight * passed + also) / (weight * deciding + others)
                assert (score >= threshold) == (passed == deciding), (weight, passed, also)


def test_the_config_weighs_what_decides_and_seeds_each_sample():
    suite = _suite([1, 1], samples=3, min_field_accuracy=0.5)
    config = promptfoo_config(suite, "m.gguf")
    assert config["env"] == {"PROMPTFOO_PASS_RATE_THRESHOLD": "41.6667"}  # 3 of 6 rows
    seeds = [(p["label"], p["config"]["seed"]) for p in config["providers"]]
    assert seeds == [("sample 1 (seed 7)", 7), ("sample 2 (seed 8)", 8), ("sample 3 (seed 9)", 9)]
    assert [a["weight"] for a in config["defaultTest"]["assert"]] == [1, 1]  # is-json, length
    for test in config["tests"]:
        (field,) = test["assert"]
        assert field["weight"] == 3 and test["threshold"] == row_threshold(1, 2, 3)
        assert field["value"].startswith("context.providerResponse?.finishReason !== 'length'")
    derived = {d["name"]: d["value"] for d in config["derivedMetrics"]}
    # Each column's sums of score × weight over the most they can reach: 2 tests.
    assert derived == {
        "is_json_rate": "is_json / 2",
        "truncation_rate": "1 - complete / 2",
        "field_accuracy_rate": "field_accuracy / 6",
    }
    # Without a threshold every assertion weighs 1 and no test has a threshold of its own.
    plain = promptfoo_config(dataclasses.replace(suite, thresholds=Thresholds()), "m.gguf")
    assert all("threshold" not in t and t["assert"][0]["weight"] == 1 for t in plain["tests"])
    assert plain["env"] == {"PROMPTFOO_PASS_RATE_THRESHOLD": "0"}


def test_the_config_asks_for_one_request_at_a_time() -> None:
    """As the tests run it (promptfoo's default is 4 in flight, which let a llama-server
    sample run on to max_tokens): the shipped config carries it, not the command line."""
    config = promptfoo_config(_suite([1, 1]), "m.gguf")
    assert config["evaluateOptions"] == {"maxConcurrency": 1}
