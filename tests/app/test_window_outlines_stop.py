"""Stop during a real outlines-core Index build in the window: the build's child process is
gone within two seconds (it used to build on for up to 300 s), and the run ends with one line.

The schema's string of up to 300 characters makes outlines-core walk Gemma's 262,144 tokens
through hundreds of states (about 30 s on 2 cores); the const makes its regex one no cache
has seen, so a build must start.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest

from app.main_window import MainWindow
from engine.masking.outlines import INDEX_MEMORY
from engine.records import FinishReason
from tests.engine.test_outlines_index_cache import _gone, sandbox_children

BUILDING = "Building the Outlines index…"


def _index_children() -> set[int]:
    """The sandbox children building an Index (their command line names INDEX_MEMORY)."""
    cap = str(INDEX_MEMORY).encode()
    found = set()
    for pid in sandbox_children():
        try:
            if cap in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                found.add(pid)
        except OSError:
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_stop_kills_the_index_build_and_says_so_in_one_line(
    qtbot, window: MainWindow, use_example
) -> None:
    use_example(window, "currency", compiler="outlines", backend="outlines", max_tokens=8)
    schema = {
        "type": "object",
        "properties": {
            "id": {"const": uuid.uuid4().hex},
            "note": {"type": "string", "maxLength": 300},
        },
        "required": ["id", "note"],
    }
    window.schema_editor.editor.setPlainText(json.dumps(schema))
    before = sandbox_children()
    assert window.run()
    qtbot.waitUntil(lambda: window.status.currentMessage() == BUILDING, timeout=60_000)
    # The Index's child, told apart by its memory cap: the window's live check may compile
    # the same schema in a sandbox child of its own meanwhile.
    qtbot.waitUntil(lambda: bool(_index_children() - before), timeout=30_000)
    (child,) = _index_children() - before

    with qtbot.waitSignal(window.sig_run_ended, timeout=10_000):
        window.stop()
    stopped = time.monotonic()
    while not _gone(child) and time.monotonic() - stopped < 2:
        time.sleep(0.02)
    assert _gone(child), "the Index build goes on after Stop"
    result = window.last_result
    assert result is not None and result.finish_reason is FinishReason.CANCELLED
    assert result.message == "the outlines index was not built: stopped"
    assert window.last_error is None
