"""Presentation mode: the chart and the explanation fill the screen, in large type, with
words for people who are not engineers. F11 toggles it; Esc leaves it.

Entering keeps the window's layout, font and full-screen state, and leaving puts them
all back, so a presenter's own arrangement survives a talk.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QByteArray, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QMainWindow

from app.shell.panes import PaneHost
from app.theme import is_dark

# Shown side by side while presenting; every other pane is hidden.
SHOWN = ("chart", "explain")
FONT_SCALE = 1.5
CHART_SHARE = (2, 1)  # chart : explanation, across the screen
# High contrast: black on white, or white on near-black, wherever the widget palette rules.
# A disabled widget keeps a grey of its own: without it the sheet's colour would make a
# disabled Stop or Pause read as enabled (issue 27, item 4).
CONTRAST_LIGHT = (
    "QWidget { color: #000000; } QWidget:disabled { color: #8c8c8c; }"
    " QMainWindow, QDockWidget { background: #ffffff; }"
)
CONTRAST_DARK = (
    "QWidget { color: #ffffff; } QWidget:disabled { color: #7a7a7a; }"
    " QMainWindow, QDockWidget { background: #000000; }"
)


class Presentation(QObject):
    def __init__(
        self,
        window: QMainWindow,
        panes: PaneHost,
        set_plain_language: Callable[[bool], None],
        stop_action: QAction,
    ) -> None:
        super().__init__(window)
        self._window = window
        self._panes = panes
        self._plain = set_plain_language
        self._stop = stop_action
        self._saved: tuple[QByteArray, int, Qt.WindowState, QFont, str, QKeySequence] | None = None
        self.action = QAction("&Presentation mode", window)
        self.action.setCheckable(True)
        self.action.setShortcut(QKeySequence(Qt.Key.Key_F11))
        self.action.setToolTip(
            "Chart and explanation full screen, in large type, for an audience (F11; Esc leaves)"
        )
        self.action.toggled.connect(self.set_on)
        # Esc leaves presentation mode; outside it, Esc stays Stop's (see set_on).
        self._leave = QShortcut(QKeySequence(Qt.Key.Key_Escape), window)
        self._leave.setEnabled(False)
        self._leave.activated.connect(lambda: self.action.setChecked(False))

    @property
    def on(self) -> bool:
        return self._saved is not None

    def set_on(self, on: bool) -> None:
        if on == self.on:
            return
        if on:
            self._enter()
        else:
            self._exit()
        if self.action.isChecked() != on:
            self.action.setChecked(on)

    def _enter(self) -> None:
        app = QApplication.instance()
        w = self._window
        self._saved = (
            self._panes.saveState(),
            self._panes.width(),
            w.windowState(),
            app.font(),
            w.styleSheet(),
            self._stop.shortcut(),
        )
        self._stop.setShortcut(QKeySequence())  # two Esc shortcuts would both go dead
        self._leave.setEnabled(True)
        for name, pane in self._panes.panes.items():
            pane.dock.setVisible(name in SHOWN)
        if all(n in self._panes.panes for n in SHOWN):
            chart, explain = (self._panes.dock(n) for n in SHOWN)
            self._panes.splitDockWidget(chart, explain, Qt.Orientation.Horizontal)
        font = QFont(app.font())
        font.setPointSizeF(font.pointSizeF() * FONT_SCALE)
        app.setFont(font)
        w.setStyleSheet(CONTRAST_DARK if is_dark() else CONTRAST_LIGHT)
        self._plain(True)
        w.showFullScreen()
        # Shared once the window has its full-screen width: sizes set before would be
        # spread over the wider window by the panes' own stretch.
        QTimer.singleShot(0, self._share_width)

    def _share_width(self) -> None:
        """The chart is what the room watches: it gets most of the width."""
        if not self.on or not all(n in self._panes.panes for n in SHOWN):
            return
        docks = [self._panes.dock(n) for n in SHOWN]
        width = self._panes.width()
        sizes = [width * share // sum(CHART_SHARE) for share in CHART_SHARE]
        self._panes.resizeDocks(docks, sizes, Qt.Orientation.Horizontal)

    def _exit(self) -> None:
        assert self._saved is not None
        state, width, window_state, font, sheet, stop_key = self._saved
        self._saved = None
        w = self._window
        QApplication.instance().setFont(font)
        w.setStyleSheet(sheet)
        self._plain(False)
        self._leave.setEnabled(False)
        self._stop.setShortcut(stop_key)
        # Restored again once the window is back at the width the layout was saved at.
        self._panes.restore_at_width(state, width)
        w.setWindowState(window_state)  # normal, maximised or full screen, as it was
