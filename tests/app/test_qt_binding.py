"""Guards against a Qt binding that corrupts reference counts.

PySide6 6.12.0 drops a reference to True on every Signal.emit() and to None on every
Python override of a void virtual (paintEvent, pyqtgraph's paint, ...). On Python 3.11,
where True and None are not immortal, a long session then dies with "Fatal Python error:
bool_dealloc / none_dealloc". 6.11.3 is clean. Python 3.12+ makes both objects immortal,
so the leak is harmless there.
"""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

pytestmark = pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="True and None are immortal from Python 3.12 on"
)


class _Emitter(QObject):
    sig = Signal(object)


class _Painted(QWidget):
    def paintEvent(self, event: object) -> None:  # a void virtual overridden in Python
        pass


def test_signal_emit_keeps_true_alive(qapp) -> None:
    emitter = _Emitter()
    emitter.sig.connect(lambda _value: None)
    before = sys.getrefcount(True)
    for i in range(200):
        emitter.sig.emit(i)
    assert sys.getrefcount(True) - before > -50, "this PySide6 build leaks refs to True"


def test_virtual_override_keeps_none_alive(qtbot) -> None:
    widget = _Painted()
    qtbot.addWidget(widget)
    widget.resize(50, 50)
    widget.show()
    before = sys.getrefcount(None)
    for _ in range(200):
        widget.repaint()
    assert sys.getrefcount(None) - before > -50, "this PySide6 build leaks refs to None"
