"""Where Maskscope keeps the traceback of its own bug: one file per error in platformdirs'
log folder, so that the user sees one line naming it, on the command line or in the window,
and a bug report can carry the whole trace."""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

import platformdirs

from engine.model.paths import APP_NAME

_MESSAGE_CHARS = 200  # of the exception's own words on the one line; the log has them all


def log_dir() -> Path:
    """platformdirs' log folder for Maskscope (~/.local/state/maskscope/log on Linux)."""
    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def write_log(exc: BaseException, context: str) -> Path:
    """The traceback and what was being done (`context`: a command line, a window action)
    in a new file in log_dir(); its path."""
    folder = log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = folder / f"internal-error-{stamp}-{os.getpid()}-{id(exc):x}.log"
    text = "".join(traceback.format_exception(exc))
    path.write_text(f"{context}\n\n{text}", encoding="utf-8")
    return path


def internal_error_text(exc: BaseException, context: str) -> str:
    """`internal error (Kind: words): a bug in Maskscope, not your input; the traceback is
    in PATH`: the command line's line. The log is written as a side effect, where it can be."""
    what, where = _parts(exc, context)
    return f"internal error ({what}): a bug in Maskscope, not your input; {where}"


def bug_message(exc: BaseException, context: str) -> str:
    """The same for the window, whose banner already says "Internal error"."""
    what, where = _parts(exc, context)
    return f"{what}. A bug in Maskscope, not your input; {where}"


def _parts(exc: BaseException, context: str) -> tuple[str, str]:
    words = " ".join(str(exc).split())[:_MESSAGE_CHARS]
    what = f"{type(exc).__name__}: {words}" if words else type(exc).__name__
    try:
        where = f"the traceback is in {write_log(exc, context)}"
    except OSError as err:  # a full or read-only disk must not hide the first error
        where = f"the traceback could not be written to {log_dir()}: {err.strerror or err}"
    return what, where
