"""Panes read without sideways scrolling (issue 27, items 3 and 4): the explanation fits
a narrow pane, tab names are whole (the tab bar scrolls), and presentation mode gives the
disabled buttons a disabled look. (The chart's share of a full screen is judged on the
Xvfb screenshots: the offscreen platform does not make a window full screen.)"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QApplication, QTabBar, QToolButton

from app.demo.explanation_panel import ExplanationPanel
from app.demo.presentation import FONT_SCALE
from engine.runs.saved import SavedRun, load_run, run_settings

RUN = Path(__file__).parent.parent / "data" / "runs" / "currency-logits.json"
NARROW = 330  # about the right column's width in the default layout at 1280x800
PRESENTED = 400  # the explanation's width in presentation mode at 1280x800


@pytest.fixture(scope="module")
def run() -> SavedRun:
    return load_run(RUN)


@pytest.fixture
def app_font() -> Iterator[Callable[[float], None]]:
    """Scales the application's font for one test, and puts it back after."""
    app = QApplication.instance()
    saved = QFont(app.font())

    def scale(by: float) -> None:
        font = QFont(saved)
        font.setPointSizeF(saved.pointSizeF() * by)
        app.setFont(font)

    yield scale
    app.setFont(saved)


@pytest.mark.parametrize(
    ("width", "presenting"),
    # Presentation mode at 1280x800 gives the explanation a third of the screen, in type
    # half as large again: two pipeline boxes side by side no longer fit, so they stack.
    [(NARROW, False), (PRESENTED, True)],
    ids=["narrow", "presentation-1280"],
)
def test_the_explanation_fits_a_narrow_pane(qtbot, run, width, presenting, app_font):
    if presenting:  # as presentation mode sets it: the application's font
        app_font(FONT_SCALE)
    panel = ExplanationPanel()
    qtbot.addWidget(panel)
    panel.set_plain_language(presenting)
    panel.resize(width, 700)
    panel.show()
    qtbot.waitExposed(panel)
    index = len(run.records) // 2
    panel.show_step(run.records, index, 262_144, run_settings(run).temperature, run.schema_text)
    masked = next(r.candidate for r in panel.table.rows if not r.valid)
    panel.show_why(masked)
    qtbot.wait(50)  # the layouts settle
    body, viewport = panel.scroll.widget(), panel.scroll.viewport()
    assert body.width() <= viewport.width()
    table = panel.table
    header = table.horizontalHeader()
    assert sum(header.sectionSize(c) for c in range(table.columnCount())) <= (
        table.viewport().width()
    )
    assert not table.horizontalScrollBar().isVisible()
    for label in (panel.sum_label, panel.why_label, panel.title):
        assert label.geometry().right() <= label.parentWidget().width()
    assert panel.pipeline.width() <= viewport.width()
    for box in panel.pipeline.boxes:
        assert box.geometry().right() <= panel.pipeline.width()


def test_tab_names_are_whole(qtbot, window):
    bars = [b for b in window.panes.findChildren(QTabBar) if b.isVisible() and b.count() > 1]
    assert bars
    for bar in bars:  # Qt's own dock tab bars elide ("Explana…") and do not scroll
        assert bar.elideMode() == Qt.TextElideMode.ElideNone and bar.usesScrollButtons()


def _darkest(button: QToolButton) -> int:
    image = button.grab().toImage()
    return min(
        QColor(image.pixel(x, y)).lightness()
        for x in range(image.width())
        for y in range(image.height())
    )


def test_presentation_greys_disabled_buttons(qtbot, window):
    presentation = window.demo.presentation
    presentation.set_on(True)
    try:
        qtbot.wait(200)
        stop = next(
            b
            for b in window.findChildren(QToolButton)
            if b.defaultAction() is window.stop_action and b.isVisible()
        )
        run = next(
            b
            for b in window.findChildren(QToolButton)
            if b.defaultAction() is window.run_action and b.isVisible()
        )
        assert not window.stop_action.isEnabled() and window.run_action.isEnabled()
        # The contrast sheet paints text black (or white); a disabled button's text is grey.
        assert _darkest(run) < 40 <= _darkest(stop)
    finally:
        presentation.set_on(False)


def test_a_branch_does_not_widen_the_branches_pane(qtbot):
    """The panes' dividers moved by themselves when a branch opened (issue 27, item 7): the
    pane's minimum width grew with the unwrapped titles of the two outputs, and the dock
    layout made room for it."""
    from step_records import token_record

    from app.compare.branches import BranchesView
    from engine.records import FinishReason, RunResult

    def saved(pieces: list[tuple[int, str]]) -> SavedRun:
        records = tuple(token_record(i, t, p, 0.9, n_valid=2) for i, (t, p) in enumerate(pieces))
        result = RunResult("".join(p for _, p in pieces), FinishReason.GRAMMAR_COMPLETE, 2)
        return SavedRun("{}", "prompt", "gemma.gguf", records, result)

    view = BranchesView()
    qtbot.addWidget(view)
    view.resize(NARROW, 600)
    view.show()
    qtbot.waitExposed(view)
    view.set_original(saved([(1, '{"currency": "'), (2, 'USD"}')]))
    empty = view.minimumSizeHint().width()
    branch = view.branches.new_branch(1, 4, 'EUR"}', saved([(1, '{"currency": "'), (4, 'EUR"}')]))
    view.add_branch(branch)
    view.list.setCurrentItem(view.list.topLevelItem(1))
    qtbot.wait(50)  # the layouts settle
    assert view.minimumSizeHint().width() <= max(empty, NARROW)
