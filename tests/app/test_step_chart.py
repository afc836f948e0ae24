"""The step chart on its own: drawing only what changed, and what it shows after a redraw."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF
from step_chart_records import make_record, shown_chart

from app.chart.step_chart import MIN_MASS_STEPS, mass_plot_span


@pytest.mark.parametrize("span", [0, 5, 9, 10, 11, 57, 99, 100, 137, 499, 500, 4321])
def test_mass_plot_span_fits_the_run_with_little_room_to_spare(span: int) -> None:
    shown = mass_plot_span(span)
    assert shown >= max(span, MIN_MASS_STEPS - 1)
    assert shown <= max(span * 1.2, MIN_MASS_STEPS)


def test_mass_plot_span_changes_rarely() -> None:
    spans = {mass_plot_span(n) for n in range(500)}
    assert len(spans) < 40  # the step axis is redrawn once per change, not once per step


def test_redraw_shows_newest_step_and_repaints_labels_only_on_change(qtbot) -> None:
    chart = shown_chart(qtbot)
    axis = chart.bars.token_axis
    calls = []
    update = axis.update
    axis.update = lambda *a: (calls.append(a), update(*a))  # type: ignore[method-assign]

    for step in range(3):
        chart.push(make_record(step))
    chart.redraw()
    assert chart.current_line.value() == 3  # steps count from 1 on the plot
    assert [label for _, label in axis.rows] == ["a", "b", "✗c"]
    assert len(chart.raw_masked_bars.opts["width"]) == 1
    assert chart.step_label.text().startswith("step <b>3</b> of 3")

    n_calls = len(calls)
    chart.push(make_record(3))
    chart.redraw()  # same tokens: the axis is not repainted
    assert len(calls) == n_calls
    chart.push(make_record(4, ("x", "y")))
    chart.redraw()
    assert len(calls) == n_calls + 1
    assert [label for _, label in axis.rows] == ["x", "y"]

    chart.show_step(0)
    assert chart.current_line.value() == 1
    assert chart.step_label.text().startswith("step <b>1</b> of 5")
    chart.clear()
    assert axis.rows == []
    assert chart.step_label.text() == "No steps yet: press Run."


def test_the_most_probable_token_is_the_top_row_and_the_sampled_one_highlighted(qtbot) -> None:
    chart = shown_chart(qtbot)
    record = make_record(0, ("a", "b", "✗c"), chosen=1)
    chart.push(record)
    chart.redraw()
    vb = chart.bar_plot.getPlotItem().vb
    ticks = chart.bars.token_axis.rows
    top_of = {label: vb.mapViewToScene(QPointF(0, y)).y() for y, label in ticks}
    assert top_of["a"] < top_of["b"] < top_of["✗c"]  # ranked top down
    assert list(chart.bars.chosen_band.opts["y"]) == [1.0]  # its row is highlighted
