"""The worker thread through the window: a bug becomes a message, and Stop comes first."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import app.decoding.worker
from app.main_window import MainWindow
from engine.records import FinishReason
from engine.settings import ModelSettings

RUN_TIMEOUT_MS = 120_000


@pytest.mark.slow
def test_an_unexpected_error_is_a_message_and_the_thread_serves_on(
    window: MainWindow, use_example, run_to_end, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No input makes the real engine raise anything but a MaskscopeError (that would be a
    bug, and fixed), so this one stand-in is needed: the worker's compile_schema raises
    a RuntimeError on its first call and is the real one afterwards."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))  # the traceback's log file
    real: Callable[[str], Any] = app.decoding.worker.compile_schema
    calls: list[str] = []

    def buggy_once(text: str, compiler: str) -> Any:
        calls.append(text)
        if len(calls) == 1:
            raise RuntimeError("an engine bug")
        return real(text, compiler)

    monkeypatch.setattr(app.decoding.worker, "compile_schema", buggy_once)
    use_example(window, "currency", max_tokens=40)
    run_to_end(window)
    assert window.last_result is None
    kind, message = window.last_error
    assert kind == "internal"
    assert message.startswith("RuntimeError: an engine bug. A bug in Maskscope")
    assert "RuntimeError" in Path(message.rsplit("the traceback is in ", 1)[1]).read_text()
    assert window.banner.isVisible() and "an engine bug" in window.banner.label.text()
    assert window.run_action.isEnabled()

    run_to_end(window)  # the same worker thread takes the next run
    assert len(calls) == 2
    assert window.last_error is None
    assert window.last_result is not None and window.last_result.valid


@pytest.mark.slow
def test_stop_before_the_first_token_cancels_the_run(
    qtbot, window: MainWindow, use_example, run_to_end
) -> None:
    use_example(window, "person", max_tokens=200)
    # Other model settings: the worker must load that model before its first token, and
    # Stop, pressed in the same GUI-thread turn as Run, lands while it loads.
    generation = window.settings_panel.generation_settings()
    window.settings_panel.set_settings(ModelSettings(n_ctx=2048), generation)
    steps: list[object] = []
    window.controller.sig_step.connect(steps.append)
    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        assert window.run()
        window.stop()
    result = window.last_result
    assert result is not None, window.last_error
    assert result.finish_reason is FinishReason.CANCELLED
    assert result.message == "stopped before the first token"  # not even the prompt ran
    assert result.n_tokens == 0 and steps == []
    assert "stopped" in window.output_view.badge.text()

    run_to_end(window)  # the Stop was for that run only
    assert window.last_result is not None and window.last_result.n_tokens > 0


def test_the_loaded_model_is_lent_only_between_jobs_and_only_for_its_settings(
    window: MainWindow, use_example, run_to_end
) -> None:
    use_example(window, "currency", max_tokens=8)
    settings = window.settings_panel.model_settings()
    run_to_end(window)
    held = window.controller.loaded_model(settings)
    assert held is not None and held.n_vocab > 0
    assert window.controller.loaded_model(ModelSettings(n_ctx=settings.n_ctx + 512)) is None
    assert window.run()  # during a job the worker thread owns the model
    assert window.controller.loaded_model(settings) is None
    window.stop()


def test_the_model_preload_also_builds_the_grammars_view_of_the_vocabulary(
    qtbot, window: MainWindow
) -> None:
    """llguidance's token trie is built holding the GIL (the window stalls): at the load, so
    the first Run does not. The heap is settled then too: a full garbage collection that
    walked the model's objects stalled the window ~110 ms early in a run (engine/heap.py)."""
    from engine.masking import llguidance

    settings = ModelSettings(n_ctx=1024)  # a model of its own, so its trie is not built yet
    with qtbot.waitSignal(window.controller.sig_model_loaded, timeout=120_000):
        assert window.controller.load(settings)
    qtbot.waitUntil(
        lambda: (
            not window.controller.running and window.controller.loaded_model(settings) is not None
        ),
        timeout=120_000,
    )
    model = window.controller.loaded_model(settings)
    assert model in llguidance._tokenizers
    assert len(gc.get_objects()) < gc.get_freeze_count() / 10  # what a collection walks
