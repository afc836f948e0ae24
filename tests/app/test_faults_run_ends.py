"""Runs that end badly, in the window: the context full mid-run, a grammar with no token at
the first step, one that never lets the output end, and a worker that raises mid-run. Each
ends in a message where the run's result is shown, keeps the steps so far, and leaves Run
ready for a run that works."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import app.decoding.worker
from app.decoding.worker import ModelCache
from app.main_window import MainWindow
from engine.grammar.compile import CompiledSchema
from engine.records import FinishReason
from engine.settings import GenerationSettings, ModelSettings

LONG_STRING = '{"type": "string", "minLength": 1000}'  # it cannot close in these runs


def _issues(window: MainWindow) -> list[str]:
    tree = window.output_view.issues
    return [tree.topLevelItem(i).text(1) for i in range(tree.topLevelItemCount())]


def _steps_kept(window: MainWindow) -> None:
    result = window.last_result
    assert result is not None and len(window.session.records) == result.n_tokens
    assert window.output_view.raw.toPlainText() == result.text
    assert window.save_run_action.isEnabled()  # a failed run can still be saved and shown
    assert window.run_action.isEnabled()


@pytest.fixture
def small_context_cache() -> Iterator[ModelCache]:
    """Its own cache: a 256-token model would otherwise replace the one the tests share."""
    cache = ModelCache()
    yield cache
    cache.close()


def test_the_context_fills_mid_run(qtbot, store, small_context_cache, run_to_end) -> None:
    store.set_model_settings(ModelSettings(n_ctx=256))  # what its preload then loads
    window = MainWindow(store=store, cache=small_context_cache)
    qtbot.addWidget(window)
    window.schema_editor.editor.setPlainText(LONG_STRING)
    # A prompt of about 230 tokens leaves room for some 25 steps before llama.cpp's
    # smallest context (256) is full.
    window.prompt_pane.editor.setPlainText("Write one long JSON string. " * 38)
    window.settings_panel.set_settings(
        ModelSettings(n_ctx=256), GenerationSettings(temperature=0.0, max_tokens=200)
    )
    run_to_end(window)
    result = window.last_result
    assert result is not None, window.last_error
    assert result.finish_reason is FinishReason.ERROR and 0 < result.n_tokens < 60
    assert "context of 256 tokens is full" in result.message
    assert result.message in _issues(window)
    assert window.output_view.badge.text() == "✗ engine error"
    _steps_kept(window)


def test_a_grammar_that_never_ends_stops_at_max_tokens(
    window: MainWindow, use_example, run_to_end
) -> None:
    use_example(window, "currency", max_tokens=6)
    window.schema_editor.editor.setPlainText(LONG_STRING)
    run_to_end(window)
    result = window.last_result
    assert result is not None and result.finish_reason is FinishReason.MAX_TOKENS
    assert result.n_tokens == 6 and "cut off at max_tokens=6" in result.message
    assert window.output_view.badge.text() == "⚠ truncated at max_tokens"
    _steps_kept(window)


def test_a_grammar_with_no_token_at_the_first_step(
    window: MainWindow, use_example, run_to_end, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No schema reaches this grammar: each compiler refuses a schema that allows nothing
    (`false`, `{"not": {}}`, an empty range) before the run, and every JSON value starts
    with a character a token spells. So the worker's compile_schema hands over a real
    grammar that asks first for a NUL byte, which no Gemma token is; the model, backend and
    window are real."""
    nul_first = CompiledSchema({}, 'root ::= "\\x00"', "{}", compiler="llamacpp")
    monkeypatch.setattr(app.decoding.worker, "compile_schema", lambda text, compiler: nul_first)
    use_example(window, "currency", max_tokens=6, backend="llamacpp")
    run_to_end(window)
    result = window.last_result
    assert result is not None, window.last_error
    assert result.finish_reason is FinishReason.ERROR and result.n_tokens == 0
    assert result.message == "the grammar allows no token at all here"
    assert result.message in _issues(window)
    _steps_kept(window)

    monkeypatch.undo()
    run_to_end(window)
    assert window.last_error is None and window.last_result is not None
    assert window.last_result.n_tokens > 0


def test_the_worker_raises_mid_run(
    window: MainWindow, use_example, run_to_end, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A bug after some steps (no input makes the real engine raise anything but a
    MaskscopeError, so the fault is put in): the real generator runs two steps, then its
    wrapper raises, as a bug in the decoding loop would."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))  # the traceback's log file
    real = app.decoding.worker.generate

    def breaks_after_two(*args: Any) -> Iterator[Any]:
        steps = real(*args)
        yield next(steps)
        yield next(steps)
        steps.close()
        raise RuntimeError("a bug at step 2")

    monkeypatch.setattr(app.decoding.worker, "generate", breaks_after_two)
    use_example(window, "person", max_tokens=20)
    prompt = window.prompt_pane.text()
    run_to_end(window)
    assert window.last_result is None
    kind, message = window.last_error
    assert kind == "internal"
    assert message.startswith("RuntimeError: a bug at step 2. A bug in Maskscope")
    assert "RuntimeError" in Path(message.rsplit("the traceback is in ", 1)[1]).read_text()
    assert window.banner.isVisible() and "a bug at step 2" in window.banner.label.text()
    assert len(window.session.records) == 2  # what it showed before the bug stays shown
    assert window.run_action.isEnabled() and not window.stop_action.isEnabled()
    assert window.prompt_pane.text() == prompt

    monkeypatch.undo()
    run_to_end(window)
    result = window.last_result
    assert window.last_error is None and result is not None and result.n_tokens > 2
    assert result.finish_reason is not FinishReason.ERROR
