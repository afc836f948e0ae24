"""The Suite pane's "Parallel sequences": remembered between sessions, handed to the suite
run, and two samples decoded in one batch give what one at a time gives (up to 3 rows a
step the logits are a single run's, bit for bit: docs/speed.md). One case, two samples, at
most 20 tokens each, on the real model."""

from __future__ import annotations

from typing import Any

import pytest

from app.decoding import worker
from app.main_window import MainWindow
from app.settings.store import SettingsStore
from app.suite.suite_pane import MAX_PARALLEL
from engine.suite.run import SuiteRun, run_suite
from tests.app.shell_window import open_window
from tests.small_suite import currency_cut

RUN_TIMEOUT_MS = 180_000


def test_the_setting_is_remembered_and_bounded(qtbot, store: SettingsStore, monkeypatch) -> None:
    first = open_window(qtbot, store, monkeypatch)
    box = first.suites.pane.parallel
    assert (box.value(), box.minimum(), box.maximum()) == (1, 1, MAX_PARALLEL)
    assert "--parallel" in box.toolTip() and "8 is the fastest" in box.toolTip()
    box.setValue(3)
    first.close()
    assert open_window(qtbot, store, monkeypatch).suites.pane.parallel.value() == 3
    store._s.setValue("suite/parallel", "99")  # a hand-edited file
    assert store.suite_parallel() == MAX_PARALLEL


def _run(qtbot, window: MainWindow, parallel: int) -> SuiteRun:
    pane = window.suites.pane
    pane.parallel.setValue(parallel)
    with qtbot.waitSignal(window.controller.sig_suite_ended, timeout=RUN_TIMEOUT_MS):
        assert pane.run()
    assert pane.suite_run is not None and not pane.suite_run.cancelled
    return pane.suite_run


def test_two_at_once_gives_the_validity_of_one_at_a_time(
    qtbot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []

    def spy(*args: Any, **kwargs: Any) -> SuiteRun:  # the real run, its `parallel` noted
        asked.append(kwargs["parallel"])
        return run_suite(*args, **kwargs)

    monkeypatch.setattr(worker, "run_suite", spy)
    suite = currency_cut(samples=2, max_tokens=20, no_latency_bound=True)
    pane = window.suites.pane
    pane.editor.set_suite(suite, None)
    pane.use_cache.setChecked(False)  # the second run must decode, not read the first back
    alone, batched = _run(qtbot, window, 1), _run(qtbot, window, 2)
    assert asked == [1, 2]
    assert [s.valid for s in batched.samples] == [s.valid for s in alone.samples]
    assert [s.result.text for s in batched.samples] == [s.result.text for s in alone.samples]
    assert window.store.suite_parallel() == 2
