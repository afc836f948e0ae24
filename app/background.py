"""Daemon threads for the window's background checks, waited for when Python exits.

A daemon thread lets the window quit without waiting on a slow check, but one still inside
llguidance's native code when the interpreter finalizes is torn down mid-call, and that
crashed the process (SIGSEGV while re-taking the GIL through Rust frames, about 1 exit in
4 when the window closed at once). So an exit waits a bounded time for them first.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from collections.abc import Callable

EXIT_WAIT_S = 5.0

_threads: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


def start_daemon(target: Callable[..., object], name: str, args: tuple = ()) -> threading.Thread:
    thread = threading.Thread(target=target, name=name, args=args, daemon=True)
    _threads.add(thread)
    thread.start()
    return thread


@atexit.register
def wait_for_background_threads(timeout_s: float = EXIT_WAIT_S) -> None:
    """Join the live ones, all within `timeout_s` together (a check that hangs longer is
    left to the interpreter, as before)."""
    import time

    deadline = time.monotonic() + timeout_s
    for thread in list(_threads):
        thread.join(max(0.0, deadline - time.monotonic()))


class NewestOnly:
    """Runs `work(*args)` on one daemon thread, the newest request first: one made while
    another runs replaces any still waiting."""

    def __init__(self, work: Callable[..., None], name: str) -> None:
        self._work = work
        self._name = name
        self._lock = threading.Lock()
        self._waiting: tuple | None = None
        self._running = False

    def submit(self, *args: object) -> None:
        with self._lock:
            self._waiting = args
            if self._running:
                return
            self._running = True
        start_daemon(self._drain, self._name)

    def _drain(self) -> None:
        while True:
            with self._lock:
                args, self._waiting = self._waiting, None
                if args is None:
                    self._running = False
                    return
            self._work(*args)
