"""Auto-rerun: with the toggle on, each valid edit of the schema reruns with the same
settings (so the same seed), cancelling any run in progress.

A run is only restarted once the old one has ended (RunController.sig_run_ended): the
worker runs one job at a time, and RunController.start refuses while a run is queued. Edits
that come while the old run is stopping are not queued one by one: the run that starts is
the one for the text in the editor then, so the last edit's run is the one shown.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QStyle, QWidget

from app.decoding.worker import RunController


def make_toggle(parent: QWidget) -> QAction:
    """The checkable Run-menu and toolbar action."""
    action = QAction("&Auto-rerun on edit", parent)
    action.setCheckable(True)
    action.setShortcut(QKeySequence("Ctrl+Shift+A"))
    action.setIcon(parent.style().standardIcon(QStyle.StandardPixmap.SP_BrowserReload))
    tip = (
        "Rerun with the same settings and seed after each edit that leaves the schema "
        "valid, stopping any run in progress (Ctrl+Shift+A)"
    )
    action.setToolTip(tip)
    action.setStatusTip(tip)
    return action


class AutoRerun(QObject):
    """Reruns after valid edits. Feed it note_edit() on every schema text change and
    on_checked(ok) after every live check; it calls `start` (the window's run) itself.

    `ready` says whether the check just reported is for the text now in the editor (a
    keystroke may have come since), so a half-typed schema is never run.
    """

    sig_restarting = Signal()  # a run in progress was told to stop, for a rerun after it

    def __init__(
        self,
        controller: RunController,
        start: Callable[[], object],
        ready: Callable[[], bool] = lambda: True,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.enabled = False
        self._controller = controller
        self._start = start
        self._ready = ready
        self._edited = False  # an edit not yet rerun
        self._stopping = False  # we stopped the run in progress and owe a rerun
        controller.sig_run_ended.connect(self._on_run_ended)

    def set_enabled(self, on: bool) -> None:
        self.enabled = on
        self.forget_edit()  # edits made while it was off do not count

    def forget_edit(self) -> None:
        """The text just set is not the user's edit (a replayed run's schema)."""
        self._edited = False

    def note_edit(self) -> None:
        self._edited = True

    def on_checked(self, ok: bool) -> None:
        if not (ok and self.enabled and self._edited and self._ready()):
            return
        self._edited = False
        if not self._controller.running:
            self._start()
        elif not self._stopping:
            self._stopping = True
            self._controller.stop()
            self.sig_restarting.emit()

    def _on_run_ended(self) -> None:
        if self._stopping:
            # After the window's own end-of-run handling, whichever was connected first.
            QTimer.singleShot(0, self._restart)

    def _restart(self) -> None:
        self._stopping = False
        if not self.enabled:
            return
        if self._ready():
            self._start()
        else:  # an edit since the last check: the check under way will start the run
            self._edited = True
