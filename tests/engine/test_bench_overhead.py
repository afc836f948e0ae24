"""`maskscope bench`'s overhead table: the real model and the fast one (random weights over
Gemma's vocabulary), each at llama.cpp's default threads and with a core left free."""

from __future__ import annotations

import io
import math
import os
from typing import Any

import pytest
from bench_batch import fixed_batch

from engine.bench.batch import Made, row_of
from engine.bench.measure import _cell, _row, _target, print_batch_table, target_report
from engine.bench.overhead import overhead_table, print_overhead_table
from engine.bench.steps import BackendSamples, backend_summary
from engine.examples import load_example
from engine.model.llama import Model
from engine.settings import ModelSettings


def _column(threads: int, forward: float, step: float, floor: float = 0.01) -> dict[str, Any]:
    samples = BackendSamples(forward=[forward] * 3, mask=[0.1] * 3, other=[0.0] * 3)
    samples.step = [step] * 3
    return {
        "threads": threads,
        "steps_overlap": threads == 1,
        "forward_ms_p50": forward,
        "backends": {"llguidance": backend_summary(samples)},
        "floor": {"copy": floor, "copy_and_draw": 2 * floor},
    }


def _result() -> dict[str, Any]:
    overhead = {
        "real": {"default": _column(2, 10.0, 11.0), "free_core": _column(1, 16.0, 16.4)},
        "fast": {"default": _column(2, 2.0, 3.0), "free_core": _column(1, 1.5, 1.65, 0.045)},
    }
    result = {"overhead": overhead}
    result["targets"] = target_report(result)  # every other target: no value, no verdict
    return result


def test_the_table_puts_four_columns_side_by_side_with_verdicts() -> None:
    result = _result()
    out = io.StringIO()
    print_overhead_table(result["overhead"], lambda p: _cell(result, p), _row, _target, out)
    lines = out.getvalue().splitlines()
    assert lines[2].split()[:4] == ["real", "2t", "real", "1t"]
    assert "fast 1t free" in lines[2]
    row = next(line for line in lines if "llguidance overhead" in line)
    # (11 - 10) / 10, (16.4 - 16) / 16, (3 - 2) / 2, (1.65 - 1.5) / 1.5
    assert row.split()[2:9] == ["0.100", "0.025", "met", "0.500", "0.100", "missed", "≤"]
    copy = next(line for line in lines if "floor: copy" in line)
    assert copy.split()[2:] == ["0.010", "0.010", "0.010", "0.045"]  # no target of its own
    draw = next(line for line in lines if "floor: + draw reads" in line)
    assert draw.split()[-1] == "0.090"


def test_no_free_core_leaves_its_column_out_and_its_target_unjudged() -> None:
    result = _result()
    result["overhead"]["fast"]["free_core"] = None
    result["targets"] = target_report(result)
    verdict = result["targets"]["overhead.fast.free_core.backends.llguidance.overhead_ratio"]
    assert verdict == {"max": 0.05, "met": None}


def test_the_batch_table_shows_the_fast_decode_beside_the_real_one() -> None:
    result = fixed_batch()
    fast = {1: Made(512, 0, 4.0), 8: Made(512, 0, 1.0)}  # 4x at P = 8
    for row in result["batch"]:
        row["fast"] = row_of(fast[row["parallel"]], fast[1], False)
    result["batch_workloads"]["fast"] = "invoice"
    result["steps"] = 64
    out = io.StringIO()
    print_batch_table(result, out)
    lines = out.getvalue().splitlines()
    assert "fast tok/s" in lines[2]
    eight = next(line for line in lines if line.strip().startswith("P = 8"))
    assert eight.split()[9:11] == ["512", "4.000"]
    peer = next(line for line in lines if line.strip().startswith("peer"))
    assert peer.split()[-2:] == ["n/a", "n/a"]  # the peer runs the real model only


@pytest.mark.slow
def test_both_models_measured_side_by_side() -> None:
    model = Model.load(ModelSettings())
    example = load_example("currency")
    try:
        table = overhead_table(
            model, [(example.schema_text, example.prompt)], ["llguidance"], 4, lambda _: None
        )
    finally:
        model.close()
    free = (os.cpu_count() or 1) > 1
    for workload in ("real", "fast"):
        assert table[workload]["default"]["threads"] == model.info.n_threads
        assert (table[workload]["free_core"] is not None) == free
    columns = [c for w in table.values() for c in w.values() if c is not None]
    for column in columns:
        numbers = column["backends"]["llguidance"]
        assert numbers["n_steps"] == 3  # step 0 (the prompt's forward pass) left out
        assert math.isfinite(numbers["overhead_ratio"])
        assert all(math.isfinite(r) for r in column["floor"].values())
    if free:
        assert table["fast"]["free_core"]["steps_overlap"] is True
        assert table["fast"]["free_core"]["threads"] == (os.cpu_count() or 1) - 1
    # The fast model's forward pass is the output layer only: far under the real model's.
    assert table["fast"]["default"]["forward_ms_p50"] < table["real"]["default"]["forward_ms_p50"]
