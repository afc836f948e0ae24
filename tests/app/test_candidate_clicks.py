"""Clicking a candidate row: the bars emit its Candidate, the chart adds the shown step's
index; rows show a pointing hand and say what a click does."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from step_chart_records import make_record, shown_chart

from app.chart.candidate_bars import MASKED_CLICK_TIP, VALID_CLICK_TIP


def chart_with_steps(qtbot):
    chart = shown_chart(qtbot)
    for step in range(3):
        chart.push(make_record(step, ("a", "b", "✗c")))
    chart.redraw()
    return chart


def row_point(chart, row: int, x: float = 0.2) -> QPoint:
    scene = chart.bars.plot.getPlotItem().vb.mapViewToScene(QPointF(x, row))
    return chart.bar_plot.mapFromScene(scene)


def label_point(chart, row: int) -> QPoint:
    axis = chart.bars.token_axis.sceneBoundingRect()
    y = chart.bars.plot.getPlotItem().vb.mapViewToScene(QPointF(0, row)).y()
    return chart.bar_plot.mapFromScene(QPointF(axis.center().x(), y))


def click(qtbot, chart, point: QPoint) -> None:
    qtbot.mouseClick(chart.bar_plot.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_a_click_on_a_valid_row_emits_the_shown_step_and_its_candidate(qtbot) -> None:
    chart = chart_with_steps(qtbot)
    chart.show_step(1)
    with qtbot.waitSignal(chart.sig_candidate_clicked) as blocker:
        click(qtbot, chart, row_point(chart, 1))
    index, candidate = blocker.args
    assert index == 1 and candidate.text == "b" and candidate.valid


def test_a_click_on_a_masked_row_or_a_label_emits_it_too(qtbot) -> None:
    chart = chart_with_steps(qtbot)
    with qtbot.waitSignal(chart.bars.sig_candidate_clicked) as blocker:
        click(qtbot, chart, row_point(chart, 2))
    assert blocker.args[0].text == "c" and not blocker.args[0].valid
    with qtbot.waitSignal(chart.sig_candidate_clicked) as blocker:
        click(qtbot, chart, label_point(chart, 0))
    assert blocker.args[0] == 2 and blocker.args[1].text == "a"  # following: the last step


def test_a_click_below_the_rows_emits_nothing(qtbot) -> None:
    chart = chart_with_steps(qtbot)
    clicked: list[object] = []
    chart.sig_candidate_clicked.connect(lambda *args: clicked.append(args))
    click(qtbot, chart, row_point(chart, 4))  # an empty row: three candidates only
    qtbot.wait(20)
    assert clicked == []


def test_rows_show_a_pointing_hand_and_say_what_a_click_does(qtbot) -> None:
    chart = chart_with_steps(qtbot)
    bars, viewport = chart.bars, chart.bar_plot.viewport()

    def hover(point: QPoint) -> None:
        bars._hover(chart.bar_plot.mapToScene(point))

    hover(row_point(chart, 0))
    assert VALID_CLICK_TIP in chart.bar_plot.toolTip()
    assert viewport.cursor().shape() == Qt.CursorShape.PointingHandCursor
    hover(row_point(chart, 2))
    assert MASKED_CLICK_TIP in chart.bar_plot.toolTip()
    hover(row_point(chart, 4))
    assert chart.bar_plot.toolTip() == ""
    assert viewport.cursor().shape() != Qt.CursorShape.PointingHandCursor
