"""The window's background checks are waited for, within a bound, when Python exits: one
torn down inside llguidance's native code crashed the process (tests/app/test_main.py's
corrupt-run exit, about 1 run in 4)."""

from __future__ import annotations

import threading
import time

from app.background import start_daemon, wait_for_background_threads


def test_exit_waits_for_a_running_check() -> None:
    release = threading.Event()
    thread = start_daemon(lambda: release.wait(0.3), "check")
    assert thread.daemon and thread.is_alive()
    wait_for_background_threads(5.0)
    assert not thread.is_alive()


def test_exit_waits_no_longer_than_its_bound() -> None:
    release = threading.Event()
    thread = start_daemon(release.wait, "hung check")
    started = time.monotonic()
    wait_for_background_threads(0.2)
    assert thread.is_alive() and time.monotonic() - started < 2.0  # left to the interpreter
    release.set()
    thread.join()
