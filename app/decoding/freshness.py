"""Whether the shown results were made from the inputs now in place.

The output and the chart show one run. When the schema, prompt or settings change after it,
they are marked out of date (``set_stale(True)``); undoing back to the run's inputs clears
the mark. Edits come in bursts, so the comparison waits for a short pause.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, QTimer

# The live check's pause too: both then read the schema text once (SchemaEditor.text()).
CHECK_DELAY_MS = 300


class Freshness(QObject):
    """`current()` gives the inputs by name ("schema", "prompt", "settings"); each target has
    `set_stale(stale, reason)`."""

    def __init__(
        self, current: Callable[[], dict[str, object]], targets: Sequence[Any], parent: QObject
    ) -> None:
        super().__init__(parent)
        self._current = current
        self._targets = targets
        self._ran: dict[str, object] | None = None  # the inputs of the run shown
        self.stale = False
        self.reason = ""
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self.check_now)

    def ran(self, inputs: dict[str, object]) -> None:
        """The results shown from now on are made from these inputs."""
        self._ran = inputs
        self.check_now()

    def changed(self, *_: object) -> None:
        self._timer.start()

    def check_now(self) -> None:
        self._timer.stop()
        if self._ran is None:  # no results shown: nothing to mark, no text to read
            return
        now = self._current()
        changed = [n for n in now if now[n] != self._ran[n]]
        self.stale = bool(changed)
        self.reason = f"The {_words(changed)} changed since this run." if changed else ""
        for target in self._targets:
            target.set_stale(self.stale, self.reason)


def _words(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
