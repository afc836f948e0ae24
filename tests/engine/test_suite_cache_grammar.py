"""The run cache serves a sample only to the grammar and the versions that made it, and the
bundle refuses a sample made under another grammar than the one it ships (issue 22: after an
upgrade, `test` and `export` reused old samples while the bundle hashed a fresh grammar)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from engine.runs.saved import load_run
from engine.suite import cache as caching
from engine.suite.bundle import export as bundling  # its names tested_of and Tested look like tests
from engine.suite.cache import RunCache
from engine.suite.run import run_suite
from tests.small_suite import currency_cut

RUN = Path(__file__).parent.parent / "data" / "runs" / "currency-v2.json"


@pytest.fixture
def suite():
    return currency_cut(cases=1, samples=1, max_tokens=8)


def test_a_sample_made_by_another_version_is_decoded_again(model, suite, tmp_path, monkeypatch):
    cache = RunCache(tmp_path / "cache")
    first = run_suite(model, suite, cache=cache)
    assert first.cached == 0 and first.runs[0].grammar_sha256
    assert run_suite(model, suite, cache=cache).cached == 1
    upgraded = {**caching.made_by(), "llguidance": "99.0"}
    monkeypatch.setattr("engine.suite.run.made_by", lambda: upgraded)
    assert run_suite(model, suite, cache=cache).cached == 0


def test_a_cached_sample_made_under_another_grammar_is_not_reused(model, suite, tmp_path):
    cache = RunCache(tmp_path / "cache")
    first = run_suite(model, suite, cache=cache)
    key = first.samples[0].run_key
    cache.put(key, dataclasses.replace(first.runs[0], grammar_sha256="0" * 64))
    again = run_suite(model, suite, cache=cache)
    assert again.cached == 0 and again.runs[0].grammar_sha256 == first.runs[0].grammar_sha256


def test_export_refuses_a_sample_made_under_another_grammar(model, suite):
    """tested_of is what `maskscope export` and File > Export Bundle both ask before any
    file is written."""
    run = run_suite(model, suite)
    assert bundling.tested_of(model, suite, run).exit_code in (0, 1)  # its own grammar: fine
    stale = dataclasses.replace(run.runs[0], grammar_sha256="0" * 64)
    with pytest.raises(bundling.BundleError, match="decoded under grammar 000000000000"):
        bundling.tested_of(model, suite, dataclasses.replace(run, runs=(stale,)))


def test_a_cached_run_keeps_its_grammar_hash(tmp_path):
    run = dataclasses.replace(load_run(RUN), grammar_sha256="ab" * 32)
    cache = RunCache(tmp_path)
    cache.put("cd" * 32, run)
    back = cache.get("cd" * 32)
    assert back is not None and back.grammar_sha256 == "ab" * 32
