"""A suite run from the Suite pane on the real model: progress after each sample, Cancel
that keeps the finished samples, the results table, and a sample opened in the main views.
The suite is tiny (two cases, one sample each, at most 20 tokens) to keep this fast."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from app.main_window import MainWindow
from engine.records import FinishReason
from engine.suite.cache import RunCache
from engine.suite.run import Progress
from tests.small_suite import currency_cut

RUN_TIMEOUT_MS = 180_000


def _tiny(window: MainWindow, tmp_path: Path, samples: int = 1) -> None:
    """The currency suite cut to two cases, in the Suite pane, with its own cache."""
    suite = currency_cut(cases=2, samples=samples, max_tokens=20, no_latency_bound=True)
    pane = window.suites.pane
    pane.editor.set_suite(suite, None)
    pane.cache = RunCache(tmp_path / "cache")


def test_a_suite_run_shows_progress_results_and_opens_a_sample(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    _tiny(window, tmp_path)
    pane = window.suites.pane
    seen: list[Progress] = []
    window.controller.sig_suite_progress.connect(seen.append)
    window.auto_rerun_action.setChecked(True)
    with qtbot.waitSignal(window.controller.sig_suite_ended, timeout=RUN_TIMEOUT_MS):
        assert pane.run()
        assert not window.run_action.isEnabled() and pane.cancel_button.isEnabled()
        assert not window.run()  # the model serves the suite: the window's Run waits
        assert not window.auto_rerun.enabled  # a schema edit must not stop the suite
    assert window.auto_rerun.enabled
    assert window.status.currentMessage().startswith("Suite currency: Done in")
    assert [(p.done, p.total) for p in seen] == [(1, 2), (2, 2)]
    assert pane.progress.value() == 2 and pane.progress.maximum() == 2
    assert window.run_action.isEnabled() and not pane.cancel_button.isEnabled()
    done = pane.suite_run
    assert done is not None and not done.cancelled and done.cached == 0
    table = pane.results.table
    assert table.rowCount() == 2
    assert {table.item(r, 0).text() for r in range(2)} == {"usd", "eur"}
    summary = pane.results.summary.text()
    assert ("Passed" in summary) == all(s.passed for s in done.samples)
    assert "validity" in summary and "p95" in summary

    # Enter on a row opens that sample's run in the chart and the output.
    table.setFocus()
    table.setCurrentCell(1, 0)
    qtbot.keyClick(table, Qt.Key.Key_Return)
    shown = pane.results.rows[1].run
    assert [r.token_id for r in window.step_chart.records] == [r.token_id for r in shown.records]
    assert window.last_result == shown.result
    assert window.output_view.raw.toPlainText() == shown.result.text
    sample = pane.results.rows[1].sample
    assert f"case {sample.case_id}, sample 1 (seed {sample.seed})" in window.status.currentMessage()

    # Run again: both samples come from the cache, and double-click opens one too.
    with qtbot.waitSignal(window.controller.sig_suite_ended, timeout=RUN_TIMEOUT_MS):
        assert pane.run()
    assert pane.suite_run is not None and pane.suite_run.cached == 2
    window.panes.show_pane("suite")  # tabbed behind the prompt: a click needs it in front
    qtbot.waitUntil(table.isVisible)
    rect = table.visualItemRect(table.item(0, 0))
    assert rect.isValid(), rect
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    first = pane.results.rows[0].run
    assert [r.token_id for r in window.step_chart.records] == [r.token_id for r in first.records]


def test_cancel_mid_run_keeps_the_finished_samples(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    _tiny(window, tmp_path, samples=3)
    pane = window.suites.pane
    pane.use_cache.setChecked(False)
    # Cancel as soon as the first sample has finished: the second stops between two steps.
    window.controller.sig_suite_progress.connect(lambda p: p.done == 1 and pane.cancel())
    with qtbot.waitSignal(window.controller.sig_suite_ended, timeout=RUN_TIMEOUT_MS):
        assert pane.run()
    done = pane.suite_run
    assert done is not None and done.cancelled
    assert 1 <= len(done.samples) < 6
    first = done.samples[0]
    assert first.result.finish_reason is not FinishReason.CANCELLED and first.n_tokens > 0
    assert pane.results.table.rowCount() == len(done.samples)
    assert "No verdict" in pane.results.summary.text()
    assert "cancelled" in pane.results.summary.text()
    assert pane.eta.text().startswith("Cancelled")
    assert pane.run_button.isEnabled() and window.run_action.isEnabled()


def test_the_suite_menu_runs_and_cancels_the_suite_by_its_keys_too(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    # The pane's Run button sits under the suite editor, out of view in a short dock, and
    # the pane may be closed or behind a tab: the menu and its keys reach it from anywhere.
    _tiny(window, tmp_path, samples=3)
    suites, pane = window.suites, window.suites.pane
    pane.use_cache.setChecked(False)
    window.panes.dock("suite").hide()  # closed, or behind another pane's tab
    assert not pane.isVisible()
    window.controller.sig_suite_progress.connect(
        lambda p: p.done == 1 and suites.actions["cancel"].trigger()
    )
    window.activateWindow()
    with qtbot.waitSignal(window.controller.sig_suite_ended, timeout=RUN_TIMEOUT_MS):
        qtbot.keyClick(window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier
                       | Qt.KeyboardModifier.ShiftModifier)  # fmt: skip
        assert pane.running and pane.isVisible()
        area = suites.area
        bar = pane.progress.mapTo(pane, pane.progress.rect().bottomLeft()).y()
        assert area.verticalScrollBar().value() <= bar - pane.progress.height()
        assert bar - area.verticalScrollBar().value() <= area.viewport().height()  # in view
        suites.suite_menu.aboutToShow.emit()
        assert suites.actions["cancel"].isEnabled()
    done = pane.suite_run
    assert done is not None and done.cancelled and len(done.samples) < 6
    summary = pane.results.summary
    qtbot.wait(200)  # the verdict laid out at its length, and scrolled to
    assert summary.visibleRegion().boundingRect() == summary.rect()  # all of it in view
    assert pane.progress.visibleRegion().boundingRect() == pane.progress.rect()
    suites.suite_menu.aboutToShow.emit()
    assert not suites.actions["cancel"].isEnabled()


def test_run_suite_from_the_menu_shows_why_a_suite_cannot_run(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    # The reason is written just above the run bar, which the menu scrolls to: it is in view.
    window.suites.pane.editor.set_suite(currency_cut(cases=0), None)
    window.panes.dock("suite").hide()
    assert not window.suites.run_suite()
    message = window.suites.pane.editor.message
    assert "no cases to run" in message.text()
    assert message.visibleRegion().boundingRect() == message.rect()  # all of it in view
