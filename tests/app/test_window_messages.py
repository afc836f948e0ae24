"""Messages in the window read as written: no HTML entities, no "1 valid tokens"."""

from __future__ import annotations

from PySide6.QtGui import QAccessible

from app.chart.step_chart import _describe
from app.main_window import MainWindow
from engine.records import Candidate, StepRecord

RUN_TIMEOUT_MS = 120_000


def shown_text(widget) -> str:
    """The text as a reader sees it (what Qt hands to screen readers): rich text rendered."""
    return QAccessible.queryAccessibleInterface(widget).text(QAccessible.Text.Name)


def test_grammar_error_under_the_editor_reads_as_written(qtbot, window: MainWindow) -> None:
    # The converter, pinned: its message has an apostrophe, which rich text could mangle.
    window.settings_panel.compiler.setCurrentText("llamacpp")
    window.schema_editor.set_text('{"$ref": "#anchor"}')  # valid, but the converter refuses it
    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        assert window.run()
    kind, message = window.last_error
    assert kind == "grammar" and "llama.cpp's" in message
    assert shown_text(window.schema_editor.message) == f"✗ Grammar error: {message}"
    window.settings_panel.compiler.setCurrentText("maskscope")  # ours refuses it too
    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        assert window.run()
    assert window.last_error == (
        "grammar",
        "the reference #anchor names no anchor in the schema ($)",
    )
    assert shown_text(window.schema_editor.message) == f"✗ Grammar error: {window.last_error[1]}"


def _record(n_valid: int, exact: bool = True) -> StepRecord:
    chosen = Candidate(7, "}", 0.9, 1.0, True)
    return StepRecord(
        step=3,
        token_id=7,
        token_text="}",
        token_piece="}",
        top_raw=(chosen,),
        top_masked=(chosen,),
        valid_mass=0.9,
        valid_mass_bound=0.0,
        n_valid=n_valid,
        n_valid_exact=exact,
        entropy=0.5,
        forward_ms=10.0,
        mask_ms=0.5,
        output_chars=17,
    )


def test_step_text_counts_valid_tokens_in_words() -> None:
    assert "· 1 valid token ·" in _describe(_record(1), 10)
    assert "· 2 valid tokens ·" in _describe(_record(2), 10)
    assert "· ≥ 1 valid token ·" in _describe(_record(1, exact=False), 10)
