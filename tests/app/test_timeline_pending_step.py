"""The step the chart shows can be one whose token the output has not appended yet (issue 22
§3): the chart follows the newest step, the output appends tokens on its own 33 ms flush.
Painting must take that in its stride; an exception out of a paint override killed the
window (SIGSEGV inside PySide), so a failure here is a crash in the app."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint

from app.decoding.output_view import OutputView
from app.theme import chart_colors
from tests.app.test_output_timeline import run_records, streamed


@pytest.fixture
def view(qtbot) -> OutputView:
    v = OutputView()
    qtbot.addWidget(v)
    v.resize(520, 360)  # the whole text fits: its end is on screen
    v.show()
    qtbot.waitExposed(v)
    return v


def outlined(view: OutputView, index: int) -> bool:
    rect = view.raw.span_rects(*view.raw.span(index))[0]
    edge = [QPoint(round(rect.left()) + dx, round(rect.center().y())) for dx in range(-3, 2)]
    image = view.raw.viewport().grab().toImage()
    want = chart_colors().current_step
    return any(
        max(abs(c.red() - want.red()), abs(c.green() - want.green()), abs(c.blue() - want.blue()))
        < 60
        for c in (image.pixelColor(p) for p in edge)
    )


def test_a_step_selected_before_its_token_arrives_paints_and_is_outlined_once_it_does(
    view: OutputView, qtbot
) -> None:
    records = run_records()
    streamed(view, records[:-1])  # the last step is made, its token not flushed yet
    view.append_record(records[-1])  # pending: the flush timer has not fired
    assert len(view.raw.records) == len(records) - 1
    with qtbot.capture_exceptions() as errors:
        view.select_step(len(records) - 1)  # what the chart's redraw emits for the newest step
        view.raw.viewport().repaint()  # the end of the text is on screen: that step is "visible"
    assert errors == []
    view._flush()  # what the flush timer runs: the token arrives
    qtbot.wait(10)
    assert outlined(view, len(records) - 1)
