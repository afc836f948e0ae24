"""Suite > Compare Test Results: two saved results in the comparison window, regressions
first and tinted in the theme's colour for a loss, the outputs of a case before and after,
Copy for the text form; a file that is no result says why. No model is needed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication, QTextDocumentFragment
from PySide6.QtWidgets import QFileDialog

from app.main_window import MainWindow
from app.settings.store import SettingsStore
from app.theme import chart_colors
from engine.suite.compare import compare_results, comparison_text
from tests.app.shell_window import open_window


@pytest.fixture
def window(qtbot, store: SettingsStore, monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    return open_window(qtbot, store, monkeypatch)


def _result(valid: dict[str, bool], texts: dict[str, str]) -> dict[str, Any]:
    """A result of one sample per case: `valid` says which pass, `texts` their outputs."""
    n_valid = sum(valid.values())
    return {
        "format": "maskscope-test-result", "version": 1, "suite": "currency",
        "passed": all(valid.values()), "exit_code": 0 if all(valid.values()) else 1,
        "metrics": {"n_samples": len(valid), "validity_rate": n_valid / len(valid)},
        "thresholds": [], "problems": [],
        "cases": [
            {"id": case, "n_samples": 1, "n_valid": int(ok), "validity_rate": float(ok),
             "fields_ok": int(ok), "fields_checked": 1, "passed": ok}
            for case, ok in valid.items()
        ],
        "samples": [
            {"case": case, "index": 0, "seed": 0, "text": texts[case],
             "metrics": {"mean_valid_mass": 0.9 if ok else 0.4}}
            for case, ok in valid.items()
        ],
    }  # fmt: skip


def _files(tmp_path: Path) -> tuple[Path, Path]:
    before = _result(
        {"none": True, "eur": False, "usd": True},
        {"none": '{"c": "UNKNOWN"}', "eur": '{"c": "USD"}', "usd": '{"c": "USD"}'},
    )
    after = _result(
        {"none": True, "eur": True, "usd": False},
        {"none": '{"c": "UNKNOWN"}', "eur": '{"c": "EUR"}', "usd": '{"c": "$"}'},
    )
    a, b = tmp_path / "v1.json", tmp_path / "v2.json"
    a.write_text(json.dumps(before), encoding="utf-8")
    b.write_text(json.dumps(after), encoding="utf-8")
    return a, b


def test_two_results_compare_with_the_regression_first_tinted_and_copyable(
    qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _files(tmp_path)
    menus = [action.text() for action in window.menuBar().actions()]
    assert menus.index("&Suite") == menus.index("&Help") - 1
    assert not window.suites.actions["compare-last"].isEnabled()  # no run yet

    answers = iter([(str(a), ""), (str(b), "")])
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *args, **kw: next(answers))
    window.suites.actions["compare"].trigger()
    view = window.suites.compare_view
    assert view is not None and view.isVisible()
    cases = view.cases
    rows = [(cases.item(r, 0).text(), cases.item(r, 1).text()) for r in range(cases.rowCount())]
    assert rows == [("regressed", "usd"), ("improved", "eur"), ("same", "none")]
    bad = chart_colors().bad
    assert cases.item(0, 0).foreground().color().name() == bad.name()
    tint = cases.item(0, 3).background().color()
    assert tint.rgb() == bad.rgb() and 0 < tint.alpha() < 255
    assert cases.item(2, 0).background().style().name == "NoBrush"  # unchanged: no tint
    assert cases.item(0, 2).text() == "1 → 0"
    assert (
        "1 case(s) regressed" in view.verdict.text() and "v1.json → v2.json" in view.verdict.text()
    )
    # The regressed case's outputs, before and after, under the table.
    assert (
        '{"c": "USD"}' in view.outputs.toPlainText() and '{"c": "$"}' in view.outputs.toPlainText()
    )
    cases.setCurrentCell(1, 0)
    assert '{"c": "EUR"}' in view.outputs.toPlainText()

    view.copy_button.click()
    expected = comparison_text(
        compare_results(json.loads(a.read_text()), json.loads(b.read_text()), (a.name, b.name))
    )
    assert QGuiApplication.clipboard().text() == expected
    assert "REGRESSED" in expected
    assert "regressions" in window.status.currentMessage()


def test_a_file_that_is_no_result_is_refused_with_its_reason(
    window: MainWindow, tmp_path: Path
) -> None:
    a, _ = _files(tmp_path)
    run = tmp_path / "run.json"
    run.write_text('{"format": "maskscope-run"}', encoding="utf-8")
    assert not window.suites.compare_files(str(a), str(run))
    assert "run.json is not a `maskscope test --json` result" in window.last_report
    damaged = tmp_path / "damaged.json"
    damaged.write_text(
        json.dumps({"format": "maskscope-test-result", "metrics": {}, "cases": [{"id": 1}]}),
        encoding="utf-8",
    )
    assert not window.suites.compare_files(str(a), str(damaged))
    assert "damaged" in window.last_report
    assert window.suites.compare_view is None


def test_changed_metrics_read_in_words_and_a_missing_one_as_n_a(
    window: MainWindow, tmp_path: Path
) -> None:
    before = _result({"a": True, "b": True}, {"a": "{}", "b": "{}"})
    after = _result({"a": True, "b": False}, {"a": "{}", "b": "[]"})
    before["metrics"]["mean_valid_mass"] = 0.9
    after["metrics"]["mean_valid_mass"] = None  # a server run has no per-step masks
    a, b = tmp_path / "v1.json", tmp_path / "v2.json"
    a.write_text(json.dumps(before), encoding="utf-8")
    b.write_text(json.dumps(after), encoding="utf-8")
    assert window.suites.compare_files(str(a), str(b))
    table = window.suites.compare_view.metrics
    rows = {table.item(r, 0).text(): (table.item(r, 1).text(), table.item(r, 2).text())
            for r in range(table.rowCount())}  # fmt: skip
    assert rows == {"validity rate": ("1", "0.5"), "valid mass, mean": ("0.9", "n/a")}
    # Rich text, so that a hostile metric name in a result file shows as written.
    tip = QTextDocumentFragment.fromHtml(table.item(0, 0).toolTip()).toPlainText()
    assert tip == "validity_rate in --json"
