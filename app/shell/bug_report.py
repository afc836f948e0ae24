"""A Python exception that reaches Qt's event loop (a bug in a slot) is Maskscope's bug: its
traceback goes to a log file, and the banner names the file, as `maskscope` does on the
command line (engine/internal_log.py). PySide only prints such an exception to a terminal
the user of a desktop window never sees."""

from __future__ import annotations

import sys
import threading
from types import TracebackType
from typing import Protocol

from engine.internal_log import bug_message


class _Reporter(Protocol):
    def report_problem(self, title: str, message: str) -> None: ...


def install(window: _Reporter) -> None:
    """Route uncaught exceptions to a log file and, on the GUI thread, to the banner."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: not a bug
            previous(kind, exc, tb)
            return
        text = bug_message(exc.with_traceback(tb), "the window")
        print(f"maskscope: internal error: {text}", file=sys.stderr)
        if threading.current_thread() is threading.main_thread():  # widgets: GUI thread only
            window.report_problem("Internal error", text)

    sys.excepthook = hook
