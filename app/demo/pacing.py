"""Pause, Step and Continue for a live run, and the delay per token, as window actions.

The run itself waits in the worker thread (engine/decode/pacing.py); these actions only
flip the pacer, so the window never blocks. Space and → work wherever the focus is not
in a text field, where they must still type a space or move the cursor; → after a run
moves the timeline to the next step, ← to the one before.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QStyle,
    QTextEdit,
    QToolBar,
    QWidget,
)

from app.decoding.worker import RunController
from engine.decode.pacing import Pacer

# Seconds per token offered for live demonstrations.
DELAYS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)


def delay_label(seconds: float) -> str:
    return "full speed" if seconds <= 0 else f"{seconds:g} s per token"


class Pacing(QObject):
    """The Pause / Step actions and the speed box; `start_paused` starts a run for Step."""

    def __init__(
        self,
        window: QWidget,
        controller: RunController,
        start_paused: Callable[[], bool],
        move_selection: Callable[[int], None],
    ) -> None:
        super().__init__(window)
        self._window = window
        self._controller = controller
        self._start_paused = start_paused
        self._move_selection = move_selection
        style = window.style()
        self.pause_action = QAction("&Pause", self)
        self.pause_action.setCheckable(True)
        self.pause_action.setShortcut(Qt.Key.Key_Space)
        self.pause_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)  # see _keys
        self.pause_action.setIcon(style.standardIcon(QStyle.StandardPixmap.SP_MediaPause))
        self.pause_action.setToolTip("Pause the run after this token; Space toggles Continue")
        self.pause_action.setEnabled(False)
        self.pause_action.toggled.connect(self._toggle)
        self.step_action = QAction("S&tep", self)
        self.step_action.setShortcut(Qt.Key.Key_Right)
        self.step_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.step_action.setIcon(style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekForward))
        self.step_action.setToolTip(
            "Decode one token and pause (→); starts a paused run when none is going"
        )
        self.step_action.triggered.connect(self.step)
        self.speed = QComboBox(window)
        self.speed.setObjectName("stepDelay")
        self.speed.setToolTip("How long the run waits after each token, for a live audience")
        for seconds in DELAYS:
            self.speed.addItem(delay_label(seconds), seconds)
        self.speed.currentIndexChanged.connect(self._speed_changed)
        QApplication.instance().installEventFilter(self)

    @property
    def pacer(self) -> Pacer:
        return self._controller.pacer

    def add_to(self, menu: object, toolbar: QToolBar) -> None:
        menu.addAction(self.pause_action)  # type: ignore[attr-defined]
        menu.addAction(self.step_action)  # type: ignore[attr-defined]
        toolbar.addAction(self.pause_action)
        toolbar.addAction(self.step_action)
        toolbar.addWidget(QLabel(" Speed: ", toolbar))
        toolbar.addWidget(self.speed)

    def set_delay(self, seconds: float) -> None:
        index = min(range(len(DELAYS)), key=lambda i: abs(DELAYS[i] - seconds))
        self.speed.setCurrentIndex(index)
        self.pacer.set_delay(DELAYS[index])

    def delay(self) -> float:
        return float(self.speed.currentData())

    # --- run state -------------------------------------------------------------------------
    def run_started(self, paused: bool = False) -> None:
        """Each run starts unpaused unless it was started by Step."""
        self.pause_action.blockSignals(True)
        self.pause_action.setChecked(paused)
        self.pause_action.blockSignals(False)
        self.pause_action.setText("&Continue" if paused else "&Pause")
        (self.pacer.pause if paused else self.pacer.resume)()
        self.pause_action.setEnabled(True)

    def next_run_unpaced(self) -> None:
        """The next run decodes at full speed, whatever Speed says; the run after it at
        Speed again."""
        self.pacer.set_delay(0.0)

    def run_ended(self) -> None:
        self.pacer.set_delay(self.delay())  # after an unpaced run, Speed again
        self.pacer.resume()  # a Stop while paused must not leave the next run paused
        self.pause_action.blockSignals(True)
        self.pause_action.setChecked(False)
        self.pause_action.blockSignals(False)
        self.pause_action.setText("&Pause")
        self.pause_action.setEnabled(False)

    @property
    def paused(self) -> bool:
        return self._controller.decoding_one_run and self.pacer.paused

    def step(self) -> None:
        if self._controller.decoding_one_run:
            self.pause_action.setChecked(True)
            self.pacer.step()
        elif self._start_paused():
            self.pacer.step()

    def _toggle(self, paused: bool) -> None:
        if not self._controller.decoding_one_run:
            return
        self.pause_action.setText("&Continue" if paused else "&Pause")
        (self.pacer.pause if paused else self.pacer.resume)()

    def _speed_changed(self, _index: int) -> None:
        self.pacer.set_delay(self.delay())

    # --- keys ------------------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.KeyPress or not self._window.isActiveWindow():
            return False
        assert isinstance(event, QKeyEvent)
        plain = (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier)
        if event.modifiers() not in plain:
            return False
        # Each key press is filtered once, at the widget it is sent to: the focus widget,
        # or the window when nothing has the focus.
        target = QApplication.focusWidget() or self._window
        if watched is not target or _types_text(target):
            return False
        return self._key(event.key())

    def _key(self, key: int) -> bool:
        if key == Qt.Key.Key_Space:
            if not self._controller.decoding_one_run:
                return False
            self.pause_action.toggle()
            return True
        if key == Qt.Key.Key_Right:
            if self._controller.decoding_one_run:
                self.step()
            else:
                self._move_selection(+1)
            return True
        if key == Qt.Key.Key_Left and not self._controller.decoding_one_run:
            self._move_selection(-1)
            return True
        return False


def _types_text(widget: QWidget | None) -> bool:
    """Where Space and the arrows belong to the widget: text fields, spin boxes, combos."""
    if isinstance(widget, QLineEdit | QAbstractSpinBox | QComboBox):
        return True
    if isinstance(widget, QPlainTextEdit | QTextEdit):
        return not widget.isReadOnly()
    return False
