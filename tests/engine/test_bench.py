"""`maskscope bench --quick --json` end to end: the shape of its report, never its timings."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from typing import Any

import pytest

from engine.bench import add_bench_arguments, cmd_bench
from engine.settings import BACKENDS

TOP_NUMBERS = (
    "forward_ms_p50",
    "unconstrained_tokens_per_s",
    "peer_tokens_per_s",
    "peak_rss_mb",
    "rss_mb_at_100",
    "rss_mb_at_500",
    "tokenizer_build_ms",
)
# Measured in child processes through the app's Qt code: null with a note when that fails.
QT_NUMBERS = ("chart_update_ms_p50", "gui_max_lag_ms")
BACKEND_NUMBERS = (
    "mask_ms_p50",
    "mask_ms_p99",
    "other_ms_p50",
    "forward_ms_p50",
    "step_ms_p50",
    "overhead_ratio",
    "tokens_per_s",
    "compile_ms_p50",
    "n_steps",
)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    parser = argparse.ArgumentParser()
    add_bench_arguments(parser)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # capsys cannot serve a module-scoped fixture
        assert cmd_bench(parser.parse_args(["--quick", "--json"])) == 0
    return json.loads(out.getvalue())


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def test_top_level_numbers_are_positive(report: dict[str, Any]) -> None:
    for key in TOP_NUMBERS:
        assert _positive(report[key]), (key, report[key])


def test_each_backend_reports_every_number(report: dict[str, Any]) -> None:
    assert set(report["backends"]) == set(BACKENDS)
    for name, numbers in report["backends"].items():
        for key in BACKEND_NUMBERS:
            assert _positive(numbers[key]), (name, key, numbers[key])


def test_qt_numbers_are_positive_or_explained(report: dict[str, Any]) -> None:
    for key in QT_NUMBERS:
        value = report[key]
        assert _positive(value) or any(n.startswith(f"{key}:") for n in report["notes"]), key


def test_quick_workload_and_machine(report: dict[str, Any]) -> None:
    assert (report["steps"], report["n_schemas"], report["n_workloads"]) == (8, 2, 4)
    assert report["rss_checkpoints"] == [12, 60]
    assert report["machine"]["cpu_count"] >= 1
    assert isinstance(report["machine"]["gpu_offload_supported"], bool)
    assert isinstance(report["machine"]["steps_overlap"], bool)
    assert report["machine"]["gomp_spincount"]  # set by the engine unless the user did
    assert all(isinstance(t["met"], bool | None) for t in report["targets"].values())
