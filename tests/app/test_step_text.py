"""The rich text under the bar chart: it repaints without re-laying out the window."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.chart.step_text import MIN_LINES, StepText


class _LayoutRequests(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def _shown(qtbot, width: int) -> tuple[QWidget, StepText]:
    parent = QWidget()
    qtbot.addWidget(parent)
    text = StepText("No steps yet", parent)
    QVBoxLayout(parent).addWidget(text)
    parent.resize(width, 200)
    parent.show()
    qtbot.waitExposed(parent)
    return parent, text


def test_new_text_that_fits_asks_the_layout_for_nothing(qtbot) -> None:
    parent, text = _shown(qtbot, 600)
    qtbot.wait(20)  # the layout's own first requests
    requests = _LayoutRequests()
    parent.installEventFilter(requests)
    for step in range(20):
        text.setText(f"step <b>{step}</b> of 20 · valid mass 0.9{step}")
    qtbot.wait(20)
    assert requests.count == 0
    assert text.text() == "step <b>19</b> of 20 · valid mass 0.919"


def test_grows_for_a_long_text_and_keeps_the_height_until_reset(qtbot) -> None:
    _, text = _shown(qtbot, 160)
    two_lines = MIN_LINES * text.fontMetrics().lineSpacing()
    assert text.minimumHeight() == two_lines
    text.setText("a rather long explanation of a step " * 6)
    grown = text.minimumHeight()
    assert grown > two_lines
    text.setText("short")
    assert text.minimumHeight() == grown  # the chart above must not jump back and forth
    text.reset()
    assert text.minimumHeight() == two_lines
