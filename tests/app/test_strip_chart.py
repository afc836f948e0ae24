"""The strip chart under the bars: raw entropy beside the valid mass on a right-hand axis,
linked on x, the mouse still the mass plot's; the deepest dips labelled on request."""

from __future__ import annotations

import dataclasses

import numpy as np
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication
from step_chart_records import make_record, shown_chart

from app.chart.dip_labels import MARK_SIZE_PX, dip_text, label_rows
from engine.explain.marks import Dip, deepest_dips
from engine.records import StepRecord

ENTROPIES = [3.1, 0.2, 1.1, 2.8, 0.1, 0.3, 1.5, 0.2]
MASSES = [0.09, 0.99, 0.98, 0.008, 0.99, 0.95, 0.9, 0.02]


def records(n: int = 8) -> list[StepRecord]:
    out = []
    for step in range(n):
        # Steps 0 and 7: the model's top choice ("✗The") masked, "{" written instead.
        masked = step in (0, 7)
        r = make_record(step, ("✗The", "{", "b") if masked else ("a", "b"), chosen=int(masked))
        out.append(
            dataclasses.replace(
                r, entropy=ENTROPIES[step % 8], valid_mass=MASSES[step % 8] * (1 - step / 1000)
            )
        )
    return out


def fed(qtbot, rs: list[StepRecord]):
    chart = shown_chart(qtbot)
    for r in rs:
        chart.push(r)
    chart.redraw()
    return chart


def test_entropy_is_drawn_per_step_on_its_own_axis(qtbot) -> None:
    chart = fed(qtbot, records())
    xs, ys = chart.mass.entropy_curve.getData()
    assert list(xs) == [float(i) for i in range(1, 9)]  # steps from 1, as the mass curve
    assert np.allclose(ys, ENTROPIES)
    right = chart.mass_plot.getAxis("right")
    assert right.isVisible() and "entropy" in right.labelText and "nats" in right.labelText
    assert right.linkedView() is chart.mass.entropy_vb
    top = chart.mass.entropy_vb.viewRange()[1][1]
    assert 4.0 <= top < 4.5  # whole nats over the highest entropy (3.1), a little headroom
    assert "raw entropy" in chart.mass.title.text()


def test_new_steps_append_to_the_entropy_curve_and_grow_its_axis(qtbot) -> None:
    chart = fed(qtbot, records(3))
    chart.push(dataclasses.replace(records(4)[3], entropy=6.4))
    chart.redraw()
    assert np.allclose(chart.mass.entropy_curve.getData()[1], [3.1, 0.2, 1.1, 6.4])
    assert chart.mass.entropy_vb.viewRange()[1][1] >= 7.0
    chart.clear()
    assert len(chart.mass.entropy_curve.getData()[0]) == 0
    assert chart.mass.entropy_vb.viewRange()[1][1] < 2.0


def test_entropy_follows_the_mass_plot_along_the_steps(qtbot) -> None:
    chart = fed(qtbot, records(40))
    vb, evb = chart.mass.vb, chart.mass.entropy_vb
    vb.scaleBy(x=0.25, center=QPointF(20, 0.5))
    assert np.allclose(evb.viewRange()[0], vb.viewRange()[0])
    assert evb.geometry() == vb.sceneBoundingRect()  # stacked on the mass plot


def test_a_wheel_over_the_strip_still_zooms_the_mass_plot(qtbot) -> None:
    chart = fed(qtbot, records(8 * 5))
    vb = chart.mass.vb
    before = vb.viewRange()[0]
    viewport = chart.mass_plot.viewport()
    center = chart.mass_plot.mapFromScene(vb.sceneBoundingRect().center())
    event = QWheelEvent(
        QPointF(center),
        QPointF(viewport.mapToGlobal(center)),
        QPoint(0, 0),
        QPoint(0, 240),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(viewport, event)
    after = vb.viewRange()[0]
    assert after[1] - after[0] < before[1] - before[0]
    assert chart.mass.reset_button.isEnabled()


def test_a_click_on_the_strip_still_shows_that_step(qtbot) -> None:
    chart = fed(qtbot, records())
    where = chart.mass_plot.mapFromScene(chart.mass.vb.mapViewToScene(QPointF(4, 0.5)))
    with qtbot.waitSignal(chart.sig_step_shown) as blocker:
        qtbot.mouseClick(chart.mass_plot.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert blocker.args == [3] and chart.current_line.value() == 4


def test_hover_names_the_steps_entropy(qtbot) -> None:
    chart = fed(qtbot, records())
    chart.mass._hover(chart.mass.vb.mapViewToScene(QPointF(4, 0.5)))
    assert "raw entropy 2.8 nats" in chart.mass_plot.toolTip()


def test_a_log_mass_axis_leaves_entropy_linear(qtbot) -> None:
    chart = fed(qtbot, records())
    chart.set_log_scale(True)
    assert chart.mass_plot.getAxis("left").logMode
    assert not chart.mass_plot.getAxis("right").logMode
    assert np.allclose(chart.mass.entropy_curve.getData()[1], ENTROPIES)


def test_dip_labels_name_the_token_written_and_the_one_wanted(qtbot) -> None:
    chart = fed(qtbot, records())
    labels = chart.mass.dip_labels
    assert not any(item.isVisible() for item in labels.items)  # off unless asked for
    chart.set_annotate_dips(True)
    shown = [item.toPlainText() for item in labels.items if item.isVisible()]
    # The deepest three: step 4 (0.008), step 8 (0.02), step 1 (0.09), shown by step.
    assert shown == ["“{” instead of “The”", "“a”", "“{” instead of “The”"]
    assert [item.pos().x() for item in labels.items] == [1.0, 4.0, 8.0]
    chart.mass.set_annotate_dips(False)
    assert not any(item.isVisible() for item in labels.items)


def test_dips_kept_step_by_step_are_the_runs_deepest(qtbot) -> None:
    rs = records(8 * 4)
    chart = shown_chart(qtbot)
    chart.mass.set_annotate_dips(True)
    for r in rs:
        chart.push(r)
        chart.redraw()
    assert chart.mass.dip_labels.dips == deepest_dips(rs, 3)


def test_dip_labels_follow_a_log_axis(qtbot) -> None:
    chart = fed(qtbot, records())
    chart.mass.set_annotate_dips(True)
    chart.set_log_scale(True)
    ys = sorted(item.pos().y() for item in chart.mass.dip_labels.items)
    assert np.allclose(ys, sorted(np.log10([MASSES[0], MASSES[3] * 0.997, MASSES[7] * 0.993])))


def test_labels_of_close_dips_stack() -> None:
    assert label_rows([1, 2, 50], 100) == [0, 1, 0]
    assert label_rows([1, 40, 80], 100) == [0, 0, 0]
    assert label_rows([1, 2, 3], 100) == [0, 1, 2]


def test_dip_text_without_a_masked_top_choice() -> None:
    assert dip_text(Dip(3, 0.2, "{", None)) == "“{”"
    assert dip_text(Dip(3, 0.2, "{", "The")) == "“{” instead of “The”"


def _long_run() -> list[StepRecord]:
    """60 steps, the deepest dips at the first, the middle and the last."""
    deep = {0: 0.001, 30: 0.003, 59: 0.002}
    out = []
    for step in range(60):
        masked = step in deep
        r = make_record(step, ("✗The", "{", "b") if masked else ("a", "b"), chosen=int(masked))
        out.append(dataclasses.replace(r, entropy=1.0, valid_mass=deep.get(step, 0.99)))
    return out


def test_dip_labels_stay_inside_the_plot_and_off_their_marks(qtbot) -> None:
    """Presentation mode cut the first step's label at the plot's left edge ('{” instead of
    “title”' for '“{” instead of “title”') and drew the ▼ over a label's last characters
    (issue 27)."""
    chart = shown_chart(qtbot)
    chart.set_annotate_dips(True)
    for r in _long_run():  # step by step, as a run comes in: a label shown after the view
        chart.push(r)  # moved once stayed out of sight
        chart.redraw()
        qtbot.wait(1)
    qtbot.wait(20)
    vb = chart.mass.vb
    labels = chart.mass.dip_labels
    shown = [item for item in labels.items if item.isVisible()]
    assert [item.pos().x() for item in shown] == [1.0, 31.0, 60.0]  # the first, the last

    def check(item) -> None:
        view = vb.sceneBoundingRect()
        box = item.mapRectToScene(item.boundingRect())
        where = (item.toPlainText(), box, view)
        assert view.left() - 0.5 <= box.left() and box.right() <= view.right() + 0.5, where
        assert view.top() - 0.5 <= box.top(), where
        mark = vb.mapViewToScene(item.pos())
        assert box.bottom() <= mark.y() - MARK_SIZE_PX / 2 + 0.5, where  # above its ▼
        assert box.left() < mark.x() < box.right(), where  # and over it

    for item in shown:
        check(item)
    # Zoomed in, a label whose point is in view is placed again, and still fits.
    vb.setXRange(0.5, 12.0, padding=0)
    qtbot.wait(20)
    check(shown[0])


def test_a_side_title_shows_only_where_it_fits_the_plots_height(qtbot) -> None:
    # Presentation mode at 1280x800 left the strip about 130 px high, and its side titles in
    # large type were cut at both ends; the title above the plot names both curves.
    chart = fed(qtbot, records())
    left, right = (chart.mass_plot.getAxis(name) for name in ("left", "right"))
    chart.resize(chart.width(), 1400)
    qtbot.waitUntil(lambda: chart.mass.vb.height() > 250)
    assert left.label.isVisible() and right.label.isVisible()
    chart.resize(chart.width(), 300)
    qtbot.waitUntil(lambda: not left.label.isVisible())
    assert left.label.boundingRect().width() > chart.mass.vb.height()
    assert not right.label.isVisible()
    chart.resize(chart.width(), 1400)  # room again: back
    qtbot.waitUntil(lambda: left.label.isVisible() and right.label.isVisible())
