"""What a native library writes to the process's stderr during one call, kept off the screen.

XGrammar's C++ code writes its warnings ("oneOf with overlapping ... branches ... falling back
to anyOf semantics") straight to file descriptor 2, with no setting to turn them off: a
`maskscope check` over a corpus printed thousands of them between its own lines. So the
calls that can warn run with fd 2 pointed at a temporary file, and the lines are handed back.
The redirection is process-wide, so it is held under a lock and only around calls that take
milliseconds; what another thread writes to stderr meanwhile lands in the same file and is
returned with the rest instead of being printed.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()


@contextmanager
def captured_stderr() -> Iterator[list[str]]:
    """Yields a list that holds, once the block ends, the lines written to fd 2 inside it."""
    lines: list[str] = []
    with _LOCK, tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            lines.extend(sink.read().decode("utf-8", "replace").splitlines())
