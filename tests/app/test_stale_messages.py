"""Every message clears when its cause is gone, and each error has one home.

The scenario a new user hit: delete a brace, press Run, then Ctrl+Z. The red banner, the
output's error label, the problems table and the status bar all stayed.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from app.main_window import MainWindow
from app.workbench.problems_list import severity_color

CHECK_MS = 20_000  # the live check compiles on a helper thread; 2 busy cores are slow


def _current(window: MainWindow) -> bool:
    return window.schema_editor.is_current()


def _delete_last_brace(window: MainWindow) -> None:
    editor = window.schema_editor.editor
    at = editor.toPlainText().rindex("}")
    cursor = editor.textCursor()
    cursor.setPosition(at + 1)
    editor.setTextCursor(cursor)
    editor.setFocus()
    cursor.deletePreviousChar()  # as the user's Backspace: one undo step


def test_brace_run_undo_clears_every_message(qtbot, window, use_example, run_to_end) -> None:
    use_example(window, "currency")
    run_to_end(window)
    schema, output = window.schema_editor, window.output_view
    assert output.pretty.toPlainText()  # the previous run's JSON

    _delete_last_brace(window)
    qtbot.waitUntil(lambda: _current(window) and schema.has_errors(), timeout=CHECK_MS)
    assert not window.run()
    # The error's one home: the Problems list, with its marker in the editor.
    errors = [p for p in schema.problems() if p.severity == "error"]
    assert [p.kind for p in errors] == ["syntax"]
    assert schema.error_position is not None
    assert schema.editor.line_marks()
    # One pointer to it, in the output; the previous JSON is gone.
    assert output.not_run.isVisibleTo(output) and "see Problems" in output.not_run.text()
    assert output.raw.toPlainText() == output.pretty.toPlainText() == ""
    assert not output.issues.isVisibleTo(output)
    assert "see Problems" in schema.message.text() and "✗ 1 error" in schema.message.text()
    # Not in the banner, nor the status bar.
    assert not window.banner.isVisible()
    assert window.status.currentMessage() == ""
    assert window.panes.dock("problems").isVisible()

    qtbot.keyClick(schema.editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: _current(window) and not schema.has_errors(), timeout=CHECK_MS)
    assert schema.error_position is None
    assert not [p for p in schema.problems() if p.severity == "error"]
    assert schema.message.text().startswith("✓ will run")
    assert not output.not_run.isVisibleTo(output)
    assert output.badge.text() == "no run yet"
    assert not window.banner.isVisible()
    assert window.status.currentMessage() == ""
    bad = severity_color("error")
    assert all(color != bad for color, _ in schema.editor.line_marks().values())


def test_model_error_lives_in_the_banner_and_leaves_with_its_cause(
    qtbot, window: MainWindow, tmp_path, run_to_end
) -> None:
    window.settings_panel.set_model_path(str(tmp_path / "missing.gguf"))  # loads it
    run_to_end(window)
    assert window.banner.isVisible() and "missing.gguf" in window.banner.label.text()
    assert window.status.currentMessage() == ""  # the banner is its one home
    assert "model error" in window.output_view.badge.text()
    window.settings_panel.set_model_path("")  # back to the bundled model: it loads
    qtbot.waitUntil(lambda: not window.banner.isVisible(), timeout=60_000)


def test_results_from_older_inputs_are_out_of_date(
    qtbot, window: MainWindow, use_example, run_to_end
) -> None:
    use_example(window, "currency")
    run_to_end(window)
    output, chart = window.output_view, window.step_chart
    assert not output.is_stale() and not chart.stale
    prompt = window.prompt_pane.editor
    cursor = prompt.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    cursor.insertText(" Be brief.")
    qtbot.waitUntil(output.is_stale, timeout=3000)
    assert chart.stale
    assert "The prompt changed since this run." in output.stale.toolTip()
    prompt.undo()  # back to what the run was made from
    qtbot.waitUntil(lambda: not output.is_stale(), timeout=3000)
    assert not chart.stale
    window.settings_panel.seed.setValue(window.settings_panel.seed.value() + 1)
    qtbot.waitUntil(output.is_stale, timeout=3000)
    assert "The settings changed" in output.stale.toolTip()


MULTIPLE_OF_7 = (
    '{"type": "object", "properties": {"code": {"type": "integer", "multipleOf": 7}}, '
    '"required": ["code"], "additionalProperties": false}'
)


def test_a_violation_is_highlighted_and_tied_to_its_warning(
    qtbot, window: MainWindow, run_to_end
) -> None:
    window.settings_panel.compiler.setCurrentText("llamacpp")  # it skips multipleOf
    window.settings_panel.temperature.setValue(0.0)
    window.prompt_pane.set_text("The ticket code is 12.\nAs JSON:\n")
    schema = window.schema_editor
    schema.set_text(MULTIPLE_OF_7)
    qtbot.waitUntil(schema.is_current, timeout=CHECK_MS)
    warning = next(p for p in schema.problems() if p.kind == "unenforced")
    assert warning.keyword == "multipleOf"
    run_to_end(window)
    output = window.output_view
    result = window.last_result
    assert result is not None and result.parsed["code"] % 7 != 0, result.text
    [violation] = output.violations
    assert (violation.path, violation.keyword) == ("$.code", "multipleOf")
    assert violation.warning == warning
    start, end = violation.span
    assert result.text[start:end] == str(result.parsed["code"])
    [marked] = output.raw.extraSelections()  # the value is highlighted in the output
    assert marked.cursor.selectedText() == str(result.parsed["code"])
    item = output.issues.topLevelItem(output.issues.topLevelItemCount() - 1)
    assert "not enforced by the grammar" in item.text(1)
    output.issues.itemClicked.emit(item, 0)  # a click on the violation selects its warning
    assert schema.problems_list.current() == warning
    # and back: picking the warning selects the violation's row
    output.issues.clearSelection()
    schema.problems_list.sig_selected.emit(warning)
    assert item.isSelected()


def test_a_run_started_before_the_check_ends_reports_to_the_problems_list(
    qtbot, window: MainWindow
) -> None:
    schema = window.schema_editor
    schema.set_text('{"enum": []}')  # the check starts on its thread...
    with qtbot.waitSignal(window.sig_run_ended, timeout=120_000):
        assert window.run()  # ...and Run is pressed before it ends: the run's compile fails
    assert window.last_error[0] == "grammar"
    assert schema.has_errors()  # from the run, if the check has not ended yet
    assert not window.banner.isVisible()
    assert "see Problems" in window.output_view.not_run.text()
    qtbot.waitUntil(schema.is_current, timeout=CHECK_MS)
    errors = [p for p in schema.problems() if p.severity == "error"]
    assert len(errors) == 1  # the run's error and the check's are one entry, not two
