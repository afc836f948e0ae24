"""The Suite pane's results table in a narrow pane: it leaves out its least needed columns
rather than scroll sideways, keeps "why it fails" readable, and each row's tooltip still
shows every number of its sample. Wide, it shows every column."""

from __future__ import annotations

from PySide6.QtGui import QTextDocumentFragment

from app.suite.results_view import COLUMNS, ResultsView

WHY = "$.items[0].quantity is 1, expected 2; $.total is 105.0, not within 0.01 of 59.97"


def _result() -> dict:
    def sample(case: str, index: int, failures: list[str]) -> dict:
        return {"case": case, "index": index, "seed": index, "text": '{"total": 105.0}',
                "valid": True, "truncated": False, "fields": [{"ok": True}, {"ok": False}],
                "failures": failures,
                "metrics": {"mean_valid_mass": 0.952, "min_valid_mass": 0.25,
                            "n_overruled": 7, "n_forced": 21, "latency_ms": 2963.0}}  # fmt: skip

    return {
        "format": "maskscope-test-result", "version": 1, "suite": "invoice", "passed": False,
        "metrics": {"n_samples": 3}, "thresholds": [], "problems": [], "cases": [],
        "samples": [sample("gbp-desks", 0, [WHY]), sample("gbp-desks", 1, []),
                    sample("usd-cables-and-more", 0, [WHY])],
    }  # fmt: skip


def _view(qtbot, width: int) -> ResultsView:
    view = ResultsView()
    qtbot.addWidget(view)
    view.resize(width, 400)
    view.show()
    qtbot.waitExposed(view)
    view.show_result(_result(), "invoice.json")
    return view


def _shown(view: ResultsView) -> list[str]:
    return [name for c, name in enumerate(COLUMNS) if not view.table.isColumnHidden(c)]


def test_a_narrow_table_leaves_out_columns_instead_of_scrolling_sideways(qtbot) -> None:
    view = _view(qtbot, 380)
    table = view.table
    assert table.horizontalScrollBar().maximum() == 0  # nothing to scroll to
    shown = _shown(view)
    assert shown[0] == "case" and shown[-1] == "why it fails"
    assert {"valid", "fields ok"} <= set(shown)
    assert "latency ms" in view.left_out and "latency ms" not in shown
    why = table.columnWidth(COLUMNS.index("why it fails"))
    assert why >= view.fontMetrics().horizontalAdvance("x" * 20)
    assert "latency ms" in table.toolTip()  # says what it left out


def test_a_rows_tooltip_keeps_what_its_columns_leave_out(qtbot) -> None:
    view = _view(qtbot, 380)
    tip = QTextDocumentFragment.fromHtml(view.table.item(0, 0).toolTip()).toPlainText()
    assert "case gbp-desks, sample 1 (seed 0)" in tip
    assert "overruled 7 · forced 21 · latency 2963 ms" in tip
    assert WHY in tip and tip.endswith('{"total": 105.0}')  # why it fails, then the output


def test_a_wide_table_shows_every_column_and_growing_brings_them_back(qtbot) -> None:
    view = _view(qtbot, 380)
    assert view.left_out
    view.resize(1400, 400)
    qtbot.waitUntil(lambda: not view.left_out)
    assert _shown(view) == list(COLUMNS)
    assert "left out" not in view.table.toolTip()


def test_an_idle_table_stops_fitting(qtbot, monkeypatch) -> None:
    # A fit can toggle the sideways scroll bar, which resizes the viewport: refitting on
    # that looped (thousands of fits a second), and slowed the whole window.
    fits = []
    fit = ResultsView._fit
    monkeypatch.setattr(ResultsView, "_fit", lambda self: fits.append(1) or fit(self))
    for rows in (False, True):
        view = ResultsView()
        qtbot.addWidget(view)
        view.resize(380, 300)
        view.show()
        qtbot.waitExposed(view)
        if rows:
            view.show_result(_result(), "invoice.json")
        fits.clear()
        qtbot.wait(300)
        assert len(fits) <= 2


def test_samples_arriving_together_are_fitted_once(qtbot, monkeypatch) -> None:
    # Each fit measures every row (6.5 ms at 300 rows): a fit per arriving sample made a
    # long suite's table slower with each sample.
    from test_suite_results_na import SCHEMA, _server_sample

    from engine.runs.saved import SavedRun

    view = ResultsView()
    qtbot.addWidget(view)
    view.resize(380, 300)
    view.show()
    qtbot.waitExposed(view)
    fits = []
    fit = ResultsView._fit
    monkeypatch.setattr(ResultsView, "_fit", lambda self: fits.append(1) or fit(self))
    sample = _server_sample()
    for _ in range(5):  # too few to bring a scroll bar, whose resize would fit too
        view.add(sample, SavedRun(SCHEMA, "p", "m.gguf", (), sample.result))
    assert not fits  # none yet: the rows wait for one fit
    qtbot.waitUntil(lambda: bool(view.left_out))  # then the narrow table is fitted
    qtbot.wait(300)
    assert len(fits) == 1
    assert view.table.horizontalScrollBar().maximum() == 0


def test_a_short_pane_keeps_every_line_of_the_verdict(qtbot) -> None:
    # Seen at 1280x800: a short Suite pane hid the summary's last line under the table.
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QSplitter, QTextEdit

    splitter = QSplitter(Qt.Orientation.Vertical)
    qtbot.addWidget(splitter)
    splitter.setChildrenCollapsible(False)
    splitter.addWidget(QTextEdit())  # the suite editor's place, with room to give
    view = ResultsView()
    splitter.addWidget(view)
    splitter.resize(380, 400)
    splitter.show()
    qtbot.waitExposed(splitter)
    splitter.setSizes([340, 60])
    view.show_result(_result(), "invoice.json")  # a summary of several lines at 380 px
    summary = view.summary
    qtbot.waitUntil(lambda: summary.height() >= summary.heightForWidth(summary.width()))
    assert summary.heightForWidth(summary.width()) > 3 * summary.fontMetrics().height()
    assert view.table.height() >= view.table.minimumHeight() > 0  # the header and a row
