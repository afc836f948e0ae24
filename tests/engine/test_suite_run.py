"""`maskscope test` on the real model: thresholds passing and failing, the cache, a cancel
that keeps the finished samples, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.suite.cache import RunCache
from engine.suite.load import suite_from_json
from engine.suite.run import run_suite

SCHEMA = {
    "type": "object",
    "properties": {"currency": {"type": "string", "enum": ["USD", "EUR", "GBP", "UNKNOWN"]}},
    "required": ["currency"],
    "additionalProperties": False,
}
PROMPT = "{{invoice}}\n\nExtract the invoice currency as JSON.\nJSON:\n"


def _suite(thresholds: dict, expected: str = "USD") -> dict:
    return {
        "format": "maskscope-suite",
        "version": 1,
        "name": "tiny",
        "schema": SCHEMA,
        "generation": {"max_tokens": 20, "temperature": 0.0, "seed": 0},
        "prompt": PROMPT,
        "samples": 1,
        "cases": [
            {"id": "usd", "vars": {"invoice": "Amount due: $40.00 (USD)"},
             "expected": {"$.currency": expected}},
            {"id": "usd-2", "vars": {"invoice": "Total: 12 US dollars"}},
        ],
        "thresholds": thresholds,
    }  # fmt: skip


@pytest.fixture
def cache_folder(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setattr("engine.suite.cache.default_folder", lambda: folder)
    return folder


def _write(tmp_path: Path, data: dict) -> str:
    path = tmp_path / "tiny.suite.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.slow
def test_thresholds_pass_then_fail_and_the_second_run_is_cached(tmp_path, cache_folder, capsys):
    passing = _write(tmp_path, _suite({"min_validity": 0.9, "max_truncation": 0.0}))
    html, junit = tmp_path / "report.html", tmp_path / "junit.xml"
    assert main(["test", passing, "--json", "--html", str(html), "--junit", str(junit)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["passed"] and out["metrics"]["validity_rate"] == 1.0
    page = html.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in page and "<script" not in page and "usd-2" in page
    assert 'tests="' in junit.read_text(encoding="utf-8")
    assert len(list(cache_folder.rglob("*.json"))) == 2

    failing = _write(tmp_path, _suite({"min_field_accuracy": 1.0}, expected="EUR"))
    assert main(["test", failing]) == 1  # the same samples: read back, not decoded
    captured = capsys.readouterr()
    assert "field accuracy 0.00 < 1.00 minimum" in captured.out
    assert "2 cached" in captured.err


def test_a_cancel_keeps_the_finished_samples_and_a_rerun_goes_on(model, tmp_path):
    suite = suite_from_json(_suite({}), tmp_path)
    cache = RunCache(tmp_path / "cache")
    stopped: list[bool] = []
    first = run_suite(
        model, suite, cache=cache, should_stop=lambda: bool(stopped),
        on_progress=lambda p: stopped.append(True),
    )  # fmt: skip
    assert first.cancelled and len(first.samples) == 1 and first.samples[0].valid
    again = run_suite(model, suite, cache=cache)
    assert not again.cancelled and again.cached == 1 and len(again.samples) == 2
    assert again.samples[0].result.text == first.samples[0].result.text


def test_a_bad_suite_exits_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.suite.json"
    bad.write_text('{"format": "maskscope-suite", "version": 9}', encoding="utf-8")
    assert main(["test", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "bad.suite.json" in err


def test_two_samples_in_one_batch_equal_the_same_seeds_run_one_at_a_time(
    model, tmp_path, monkeypatch
):
    """Up to 3 rows a batch step, llama.cpp's logits are bit for bit a single run's
    (engine/decode/batch.py), so batched samples must equal sequential ones exactly."""
    data = _suite({}) | {"samples": 2, "generation": {"max_tokens": 16, "temperature": 0.9}}
    suite = suite_from_json(data, tmp_path)
    one = run_suite(model, suite, parallel=1)
    import engine.suite.run as runner

    batches: list[list[int]] = []
    real = runner.generate_batch

    def spy(model, compiled, prompt, settings, seeds, should_stop):
        batches.append(list(seeds))
        return real(model, compiled, prompt, settings, seeds, should_stop)

    monkeypatch.setattr(runner, "generate_batch", spy)
    two = run_suite(model, suite, parallel=2)
    assert batches == [[0, 1], [0, 1]]  # each case's two samples in one batch
    assert [(s.case_id, s.index, s.seed) for s in two.samples] == [
        (s.case_id, s.index, s.seed) for s in one.samples
    ]
    for a, b in zip(one.samples, two.samples, strict=True):
        assert a.result.text == b.result.text
        assert [(r.token_id, r.valid_mass) for r in a.records] == [
            (r.token_id, r.valid_mass) for r in b.records
        ]
