"""Collect what llama.cpp says, instead of letting it scroll past on stderr.

llama.cpp reports through two channels: its log callback (model loading,
grammar init) and plain fprintf(stderr) (the GBNF parser). Both are captured
here so the reasons reach the user as messages, not terminal noise.
"""

from __future__ import annotations

import ctypes
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import llama_cpp

_LEVEL_ERROR = 4  # ggml_log_level: 3 is GGML_LOG_LEVEL_WARN, 4 GGML_LOG_LEVEL_ERROR
_listeners: list[list[tuple[int, str]]] = []  # one list per open capture() block
_fd_lock = threading.Lock()
_verbose = bool(os.environ.get("MASKSCOPE_VERBOSE"))


@llama_cpp.llama_log_callback
def _on_log(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
    message = text.decode("utf-8", errors="replace")
    for listener in _listeners:
        listener.append((level, message))
    if _verbose:
        sys.stderr.write(message)


def install() -> None:
    """Route llama.cpp's log callback here (idempotent, cheap)."""
    llama_cpp.llama_log_set(_on_log, ctypes.c_void_p(0))


@dataclass
class Captured:
    """What llama.cpp printed while a `capture()` block ran."""

    stderr: str = ""
    log: list[tuple[int, str]] = field(default_factory=list)

    @property
    def text(self) -> str:
        parts = [self.stderr.strip()] + [m.strip() for _, m in self.log]
        return "\n".join(p for p in parts if p)

    @property
    def errors(self) -> str:
        """The error lines: stderr output and error-level log messages."""
        parts = [self.stderr.strip()] + [m.strip() for lvl, m in self.log if lvl == _LEVEL_ERROR]
        return "\n".join(p for p in parts if p)


@contextmanager
def capture() -> Iterator[Captured]:
    """Capture fd 2 and llama.cpp's log for the duration of the block.

    fd 2 is process-wide, so blocks are serialised; keep them short.
    """
    install()
    result = Captured()
    with _fd_lock, tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        _listeners.append(result.log)
        try:
            yield result
        finally:
            _listeners.remove(result.log)
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            result.stderr = sink.read().decode("utf-8", errors="replace")
