"""The candidate bars on a log scale: small probabilities of allowed tokens show."""

from __future__ import annotations

from PySide6.QtCore import QPointF
from step_chart_records import make_record, shown_chart

from engine.records import Candidate


def _bar_px(chart, item) -> float:
    vb = chart.bar_plot.getPlotItem().vb
    x0 = item.opts["x0"]
    width = float(item.opts["width"][0])
    a, b = vb.mapViewToScene(QPointF(x0, 0)), vb.mapViewToScene(QPointF(x0 + width, 0))
    return abs(b.x() - a.x())


def _low_record():
    """An allowed token at 0.003 before masking, as new users saw vanish."""
    return make_record(0, cands=(Candidate(1, "low", 0.003, 0.003, True, "low"),))


def test_a_0_003_bar_is_a_sliver_on_the_linear_scale_and_plain_on_the_log_one(qtbot) -> None:
    chart = shown_chart(qtbot)
    chart.push(_low_record())
    chart.redraw()
    assert _bar_px(chart, chart.raw_valid_bars) < 3
    chart.set_bar_log_scale(True)
    assert _bar_px(chart, chart.raw_valid_bars) > 100
    labels = [label for _, label in chart.bars.p_axis._tickLevels[0]]
    assert labels[-3:] == ["0.01", "0.1", "1"]
    chart.set_bar_log_scale(False)
    assert _bar_px(chart, chart.raw_valid_bars) < 3
    assert chart.bars.p_axis._tickLevels[0][-1][1] == "1.0"
