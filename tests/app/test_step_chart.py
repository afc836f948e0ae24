"""The step chart on its own: drawing only what changed, and what it shows after a redraw."""

from __future__ import annotations

import pytest

from app.chart.step_chart import MIN_MASS_STEPS, StepChart, mass_plot_span
from engine.records import Candidate, StepRecord


def _record(step: int, texts: tuple[str, ...] = ("a", "b", "✗c")) -> StepRecord:
    cands = tuple(
        Candidate(
            id=i, text=t.lstrip("✗"), p_raw=0.5 / (i + 1), p_masked=0.0, valid=not t.startswith("✗")
        )
        for i, t in enumerate(texts)
    )
    return StepRecord(
        step=step,
        token_id=0,
        token_text="a",
        token_piece="a",
        top_raw=cands,
        top_masked=tuple(c for c in cands if c.valid),
        valid_mass=0.8,
        valid_mass_bound=0.0,
        n_valid=2,
        n_valid_exact=True,
        entropy=1.0,
        forward_ms=1.0,
        mask_ms=0.1,
        output_chars=step + 1,
    )


@pytest.mark.parametrize("span", [0, 5, 9, 10, 11, 57, 99, 100, 137, 499, 500, 4321])
def test_mass_plot_span_fits_the_run_with_little_room_to_spare(span: int) -> None:
    shown = mass_plot_span(span)
    assert shown >= max(span, MIN_MASS_STEPS - 1)
    assert shown <= max(span * 1.2, MIN_MASS_STEPS)


def test_mass_plot_span_changes_rarely() -> None:
    spans = {mass_plot_span(n) for n in range(500)}
    assert len(spans) < 40  # the step axis is redrawn once per change, not once per step


def test_redraw_shows_newest_step_and_sets_ticks_only_on_change(qtbot) -> None:
    chart = StepChart()
    qtbot.addWidget(chart)
    chart.resize(660, 820)
    chart.show()
    axis = chart.bar_plot.getAxis("bottom")
    calls = []
    set_ticks = axis.setTicks
    axis.setTicks = lambda ticks: (calls.append(ticks), set_ticks(ticks))  # type: ignore[method-assign]

    for step in range(3):
        chart.push(_record(step))
    chart.redraw()
    assert chart.current_line.value() == 2
    assert [label for _, label in axis._tickLevels[0]] == ["a", "b", "✗c"]
    assert len(chart.raw_masked_bars.opts["height"]) == 1
    assert chart.step_label.text().startswith("step <b>2</b> of 3")

    n_calls = len(calls)
    chart.push(_record(3))
    chart.redraw()  # same tokens: the axis keeps its labels and its cached picture
    assert len(calls) == n_calls
    chart.push(_record(4, ("x", "y")))
    chart.redraw()
    assert len(calls) == n_calls + 1
    assert [label for _, label in axis._tickLevels[0]] == ["x", "y"]

    chart.show_step(0)
    assert chart.current_line.value() == 0
    chart.clear()
    assert axis._tickLevels == [[]]
    assert chart.step_label.text() == "No steps yet: press Run."
