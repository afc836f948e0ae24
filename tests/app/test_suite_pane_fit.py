"""The Suite pane reads without sideways scrolling in the default layout (issue 27): on a
1280x800 and a 1600x1000 screen (the window at its default size there, and filling the
screen) its rows of buttons, its title, its message line (suite warnings) and its run bar
fit the dock's width; the pane scrolls up and down only."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, QSize
from PySide6.QtWidgets import QScrollArea, QWidget

from app.shell.window_size import default_size
from tests.app.shell_window import open_window

SIZES = [
    default_size(QRect(0, 0, 1280, 800)),  # 1177x736: the left dock is 340 px wide
    QSize(1280, 800),
    default_size(QRect(0, 0, 1600, 1000)),
    QSize(1600, 1000),
]


def _inside(widget: QWidget, area: QScrollArea) -> bool:
    """The widget's right edge lies within the scroll area's viewport."""
    right = widget.mapTo(area.widget(), widget.rect().topRight()).x()
    return right < area.viewport().width()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s.width()}x{s.height()}")
def test_the_suite_pane_fits_its_dock(qtbot, store, monkeypatch, size: QSize) -> None:
    window = open_window(qtbot, store, monkeypatch)
    window.resize(size)
    window.panes.reset_layout()
    qtbot.wait(50)  # the docks settle after the resize
    suites = window.suites
    suites.open_bundled("currency")
    pane, editor = suites.pane, suites.pane.editor
    # A warning on the message line: the prompt uses none of the cases' values.
    editor.prompt.setPlainText("Say which currency this is in.")
    pane.eta.setText("The model is busy with another run: stop it first")
    qtbot.wait(100)
    area = window.panes.dock("suite").widget()
    assert isinstance(area, QScrollArea) and area.widget() is pane
    assert editor.message.isVisible() and "prompt uses no" in editor.message.text()
    assert area.horizontalScrollBar().maximum() == 0  # nothing hidden to the right
    assert pane.width() <= area.viewport().width()
    for widget in (editor.message, editor.title, pane.eta, editor.redo_button, pane.parallel):
        assert _inside(widget, area), widget
    for tab in range(editor.tabs.count()):  # every tab's row of buttons
        editor.tabs.setCurrentIndex(tab)
        qtbot.wait(20)
        assert area.horizontalScrollBar().maximum() == 0, editor.tabs.tabText(tab)
