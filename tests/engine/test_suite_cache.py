"""The suite's run cache: a key per decided-everything, damaged entries dropped."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from engine.runs.saved import load_run
from engine.settings import GenerationSettings
from engine.suite.cache import RunCache, sample_key

RUN = Path(__file__).parent.parent / "data" / "runs" / "currency-v2.json"


def test_every_input_that_decides_the_tokens_is_in_the_key():
    base = ("a" * 64, '{"type": "string"}', "Say hi.", GenerationSettings(seed=1))
    key = sample_key(*base)
    assert key == sample_key(*base)
    changed = [
        ("b" * 64, *base[1:]),
        (base[0], '{"type": "integer"}', *base[2:]),
        (base[0], base[1], "Say hello.", base[3]),
        (*base[:3], dataclasses.replace(base[3], seed=2)),
        (*base[:3], dataclasses.replace(base[3], compiler="llamacpp")),
        (*base[:3], dataclasses.replace(base[3], temperature=0.0)),
    ]
    assert len({key, *(sample_key(*c) for c in changed)}) == 1 + len(changed)


def test_a_run_comes_back_and_a_damaged_entry_is_dropped(tmp_path):
    cache = RunCache(tmp_path)
    run = load_run(RUN)
    assert cache.get("00" * 32) is None
    cache.put("ab" * 32, run)
    back = cache.get("ab" * 32)
    assert back is not None and back.records == run.records and back.result == run.result
    entry = next(tmp_path.rglob("*.json"))
    entry.write_text("{not json", encoding="utf-8")
    assert cache.get("ab" * 32) is None and not entry.exists()


def test_an_unwritable_cache_costs_only_a_rerun(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    cache = RunCache(blocker)  # a folder that is a file: nothing can be written there
    cache.put("cd" * 32, load_run(RUN))
    assert cache.get("cd" * 32) is None
