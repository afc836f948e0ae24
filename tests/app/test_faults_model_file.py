"""The model file deleted or truncated during a run, and what the next run says.

The window runs on a copy of the default model, in a cache of its own, so the file can be
broken without touching the one every other test shares. A run in flight finishes on the
weights in memory (they are read, not mapped: tests/engine/test_faults_model_mmap.py) and
claims no provenance; the next run loads what the file holds now and says what is wrong,
the window stays usable and the schema as edited is kept.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.decoding.worker import ModelCache
from app.main_window import MainWindow
from engine.model.paths import default_model_path

RUN_TIMEOUT_MS = 120_000
EDITED = '{"type": "object", "properties": {"kept": {"type": "integer"}}, "required": ["kept"]}'


@pytest.fixture(scope="module")
def own_cache() -> Iterator[ModelCache]:
    cache = ModelCache()
    yield cache
    cache.close()


@pytest.fixture(scope="module")
def gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy for the module (250 MB); each test leaves it whole or restores it."""
    copy = tmp_path_factory.mktemp("model") / "copy.gguf"
    shutil.copyfile(default_model_path(), copy)
    return copy


@pytest.fixture
def copy_window(qtbot, store, own_cache: ModelCache, gguf: Path, use_example) -> MainWindow:
    win = MainWindow(store=store, cache=own_cache)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    use_example(win, "currency", max_tokens=6)
    win.settings_panel.model_path.setText(str(gguf))
    return win


def _break_on_first_step(window: MainWindow, damage: Callable[[], None]) -> None:
    def once(_record: object) -> None:
        window.controller.sig_step.disconnect(once)
        damage()

    window.controller.sig_step.connect(once)


def _next_run_refuses(qtbot, window: MainWindow, run_to_end, words: str, path: Path) -> None:
    window.schema_editor.editor.setPlainText(EDITED)
    run_to_end(window)
    assert window.last_result is None
    kind, message = window.last_error
    assert kind == "model" and words in message and str(path) in message, message
    assert window.banner.isVisible()
    assert window.run_action.isEnabled()
    assert window.schema_editor.text() == EDITED  # the edit survives the failed run


def _works_again(qtbot, window: MainWindow, run_to_end, gguf: Path) -> None:
    shutil.copyfile(default_model_path(), gguf.with_name("fresh.gguf"))
    os.replace(gguf.with_name("fresh.gguf"), gguf)  # a new file at the same path
    with qtbot.waitSignal(window.controller.sig_model_loaded, timeout=RUN_TIMEOUT_MS):
        run_to_end(window)
    assert window.last_error is None and window.last_result is not None
    assert window.last_result.n_tokens > 0
    assert window.session.provenance is not None  # the new file is the one the run used


@pytest.mark.slow
def test_truncated_during_a_run(qtbot, copy_window: MainWindow, gguf: Path, run_to_end) -> None:
    _break_on_first_step(copy_window, lambda: os.truncate(gguf, gguf.stat().st_size // 2))
    run_to_end(copy_window)
    result = copy_window.last_result
    assert result is not None and result.n_tokens > 1, copy_window.last_error
    assert copy_window.session.provenance is None  # its digest would name a file that is gone

    _next_run_refuses(qtbot, copy_window, run_to_end, "cannot load model", gguf)
    _works_again(qtbot, copy_window, run_to_end, gguf)


@pytest.mark.slow
def test_deleted_during_a_run_then_a_foreign_file_in_its_place(
    qtbot, copy_window: MainWindow, gguf: Path, run_to_end
) -> None:
    _break_on_first_step(copy_window, gguf.unlink)
    run_to_end(copy_window)
    assert copy_window.last_result is not None and copy_window.last_result.n_tokens > 1
    assert copy_window.session.provenance is None

    _next_run_refuses(qtbot, copy_window, run_to_end, "not found", gguf)
    gguf.write_bytes(b"<!DOCTYPE html><html>not found</html>")  # a download gone wrong
    _next_run_refuses(qtbot, copy_window, run_to_end, "not a GGUF", gguf)
