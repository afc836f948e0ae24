"""The valid-mass plot: hover names a step's token, zoom and pan along the steps, reset,
and cross-check disagreements ringed."""

from __future__ import annotations

from PySide6.QtCore import QPointF
from step_chart_records import make_record, shown_chart

from engine.records import Candidate, Disagreement


def _disagreement() -> Disagreement:
    c = Candidate(9, "␣", 0.1, 0.1, True, " ")
    return Disagreement("llguidance", "llamacpp", (c,), (), 1, 0)


def _scene_pos(chart, step: float, mass: float) -> QPointF:
    return chart.mass.vb.mapViewToScene(QPointF(step, mass))


def test_hover_shows_step_token_and_valid_mass(qtbot) -> None:
    chart = shown_chart(qtbot)
    for step in range(5):
        chart.push(make_record(step, valid_mass=0.1 * (step + 1), chosen=int(step == 2)))
    chart.redraw()
    chart.mass._hover(_scene_pos(chart, 3.1, 0.3))
    tip = chart.mass_plot.toolTip()
    assert "step <b>3</b> of 5" in tip and "'b'" in tip and "valid mass 0.3" in tip


def test_wheel_zooms_along_the_steps_and_reset_follows_the_run_again(qtbot) -> None:
    chart = shown_chart(qtbot)
    for step in range(40):
        chart.push(make_record(step))
    chart.redraw()
    vb = chart.mass.vb
    assert vb.state["mouseEnabled"] == [True, False]  # x only: the mass axis stays 0..1
    whole = vb.viewRange()[0]
    vb.scaleBy(x=0.25, center=QPointF(20, 0.5))
    vb.sigRangeChangedManually.emit([True, False])  # what a wheel or a drag sends
    zoomed = vb.viewRange()[0]
    assert zoomed[1] - zoomed[0] < (whole[1] - whole[0]) / 2
    assert chart.mass.reset_button.isEnabled()
    for step in range(40, 60):
        chart.push(make_record(step))
    chart.redraw()
    assert vb.viewRange()[0] == zoomed  # new steps do not undo the zoom
    chart.mass.reset_button.click()
    assert vb.viewRange()[0][1] >= 60 and not chart.mass.reset_button.isEnabled()


def test_cross_check_disagreements_are_ringed_on_the_curve(qtbot) -> None:
    chart = shown_chart(qtbot)
    assert chart.mass.odd_note.isHidden()
    for step in range(6):
        odd = _disagreement() if step in (1, 4) else None
        chart.push(make_record(step, disagreement=odd))
    chart.redraw()
    xs, _ = chart.mass.disagreements.getData()
    assert list(xs) == [2.0, 5.0]  # steps 2 and 5, counted from 1
    assert chart.mass.odd_note.isVisible()
    chart.mass._hover(_scene_pos(chart, 2, 0.8))
    assert "backends disagree" in chart.mass_plot.toolTip()
    chart.clear()
    assert len(chart.mass.disagreements.getData()[0]) == 0 and chart.mass.odd_note.isHidden()


def test_a_click_on_the_mass_plot_shows_that_step(qtbot) -> None:
    chart = shown_chart(qtbot)
    for step in range(8):
        chart.push(make_record(step))
    chart.redraw()
    shown = []
    chart.sig_step_shown.connect(shown.append)
    chart.mass.sig_clicked.emit(chart.mass._index_at(_scene_pos(chart, 3, 0.5)))
    assert shown[-1] == 2 and chart.current_line.value() == 3
