"""The worker thread (and the llama.cpp threads it starts) runs below the GUI thread."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from app.decoding.worker import _yield_to_the_gui


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_worker_thread_yields_to_the_gui_thread():
    seen: dict[str, int] = {}

    def work() -> None:
        tid = threading.get_native_id()
        seen["before"] = os.getpriority(os.PRIO_PROCESS, tid)
        _yield_to_the_gui()
        seen["after"] = os.getpriority(os.PRIO_PROCESS, tid)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen["after"] == min(seen["before"] + 5, 19)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == seen["before"]
