"""The window closed mid-run, mid-suite and mid-model-load: it shuts down at once, with no
hang, and the draft and the autosave both hold the edit made just before closing.

Each test prints the measured shutdown (run with -s to see it). The bound asserted is a
generous 5 s, to catch a hang on a busy 2-core machine; the figures are the report's.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.decoding.worker import ModelCache
from app.main_window import MainWindow
from app.shell.autosave import read_state
from engine.suite.bundled import load_bundled_suite
from engine.suite.cache import RunCache

RUN_TIMEOUT_MS = 120_000
HANG_S = 5.0
LATEST = '{"type": "object", "properties": {"last": {"const": "edit"}}}'


def _close_and_time(window: MainWindow, what: str) -> float:
    """Edit the schema, close at once (before any autosave tick), and check what was kept."""
    window.schema_editor.editor.setPlainText(LATEST)
    window.prompt_pane.set_text("closing now")
    started = time.perf_counter()
    window.close()
    elapsed = time.perf_counter() - started
    print(f"\nshutdown {what}: {elapsed * 1000:.0f} ms")
    assert not window.controller._thread.isRunning()
    schema, prompt, _path = window.store.draft()
    assert (schema, prompt) == (LATEST, "closing now")
    state, clean = read_state(window.crash_restore.autosave.autosave_path)
    assert (state.schema, state.prompt, clean) == (LATEST, "closing now", True)
    return elapsed


def test_closed_mid_run(qtbot, window: MainWindow, use_example) -> None:
    use_example(window, "person", max_tokens=400)
    with qtbot.waitSignal(window.controller.sig_step, timeout=RUN_TIMEOUT_MS):
        assert window.run()
    assert window.controller.running
    assert _close_and_time(window, "mid-run") < HANG_S


def test_closed_mid_suite(qtbot, window: MainWindow, tmp_path: Path) -> None:
    full = load_bundled_suite("currency")
    suite = dataclasses.replace(full, samples=3, generation={**full.generation, "max_tokens": 30})
    pane = window.suites.pane
    pane.editor.set_suite(suite, None)
    pane.cache = RunCache(tmp_path / "cache")
    with qtbot.waitSignal(window.controller.sig_suite_progress, timeout=RUN_TIMEOUT_MS):
        assert pane.run()
    assert window.controller.running  # more samples to go
    assert _close_and_time(window, "mid-suite") < HANG_S


@pytest.fixture
def cold_cache() -> Iterator[ModelCache]:
    """A cache of its own: the window must load the model, not reuse the shared one."""
    cache = ModelCache()
    yield cache
    cache.close()


def test_closed_mid_model_load(qtbot, store, cold_cache: ModelCache) -> None:
    window = MainWindow(store=store, cache=cold_cache)  # it preloads the model at once
    qtbot.addWidget(window)
    loaded: list[object] = []
    window.controller.sig_model_loaded.connect(lambda *args: loaded.append(args))
    with qtbot.waitSignal(window.controller.sig_state, timeout=RUN_TIMEOUT_MS) as state:
        window.show()
    assert state.args == ["Loading model…"] and not loaded
    assert _close_and_time(window, "mid-model-load") < HANG_S
