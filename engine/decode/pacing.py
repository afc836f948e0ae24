"""Pause, Step and Continue for a run, and a delay per step for live demonstrations.

The decode loop is a generator, so a run paused between two ``next()`` calls keeps every
bit of its state (KV cache, grammar state, random generator) as it was: nothing is
recomputed or replayed, and Continue goes on exactly where the run stopped. The thread that
drains the generator calls :meth:`Pacer.wait_turn` before each step; any other thread
(the window's) calls the rest.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

# How often a waiting run looks at should_stop(): a Stop or a window closing while paused
# is answered within this.
_POLL_S = 0.05


class Pacer:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._paused = False
        self._granted = 0  # single steps allowed while paused
        self._delay_s = 0.0

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def delay_s(self) -> float:
        return self._delay_s

    def pause(self) -> None:
        with self._cond:
            self._paused, self._granted = True, 0
            self._cond.notify_all()

    def resume(self) -> None:
        with self._cond:
            self._paused, self._granted = False, 0
            self._cond.notify_all()

    def step(self) -> None:
        """Allow one more step, and stay paused after it."""
        with self._cond:
            self._paused = True
            self._granted += 1
            self._cond.notify_all()

    def set_delay(self, seconds: float) -> None:
        with self._cond:
            self._delay_s = max(0.0, seconds)
            self._cond.notify_all()

    def wait_turn(self, should_stop: Callable[[], bool]) -> None:
        """Return when the next step may run: at once, after the delay, after a Step or
        Continue while paused, or as soon as should_stop() says so."""
        start = time.monotonic()
        with self._cond:
            while not should_stop():
                if self._paused:
                    if self._granted:
                        self._granted -= 1
                        return
                    self._cond.wait(_POLL_S)
                    continue
                left = self._delay_s - (time.monotonic() - start)
                if left <= 0:
                    return
                self._cond.wait(min(left, _POLL_S))
