"""An exception no reader turned into a reason is Maskscope's bug, not the user's input: one
line saying so with the path of a log file that keeps the traceback, and exit 2 (no test
result), never exit 1, which says the output or the suite failed."""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

import platformdirs

from engine.model.paths import APP_NAME

_MESSAGE_CHARS = 200  # of the exception's own words on the one line; the log has them all


def log_dir() -> Path:
    """platformdirs' log folder for Maskscope (~/.local/state/maskscope/log on Linux)."""
    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def write_log(exc: BaseException, argv: list[str]) -> Path:
    """The traceback and the command line in a new file in log_dir(); its path."""
    folder = log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = folder / f"internal-error-{stamp}-{os.getpid()}.log"
    text = "".join(traceback.format_exception(exc))
    path.write_text(f"maskscope {' '.join(argv)}\n\n{text}", encoding="utf-8")
    return path


def internal_error_line(exc: BaseException, argv: list[str]) -> str:
    """The one line for stderr; the log is written as a side effect, where it can be."""
    words = " ".join(str(exc).split())[:_MESSAGE_CHARS]
    what = f"{type(exc).__name__}: {words}" if words else type(exc).__name__
    try:
        where = f"the traceback is in {write_log(exc, argv)}"
    except OSError as err:  # a full or read-only disk must not hide the first error
        where = f"the traceback could not be written to {log_dir()}: {err.strerror or err}"
    return f"maskscope: internal error ({what}): a bug in Maskscope, not your input; {where}"


def report_internal_error(exc: BaseException, argv: list[str]) -> None:
    print(internal_error_line(exc, argv), file=sys.stderr)
