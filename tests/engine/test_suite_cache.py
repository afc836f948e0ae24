"""The suite's run cache: a key per decided-everything, damaged entries dropped."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from engine.errors import SuiteError
from engine.runs.saved import load_run
from engine.settings import GenerationSettings
from engine.suite.cache import BadRunKey, RunCache, made_by, sample_key
from engine.suite.compare import load_result
from engine.suite.summary import FORMAT

RUN = Path(__file__).parent.parent / "data" / "runs" / "currency-v2.json"


MADE_BY = {"maskscope": "1.0", "llama_cpp_python": "0.3.16", "llguidance": "1.0",
           "llama_cpp_build": "b1"}  # fmt: skip


def test_every_input_that_decides_the_tokens_is_in_the_key():
    settings = GenerationSettings(seed=1)
    base = ("a" * 64, '{"type": "string"}', "Say hi.", settings, "c" * 64, MADE_BY)
    key = sample_key(*base)
    assert key == sample_key(*base)
    changed = [
        ("b" * 64, *base[1:]),
        (base[0], '{"type": "integer"}', *base[2:]),
        (*base[:2], "Say hello.", *base[3:]),
        (*base[:3], dataclasses.replace(settings, seed=2), *base[4:]),
        (*base[:3], dataclasses.replace(settings, compiler="llamacpp"), *base[4:]),
        (*base[:3], dataclasses.replace(settings, backend="llamacpp"), *base[4:]),
        (*base[:3], dataclasses.replace(settings, temperature=0.0), *base[4:]),
        (*base[:4], "d" * 64, MADE_BY),  # the compiled grammar
        *((*base[:5], {**MADE_BY, name: "other"}) for name in MADE_BY),  # each version
    ]
    assert len({key, *(sample_key(*c) for c in changed)}) == 1 + len(changed)


def test_made_by_names_every_version_and_the_build():
    assert set(made_by()) == set(MADE_BY)


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


# Hostile run keys (issue 22): a result file's run_key went unchecked into the cache, which
# joined it to its folder and deleted what it found there as a "damaged" entry.


def _victim(folder: Path) -> Path:
    victim = folder / "schema.json"
    victim.write_text('{"type": "string"}\n', encoding="utf-8")
    return victim


@pytest.mark.parametrize("shape", ["absolute", "dotdot", "upper", "short"])
def test_a_key_that_is_not_one_is_refused_and_the_file_it_names_survives(tmp_path, shape):
    victim = _victim(tmp_path)
    cache = RunCache(tmp_path / "cache")
    (tmp_path / "cache").mkdir()
    key = {
        "absolute": str(victim.with_suffix("")),  # folder / key[:2] / "KEY.json" is the victim
        "dotdot": "../schema",
        "upper": "AB" * 32,
        "short": "ab" * 31,
    }[shape]
    with pytest.raises(BadRunKey, match="64 lowercase hex"):
        cache.get(key)
    with pytest.raises(BadRunKey):
        cache.put(key, load_run(RUN))
    assert victim.read_text(encoding="utf-8") == '{"type": "string"}\n'


def test_a_symlinked_entry_pointing_outside_is_neither_read_nor_deleted(tmp_path):
    outside = tmp_path / "my-run.json"  # the user's own saved run, outside the cache
    outside.write_bytes(RUN.read_bytes())
    key = "ab" * 32
    (tmp_path / "cache" / "ab").mkdir(parents=True)
    (tmp_path / "cache" / "ab" / f"{key}.json").symlink_to(outside)
    assert RunCache(tmp_path / "cache").get(key) is None
    assert outside.read_bytes() == RUN.read_bytes()


def test_a_symlinked_subfolder_pointing_outside_is_not_emptied(tmp_path):
    key = "cd" * 32
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / f"{key}.json"
    victim.write_text("not a run, the user's file\n", encoding="utf-8")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "cd").symlink_to(outside, target_is_directory=True)
    assert RunCache(tmp_path / "cache").get(key) is None
    assert victim.read_text(encoding="utf-8") == "not a run, the user's file\n"


def test_a_result_file_with_a_hostile_run_key_is_refused_naming_file_and_field(tmp_path):
    sample = {"case": "c", "index": 0, "text": "", "metrics": {"mean_valid_mass": None}}
    samples = [sample | {"run_key": "ab" * 32}, sample | {"index": 1, "run_key": "/etc/x"}]
    result = {"format": FORMAT, "samples": samples}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(result), encoding="utf-8")
    with pytest.raises(SuiteError) as found:
        load_result(path)
    assert str(path) in found.value.message
    assert "$.samples[1].run_key" in found.value.message and "/etc/x" in found.value.message
    result["samples"][1]["run_key"] = None  # a file from before results kept keys still loads
    path.write_text(json.dumps(result), encoding="utf-8")
    assert load_result(path)["samples"][0]["run_key"] == "ab" * 32
