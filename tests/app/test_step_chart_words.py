"""What the chart says: steps from 1, the temperature of "before masking", out of date."""

from __future__ import annotations

from step_chart_records import make_record, shown_chart

from app.chart.step_chart import legend_html, raw_label
from app.theme import chart_colors


def test_the_legend_names_the_temperature(qtbot) -> None:
    assert raw_label(0.7) == "P before masking, at T = 0.7"
    assert "T = 1" in raw_label(0.0) and "greedy" in raw_label(0.0)
    chart = shown_chart(qtbot)
    chart.set_temperature(0.7)
    assert "P before masking, at T = 0.7" in chart.legend.text()
    assert chart.legend.text() == legend_html(chart_colors(), 0.7)


def test_steps_count_from_one_everywhere(qtbot) -> None:
    chart = shown_chart(qtbot)
    for step in range(8):
        chart.push(make_record(step))
    chart.redraw()
    assert chart.step_label.text().startswith("step <b>8</b> of 8")
    xs, _ = chart.mass_curve.getData()
    assert (xs[0], xs[-1]) == (1.0, 8.0)
    chart.show_step(0)
    assert chart.step_label.text().startswith("step <b>1</b> of 8")


def test_set_stale_veils_the_chart_and_says_why(qtbot) -> None:
    chart = shown_chart(qtbot)
    chart.push(make_record(0))
    chart.redraw()
    before = chart.grab().toImage()
    chart.set_stale(True, "The schema changed since this run.")
    overlay = chart.stale_overlay
    assert chart.stale and overlay.isVisible() and overlay.geometry() == chart.rect()
    assert overlay.accessibleName() == "out of date: the schema changed since this run."
    assert chart.grab().toImage() != before  # dimmed, with the reason on top
    chart.set_stale(False)
    assert not chart.stale and chart.grab().toImage() == before
    chart.set_stale(True)
    assert "out of date" in overlay.accessibleName()  # a reason even when none is given
    chart.clear()  # a new run is never out of date
    assert not chart.stale
