"""The benchmark's Qt measurements, run as `python -m tools.bench_probes PROBE INPUT.json`.

`maskscope bench` (engine/bench/measure.py) starts this as a separate program from the
checkout, so the engine never imports Qt and a crash in Qt costs only these numbers. It
prints one JSON line: {"value": milliseconds}.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QApplication

from app.chart.step_chart import StepChart
from app.decoding.worker import RunController, RunRequest
from app.main import gui_thread_garbage_collector
from engine import heap
from engine.masking.llguidance import tokenizer_for
from engine.model.llama import Model
from engine.records import StepRecord
from engine.runs.saved import step_from_json
from engine.settings import GenerationSettings, ModelSettings

CHART_SIZE = (660, 820)  # about the chart pane of the default window
LAG_PROBE_MS = 10
SETTLE_MS = 300


class FixedModelCache:
    """Stands in for app.decoding.worker.ModelCache: the app's worker decodes with a loaded
    model."""

    def __init__(self, model: Model) -> None:
        self._model = model

    def get(self, settings: ModelSettings, should_stop: Callable[[], bool] | None = None) -> Model:
        return self._model

    def loaded(self, settings: ModelSettings) -> Model | None:
        return self._model

    def close(self) -> None:
        """The caller owns the model."""


class LagProbe:
    """A fast timer on the GUI thread: how late its ticks come is how long the GUI stalled."""

    def __init__(self, interval_ms: int) -> None:
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.interval_ms = interval_ms
        self.max_lag_ms = 0.0
        self._last = 0.0

    def start(self) -> None:
        self._last = time.perf_counter()
        self.timer.start()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.max_lag_ms = max(self.max_lag_ms, (now - self._last) * 1000.0 - self.interval_ms)
        self._last = now


def _shown_chart(app: QApplication) -> StepChart:
    chart = StepChart()
    chart.resize(*CHART_SIZE)
    chart.show()
    # A new process's first event-loop turns stall ~45 ms (first paint, fonts), run or no
    # run; the window is up long before any run, so that is not charged to the run.
    settle = QEventLoop()
    QTimer.singleShot(SETTLE_MS, settle.quit)
    settle.exec()
    return chart


def chart_update_ms(app: QApplication, records: list[StepRecord], bar_log: bool = False) -> float:
    """Median time to show one more StepRecord in the app's chart, paint included."""
    chart = _shown_chart(app)
    chart.set_bar_log_scale(bar_log)
    times = []
    for record in records:
        t0 = time.perf_counter()
        chart.push(record)  # only stores it and arms the ~30 fps redraw timer
        chart.redraw()  # what that timer would run
        app.processEvents()  # the paint itself
        times.append((time.perf_counter() - t0) * 1000.0)
    return float(np.median(times))


def gui_max_lag_ms(app: QApplication, settings: ModelSettings, request: dict[str, Any]) -> float:
    """Worst GUI-thread stall while the app's worker decodes and the chart draws each step."""
    model = Model.load(settings)
    tokenizer_for(model)  # built once per model, before any run, as the window's preload does
    collector = gui_thread_garbage_collector()  # the window's: collections on the GUI thread
    heap.settle_after_load(model)  # as the window does once that preload has ended
    chart = _shown_chart(app)
    controller = RunController(cache=FixedModelCache(model))
    errors: list[str] = []
    loop = QEventLoop()
    controller.sig_step.connect(chart.push)
    controller.sig_finished.connect(lambda _result: chart.redraw())
    controller.sig_error.connect(lambda kind, message: errors.append(f"{kind}: {message}"))
    controller.sig_run_ended.connect(loop.quit)
    probe = LagProbe(LAG_PROBE_MS)
    generation = GenerationSettings(**request["generation"])
    probe.start()
    controller.start(RunRequest(request["schema_text"], request["prompt"], settings, generation))
    loop.exec()
    probe.timer.stop()
    collector.timer.stop()  # type: ignore[attr-defined]
    gc.enable()
    controller.shutdown()
    if errors:
        raise RuntimeError(f"the run failed: {errors[0]}")
    return probe.max_lag_ms


def main(argv: list[str]) -> int:
    probe, path = argv
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    app = QApplication.instance() or QApplication([])
    if probe == "chart":
        value = chart_update_ms(app, [step_from_json(s) for s in data["records"]])
    elif probe == "lag":
        value = gui_max_lag_ms(app, ModelSettings(**data["model"]), data)
    else:
        print(f"unknown probe {probe!r}", file=sys.stderr)
        return 2
    print(json.dumps({"value": value}))
    return 0
