"""Candidate rows read at every Top-K: no label squeezed under its neighbours."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QFontMetrics, QWheelEvent
from PySide6.QtWidgets import QApplication
from step_chart_records import make_record, many_candidates, shown_chart


def _row_px(chart) -> float:
    vb = chart.bar_plot.getPlotItem().vb
    return abs(vb.mapViewToScene(QPointF(0, 1)).y() - vb.mapViewToScene(QPointF(0, 0)).y())


@pytest.mark.parametrize("top_k", [5, 10, 50])
@pytest.mark.parametrize("size", [(660, 820), (420, 380)])
def test_every_label_in_view_has_a_line_of_its_own(qtbot, top_k: int, size) -> None:
    chart = shown_chart(qtbot, size)
    # Top-K raw plus as many only in the after-masking list: the most a step can show.
    record = make_record(0, cands=many_candidates(2 * top_k))
    chart.push(record)
    chart.redraw()
    rows = chart.bars.token_axis.rows
    line = chart.bars.token_axis.style["tickFont"]
    assert rows, "some rows are always labelled"
    assert _row_px(chart) >= QFontMetrics(line).lineSpacing()  # labels cannot overlap
    assert len(rows) == len(chart.bars.shown_rows)  # every row in view has its label
    overflow = len(rows) < 2 * top_k
    assert chart.bars.scroll.isVisible() == overflow  # the rest is a scroll away


def test_the_scroll_bar_and_the_wheel_bring_the_other_rows_into_view(qtbot) -> None:
    chart = shown_chart(qtbot, (420, 380))
    chart.push(make_record(0, cands=many_candidates(100)))
    chart.redraw()
    first = chart.bars.shown_rows
    assert first.start == 0 and chart.bars.scroll.isVisible()
    chart.bars.scroll.setValue(chart.bars.scroll.maximum())
    assert chart.bars.shown_rows.stop == 100
    assert chart.bars.token_axis.rows[-1][1] == "word99"
    viewport = chart.bar_plot.viewport()
    center = QPointF(viewport.width() / 2, viewport.height() / 2)
    up = QWheelEvent(
        center,
        QPointF(viewport.mapToGlobal(QPoint(int(center.x()), int(center.y())))),
        QPoint(0, 0),
        QPoint(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(viewport, up)
    assert chart.bars.shown_rows.stop == 100 - 3  # three rows a notch


def test_rows_keep_their_height_from_step_to_step(qtbot) -> None:
    chart = shown_chart(qtbot)
    chart.push(make_record(0, cands=many_candidates(12)))
    chart.redraw()
    tall = _row_px(chart)
    chart.push(make_record(1, cands=many_candidates(10)))
    chart.redraw()
    assert _row_px(chart) == tall  # fewer tokens this step: the rows do not grow and jump
    chart.clear()
    chart.push(make_record(0, cands=many_candidates(6)))
    chart.redraw()
    assert _row_px(chart) > tall  # a new run starts afresh
