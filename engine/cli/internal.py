"""An exception no reader turned into a reason is Maskscope's bug, not the user's input: one
line saying so with the path of a log file that keeps the traceback, and exit 2 (no test
result), never exit 1, which says the output or the suite failed."""

from __future__ import annotations

import sys

from engine.internal_log import internal_error_text


def internal_error_line(exc: BaseException, argv: list[str]) -> str:
    """The one line for stderr; the log is written as a side effect, where it can be."""
    return f"maskscope: {internal_error_text(exc, 'maskscope ' + ' '.join(argv))}"


def report_internal_error(exc: BaseException, argv: list[str]) -> None:
    print(internal_error_line(exc, argv), file=sys.stderr)
