"""Presentation mode: F11 shows the chart (and explanation) alone in large type; Esc puts the
window back as it was."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication


def _visible(window) -> set[str]:
    return {n for n, p in window.panes.panes.items() if p.dock.isVisible()}


def test_f11_presents_and_esc_restores_the_window(qtbot, window):
    before_panes, before_font = _visible(window), QApplication.font().pointSizeF()
    stop_key = window.stop_action.shortcut()
    presentation = window.demo.presentation
    qtbot.keyClick(window, Qt.Key.Key_F11)
    assert presentation.on
    qtbot.waitUntil(lambda: "settings" not in _visible(window))
    assert _visible(window) <= {"chart", "explain"} and "chart" in _visible(window)
    assert QApplication.font().pointSizeF() > 1.4 * before_font
    assert window.stop_action.shortcut() == QKeySequence()  # Esc is the way out now
    # Words for people who are not engineers, on the chart and in the explanation.
    chart = window.step_chart
    assert "could write next" in chart.bars_title.text()
    assert "forbidden by the rules" in chart.legend.text()
    assert "share of the model's preference that the rules allowed" in chart.mass.title.text()
    assert chart.mass.dip_labels.on
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    assert not presentation.on and not presentation.action.isChecked()
    qtbot.waitUntil(lambda: _visible(window) == before_panes)
    assert QApplication.font().pointSizeF() == before_font
    assert window.stop_action.shortcut() == stop_key
    assert "Candidate tokens" in chart.bars_title.text() and "masked out" in chart.legend.text()
    assert not chart.mass.dip_labels.on
