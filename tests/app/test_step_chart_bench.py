"""The bench's chart row says at which Top-K it timed the chart, its target, and whether
the median met it; the probe times the chart on either scale."""

from __future__ import annotations

import io
from typing import Any

import pytest
from bench_batch import fixed_batch
from PySide6.QtWidgets import QApplication
from step_chart_records import make_record, many_candidates

from engine.bench.measure import BENCH_BACKENDS as BACKENDS  # those that run its grammar
from engine.bench.measure import (
    BackendSamples,
    Samples,
    print_table,
    sample_summary,
    target_report,
)
from tools.bench_probes.probes import chart_update_ms


def _report(chart_ms: float) -> dict[str, Any]:
    backend = BackendSamples([10.0], [1.0], [1.0], [12.0], [5.0])
    result: dict[str, Any] = {
        **sample_summary(Samples(backends={name: backend for name in BACKENDS})),
        **fixed_batch(),
        "chart_update_ms_p50": chart_ms,
        "gui_max_lag_ms": 20.0,
        "peak_rss_mb": 540.0,
        "rss_mb_at_100": 539.0,
        "rss_mb_at_500": 540.0,
        "rss_checkpoints": [100, 500],
        "tokenizer_build_ms": 2000.0,
        "machine": {
            "model": "m.gguf",
            "offload": "CPU only",
            "cpu_count": 2,
            "llama_threads": 2,
            "steps_overlap": False,
        },
        "steps": 64,
        "n_schemas": 20,
        "n_workloads": 22,
    }
    result["targets"] = target_report(result)
    result["notes"] = []
    return result


@pytest.mark.parametrize(("ms", "verdict"), [(9.2, "9.200 missed"), (7.9, "7.900 met")])
def test_the_chart_row_prints_top_k_target_and_verdict(ms: float, verdict: str) -> None:
    out = io.StringIO()
    print_table(_report(ms), out)
    row = next(line for line in out.getvalue().splitlines() if "chart update" in line)
    assert "Top-K 10" in row and verdict in row and row.rstrip().endswith("≤ 8")


@pytest.mark.parametrize("bar_log", [False, True])
def test_the_probe_times_every_update(qtbot, bar_log: bool) -> None:
    records = [make_record(i, cands=many_candidates(20, first_id=i)) for i in range(6)]
    ms = chart_update_ms(QApplication.instance(), records, bar_log=bar_log)
    assert 0 < ms < 1000
