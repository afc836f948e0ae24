"""A grammar that crashes llama.cpp is a message in the window, which lives on."""

from __future__ import annotations

import pytest

import engine.grammar.compile
from app.main_window import MainWindow
from engine.settings import GenerationSettings

# Nested groups deep enough to overflow llama.cpp's recursive parser (see test_grammar_judge).
DEEP = "root ::= " + "(" * 100_000 + '"a"' + ")" * 100_000 + "\n"


def test_a_crashing_grammar_is_refused_in_the_window(
    qtbot, window: MainWindow, use_example, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No schema makes the llama.cpp converter emit such a grammar (it refuses deep nesting
    first), so the converter, the run's compiler whatever the default, hands over this one;
    the rest is the real engine: the editor's check and the run's compile judge it in a
    child, the llamacpp backend refuses it."""
    monkeypatch.setattr(engine.grammar.compile, "schema_to_gbnf", lambda schema: DEEP)
    use_example(window, "currency", max_tokens=8)
    panel = window.settings_panel
    generation = GenerationSettings(
        backend="llamacpp", compiler="llamacpp", temperature=0.0, max_tokens=8
    )
    panel.set_settings(panel.model_settings(), generation)
    # Refused at once when the live check has judged it already, else by the run's compile.
    if window.run():
        qtbot.waitSignal(window.sig_run_ended, timeout=120_000).wait()
    assert window.last_result is None
    kind, message = window.last_error
    assert kind == "grammar" and "SIGSEGV" in message
    # A grammar error's home is the Problems list; the output points there.
    assert any("SIGSEGV" in p.message for p in window.schema_editor.problems())
    assert not window.banner.isVisible()
    assert "see Problems" in window.output_view.not_run.text()
    assert window.run_action.isEnabled()
