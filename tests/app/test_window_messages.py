"""Messages in the window read as written: no HTML entities, no "1 valid tokens"."""

from __future__ import annotations

from PySide6.QtGui import QAccessible

from app.chart.step_chart import _describe
from app.main_window import MainWindow
from engine.records import Candidate, StepRecord


def shown_text(widget) -> str:
    """The text as a reader sees it (what Qt hands to screen readers): rich text rendered."""
    return QAccessible.queryAccessibleInterface(widget).text(QAccessible.Text.Name)


def test_grammar_error_in_the_problems_list_reads_as_written(qtbot, window: MainWindow) -> None:
    # The converter, pinned: its message has an apostrophe, which rich text could mangle.
    schema = window.schema_editor
    window.settings_panel.compiler.setCurrentText("llamacpp")
    schema.set_text('{"$ref": "#anchor"}')  # valid, but the converter refuses it
    qtbot.waitUntil(lambda: schema.is_current() and schema.has_errors(), timeout=20_000)
    assert not window.run()  # the live check knew: no run starts
    kind, message = window.last_error
    assert kind == "grammar" and "llama.cpp's" in message
    assert schema.problems_list.model.index(0, 0).data() == message  # the error's one home
    assert shown_text(schema.message) == "✗ 1 error — see Problems"
    window.settings_panel.compiler.setCurrentText("maskscope")  # ours refuses it too
    qtbot.waitUntil(lambda: schema.is_current() and schema.has_errors(), timeout=20_000)
    assert not window.run()
    assert window.last_error == (
        "grammar",
        "the reference #anchor names no anchor in the schema ($)",
    )
    assert shown_text(window.output_view.not_run) == "not run: the schema has errors — see Problems"


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
