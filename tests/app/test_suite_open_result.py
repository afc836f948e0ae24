"""A saved test result opened in the window (File > Open Test Result, `gui --open-result`):
its samples in the Suite pane's table, a sample's run read back from the run cache by the
key the result keeps, and a clear message, never a crash, when the cache no longer holds it
or the file is no result. The result is written from a real one-sample run first."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from gui_process import run_gui
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from app.main_window import MainWindow
from app.suite.results_view import FileRow
from engine.suite.cache import RunCache
from engine.suite.format import Thresholds
from tests.small_suite import currency_cut

RUN_TIMEOUT_MS = 180_000


def _run_and_save(qtbot, window: MainWindow, tmp_path: Path) -> Path:
    """One case of the currency suite, one sample of at most 16 tokens, its result saved."""
    suite = currency_cut(thresholds=Thresholds(min_validity=0.5))
    pane = window.suites.pane
    pane.editor.set_suite(suite, None)
    pane.cache = RunCache(tmp_path / "cache")
    with qtbot.waitSignal(window.controller.sig_suite_ended, timeout=RUN_TIMEOUT_MS):
        assert pane.run()
    result = pane.result_json()
    assert result is not None
    path = tmp_path / "result.json"
    path.write_text(json.dumps(result), encoding="utf-8")
    return path


def _open_first_sample(qtbot, window: MainWindow) -> None:
    table = window.suites.pane.results.table
    table.setFocus()
    table.setCurrentCell(0, 0)
    qtbot.keyClick(table, Qt.Key.Key_Return)


def test_a_saved_result_opens_and_its_sample_comes_back_from_the_cache(
    qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _run_and_save(qtbot, window, tmp_path)
    pane = window.suites.pane
    ran = pane.suite_run
    assert ran is not None and len(ran.samples) == 1
    key = ran.samples[0].run_key
    assert key and json.loads(path.read_text())["samples"][0]["run_key"] == key
    pane.results.clear()
    window.step_chart.clear()

    # File > Open Test Result…, with the file dialog answered.
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    window.suites.actions["open-result"].trigger()
    assert window.suites.actions["open-result"] in window.file_menu.actions()
    rows = pane.results.rows
    assert len(rows) == 1 and isinstance(rows[0], FileRow) and rows[0].run_key == key
    assert pane.results.table.item(0, 0).text() == "usd"
    assert "result.json" in pane.results.summary.text()
    assert ("Passed" in pane.results.summary.text()) == ran.samples[0].valid

    _open_first_sample(qtbot, window)
    cached = RunCache(tmp_path / "cache").get(key)
    assert cached is not None
    assert [r.token_id for r in window.step_chart.records] == [r.token_id for r in cached.records]
    assert window.output_view.raw.toPlainText() == cached.result.text
    assert "of the result file result.json" in window.status.currentMessage()
    assert not pane.results.notice.isVisibleTo(pane)

    # The cache cleared: opening the sample says how to get it back, and shows nothing else.
    shutil.rmtree(tmp_path / "cache")
    shown = window.session.records.copy()
    _open_first_sample(qtbot, window)
    notice = pane.results.notice
    assert notice.isVisibleTo(pane)
    assert "no longer in the run cache" in notice.text() and "maskscope test" in notice.text()
    assert window.step_chart.records == shown  # the chart shows the run it showed


def test_a_result_without_run_keys_or_no_result_at_all_says_why(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    pane = window.suites.pane
    old = {
        "format": "maskscope-test-result", "version": 1, "suite": "currency", "passed": True,
        "exit_code": 0, "metrics": {"n_samples": 1, "n_cases": 1}, "thresholds": [],
        "problems": [], "cases": [],
        "samples": [{
            "case": "usd", "index": 0, "seed": 0, "text": "{}", "valid": True,
            "truncated": False, "fields": [], "failures": [],
            "metrics": {"mean_valid_mass": 0.5, "min_valid_mass": 0.1, "n_overruled": 0,
                        "n_forced": 1, "latency_ms": 12.0},
        }],
    }  # fmt: skip
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    assert window.suites.open_result(str(path))
    assert pane.splitter.sizes()[0] == 0  # the editor folds away for the file's samples
    _open_first_sample(qtbot, window)
    assert "keeps no run keys" in pane.results.notice.text()
    window.suites.open_bundled("currency")  # opening a suite brings the editor back
    assert pane.splitter.sizes()[0] > 0

    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"format": "maskscope-run"}', encoding="utf-8")
    assert not window.suites.open_result(str(foreign))
    assert "not a `maskscope test --json` result" in window.last_report
    assert len(pane.results.rows) == 1  # what was shown stays

    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps({**old, "samples": [{"case": "usd"}]}), encoding="utf-8")
    assert not window.suites.open_result(str(damaged))
    assert "damaged" in window.last_report


@pytest.mark.slow
def test_gui_open_result_with_a_corrupt_file_exits_with_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "result.json"
    bad.write_text('{"format": "maskscope-test-result", "samples": [', encoding="utf-8")
    proc = run_gui(tmp_path, "--open-result", str(bad), "--quit-after-run")
    assert proc.returncode == 2
    assert "Cannot open the test result" in proc.stderr
