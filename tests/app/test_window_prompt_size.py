"""A prompt the model's context cannot hold is a message in the window, never a native abort
(llama.cpp asserts on a batch larger than its own, which a short context makes small)."""

from __future__ import annotations

import pytest

from app.main_window import MainWindow
from engine.settings import GenerationSettings, ModelSettings

RUN_TIMEOUT_MS = 120_000


@pytest.mark.slow
def test_prompt_longer_than_the_context_is_a_message(qtbot, window: MainWindow) -> None:
    window.settings_panel.set_settings(ModelSettings(n_ctx=64), GenerationSettings(max_tokens=4))
    window.prompt_pane.editor.setPlainText("The invoice lists many items. " * 25)
    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        assert window.run()
    kind, message = window.last_error
    assert kind == "prompt" and "holds 64" in message
    assert window.banner.isVisible() and window.run_action.isEnabled()
