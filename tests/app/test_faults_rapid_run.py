"""Run pressed many times in a row, and Stop and Run alternating: one run at a time.

Run is refused (and greyed) from the moment a run starts until the worker says it ended,
a Stop included: the stopped run ends at its next step, and only then can Run start
another. So a Run pressed during a Stop does not queue; the one pressed after it runs.
Every run's steps belong to it alone.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from app.main_window import MainWindow
from engine.records import FinishReason

RUN_TIMEOUT_MS = 120_000


class _Watch:
    """Counts runs as the worker sees them, and the most ever queued or running at once."""

    def __init__(self, window: MainWindow) -> None:
        self.window, self.ended, self.most = window, 0, 0
        window.controller.sig_run_ended.connect(self._ended)
        window.controller.sig_step.connect(lambda _r: self.look())
        self.results: list[tuple[int, int, FinishReason]] = []

    def look(self) -> None:
        self.most = max(self.most, list(self.window.controller._jobs).count("run"))

    def _ended(self) -> None:
        self.ended += 1
        result = self.window.last_result
        if result is not None:
            kept = len(self.window.session.records)
            self.results.append((kept, result.n_tokens, result.finish_reason))


def test_run_pressed_ten_times_starts_one_run(qtbot, window: MainWindow, use_example) -> None:
    use_example(window, "currency", max_tokens=6)
    watch = _Watch(window)
    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        started = [window.run() for _ in range(10)]
        for _ in range(10):
            window.run_action.trigger()  # greyed: the shortcut and the button do nothing
            watch.look()
    assert started == [True] + [False] * 9
    qtbot.wait(200)  # a second run, had one been queued, would have ended by now
    assert watch.ended == 1 and watch.most == 1
    assert watch.results == [(6, 6, FinishReason.MAX_TOKENS)]


def test_stop_and_run_alternating(qtbot, window: MainWindow, use_example) -> None:
    use_example(window, "person", max_tokens=60)
    watch = _Watch(window)
    accepted = 0
    for _ in range(6):
        with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
            accepted += window.run()
            QCoreApplication.processEvents()  # a step or two may come in
            window.stop_action.trigger()
            assert not window.run()  # the stopped run has not ended yet
            watch.look()
        assert window.run_action.isEnabled() and not window.stop_action.isEnabled()
    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        accepted += window.run()  # the last Run, after the last Stop, runs to its end
    assert accepted == 7 and watch.ended == 7 and watch.most == 1
    assert all(kept == n for kept, n, _ in watch.results), watch.results
    reasons = [reason for _, _, reason in watch.results]
    assert reasons[:6] == [FinishReason.CANCELLED] * 6
    assert reasons[6] is not FinishReason.CANCELLED and watch.results[6][1] > 6
