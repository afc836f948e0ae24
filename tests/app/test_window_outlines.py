"""The outlines pair in the window: the Compiler box offers it and takes the outlines backend
with it, greying what cannot run with it; a run says while it builds the Index, Stop ends the
build, and a build past its time limit is a message in the banner."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

import engine.masking.outlines as outlines_backend
from app.main_window import MainWindow
from app.settings.panel import SettingsPanel
from engine.errors import GrammarError
from engine.model.llama import LoadCancelled
from engine.records import FinishReason
from engine.settings import GenerationSettings

BUILDING = "Building the Outlines index…"


def _offered(combo: QComboBox) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count()) if combo.model().item(i).isEnabled()]


def _tip(combo: QComboBox, text: str) -> str:
    return combo.itemData(combo.findText(text), Qt.ItemDataRole.ToolTipRole) or ""


def test_choosing_the_outlines_compiler_takes_its_backend_and_greys_the_rest(qtbot) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.set_generation_settings(GenerationSettings(backend="llamacpp", cross_check=True))
    assert "outlines" in _offered(panel.compiler)
    assert "outlines backend only" in _tip(panel.compiler, "outlines")

    panel.compiler.setCurrentText("outlines")
    assert panel.backend.currentText() == "outlines"
    assert _offered(panel.backend) == ["outlines"]
    assert "tens of seconds" in _tip(panel.backend, "outlines")
    assert _tip(panel.backend, "llamacpp") == (  # rich text, so that Qt wraps it
        "<p>The outlines compiler's regex runs on the outlines backend only: "
        "choose the outlines backend or another compiler.</p>"
    )
    # Nothing to cross-check: the box greys, and the run it makes does not ask for one.
    assert not panel.cross_check.isEnabled() and not panel.cross_check_with.isEnabled()
    assert "nothing to cross-check" in panel.cross_check.toolTip()
    settings = panel.generation_settings()
    assert (settings.compiler, settings.backend, settings.cross_check) == (
        "outlines",
        "outlines",
        False,
    )
    assert settings.problem() is None

    panel.compiler.setCurrentText("maskscope")
    assert panel.backend.currentText() == "llguidance"
    assert _offered(panel.backend) == ["llguidance", "llamacpp", "xgrammar"]
    assert "runs the outlines compiler's regex only" in _tip(panel.backend, "outlines")
    assert panel.cross_check.isEnabled() and panel.generation_settings().cross_check


def _hold_the_build(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """An Index build that lasts until its caller stops waiting: set when it started."""
    started = threading.Event()

    def index_for(regex, vocab, should_stop=None, limit_s=0.0):
        started.set()
        while not should_stop():
            threading.Event().wait(0.01)
        raise LoadCancelled("the outlines index was not built: stopped")

    monkeypatch.setattr(outlines_backend, "index_for", index_for)
    return started


def test_a_run_says_it_builds_the_index_and_stop_ends_the_build(
    qtbot, window: MainWindow, use_example, monkeypatch
) -> None:
    started = _hold_the_build(monkeypatch)
    use_example(window, "currency", compiler="outlines", backend="outlines", max_tokens=16)
    states: list[str] = []
    window.controller.sig_state.connect(states.append)
    assert window.run()
    qtbot.waitUntil(started.is_set, timeout=60_000)
    qtbot.waitUntil(lambda: window.status.currentMessage() == BUILDING, timeout=5_000)
    with qtbot.waitSignal(window.sig_run_ended, timeout=10_000):
        window.stop()
    assert BUILDING in states and "Decoding…" not in states
    result = window.last_result
    assert result is not None and result.finish_reason is FinishReason.CANCELLED
    assert "not built: stopped" in result.message
    assert window.last_error is None


def test_an_index_past_its_time_limit_is_a_message_in_the_banner(
    qtbot, window: MainWindow, use_example, run_to_end, monkeypatch
) -> None:
    def index_for(regex, vocab, should_stop=None, limit_s=0.0):
        raise GrammarError(
            "outlines-core's index did not compile in 300 s",
            "its build goes on in the background and is kept if it ends",
        )

    monkeypatch.setattr(outlines_backend, "index_for", index_for)
    use_example(window, "currency", compiler="outlines", backend="outlines", max_tokens=16)
    run_to_end(window)
    assert window.last_error is not None
    kind, message = window.last_error
    assert kind == "backend" and "did not compile in 300 s" in message
    assert "did not compile in 300 s" in window.banner.label.text()
    assert window.run_action.isEnabled()


def test_the_currency_example_runs_valid_on_the_outlines_pair(
    window: MainWindow, use_example, run_to_end
) -> None:
    use_example(window, "currency", compiler="outlines", backend="outlines", max_tokens=24)
    run_to_end(window)
    assert window.last_error is None, window.last_error
    result = window.last_result
    assert result is not None and result.valid, (result.finish_reason, result.text)
