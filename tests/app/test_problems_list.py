"""The Problems pane on its own: rows, jumps, fixes as one undo step, copy, gutter dots."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from app.workbench.code_editor import CodeEditor
from app.workbench.problems_list import ProblemsList, apply_edits, qt_length, summary
from engine.workbench.entries import Fix, Problem, TextEdit

SCHEMA = '{\n  "type": "object",\n  "properties": {\n    "name": {"type": "string"}\n  }\n}'
# "name" is at line 4, column 5; the string type at line 4, column 13.
ADD_MAX = Fix("add maxLength 100", (TextEdit(69, 69, ', "maxLength": 100'),))


def problems() -> list[Problem]:
    return [
        Problem(
            "warning",
            "lint",
            "the string has no maxLength",
            "$.properties.name",
            4,
            13,
            id="unbounded",
            fix=ADD_MAX,
        ),
        Problem(
            "info",
            "lint",
            "the model never sees descriptions",
            "$",
            1,
            1,
            id="description-unseen",
            fix=Fix("put the schema in the prompt", (TextEdit(0, 0, "Schema: {}\n"),), "prompt"),
        ),
        Problem("error", "schema", "5 is not of type 'string'", "$.type", 2, 3),
        Problem(
            "warning",
            "unenforced",
            "`format` is not enforced",
            "$.properties.name",
            4,
            5,
            keyword="format",
        ),
    ]


def make(qtbot) -> tuple[ProblemsList, QPlainTextEdit, QPlainTextEdit]:
    schema, prompt = CodeEditor(), QPlainTextEdit()
    schema.setPlainText(SCHEMA)
    prompt.setPlainText("Extract the name.")
    pane = ProblemsList()
    pane.set_editors(schema, prompt)
    for w in (schema, prompt, pane):
        qtbot.addWidget(w)
    pane.set_problems(problems())
    return pane, schema, prompt


def test_rows_errors_first_with_kind_and_place(qtbot) -> None:
    pane, _, _ = make(qtbot)
    model = pane.model
    rows = [[model.index(r, c).data() for c in range(3)] for r in range(model.rowCount())]
    assert rows == [
        ["5 is not of type 'string'", "schema", "2:3"],
        ["`format` is not enforced", "unenforced", "4:5"],
        ["the string has no maxLength", "unbounded", "4:13"],
        ["the model never sees descriptions", "description-unseen", "1:1"],
    ]
    assert model.index(0, 0).data(Qt.ItemDataRole.DecorationRole) is not None
    assert "Fix available: add maxLength 100" in model.index(2, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert pane.counts.text() == "✗ 1 error, ⚠ 2 warnings, ℹ 1 note"


def _click(qtbot, pane: ProblemsList, row: int) -> None:
    rect = pane.view.visualRect(pane.model.index(row, 0))
    qtbot.mouseClick(pane.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_click_and_enter_jump_to_the_spot(qtbot) -> None:
    pane, schema, _ = make(qtbot)
    pane.show()
    qtbot.waitExposed(pane)
    _click(qtbot, pane, 2)  # unbounded, 4:13
    cursor = schema.textCursor()
    assert (cursor.blockNumber() + 1, cursor.positionInBlock() + 1) == (4, 13)
    pane.view.setCurrentIndex(pane.model.index(0, 0))
    pane.view.setFocus()
    qtbot.keyClick(pane.view, Qt.Key.Key_Return)
    cursor = schema.textCursor()
    assert (cursor.blockNumber() + 1, cursor.positionInBlock() + 1) == (2, 3)


def test_fix_is_one_undoable_edit(qtbot) -> None:
    pane, schema, _ = make(qtbot)
    assert not pane.fix_button.isEnabled()  # nothing selected yet
    pane.select(problems()[0])
    assert pane.fix_button.isEnabled() and pane.fix_button.text() == "Fix: add maxLength 100"
    pane.fix_button.click()
    assert schema.toPlainText() == ADD_MAX.apply(SCHEMA)
    assert '"type": "string", "maxLength": 100}' in schema.toPlainText()
    schema.undo()  # one step brings the text back
    assert schema.toPlainText() == SCHEMA


def test_fix_for_the_prompt_edits_the_prompt(qtbot) -> None:
    pane, schema, prompt = make(qtbot)
    pane.select(problems()[1])
    pane.fix_current()
    assert prompt.toPlainText() == "Schema: {}\nExtract the name."
    assert schema.toPlainText() == SCHEMA
    prompt.undo()
    assert prompt.toPlainText() == "Extract the name."


def test_several_edits_apply_together_past_an_emoji(qtbot) -> None:
    edit = QPlainTextEdit()
    qtbot.addWidget(edit)
    text = '{"enum": ["🙂a", "b"]}'
    edit.setPlainText(text)
    fix = Fix("both", (TextEdit(10, 14, '"A"'), TextEdit(16, 19, '"B"')))
    apply_edits(edit, fix)
    assert edit.toPlainText() == fix.apply(text) == '{"enum": ["A", "B"]}'
    edit.undo()
    assert edit.toPlainText() == text
    assert qt_length("🙂") == 2


def test_copy_selected_or_all(qtbot) -> None:
    pane, _, _ = make(qtbot)
    pane.copy_selected()
    copied = QGuiApplication.clipboard().text().splitlines()
    assert len(copied) == 4
    assert copied[0] == "2:3: error: 5 is not of type 'string' [schema]"
    pane.select(problems()[0])
    pane.copy_selected()
    assert QGuiApplication.clipboard().text() == (
        "4:13: warning: the string has no maxLength [unbounded]"
    )


def test_selecting_a_problem_is_announced(qtbot) -> None:
    pane, _, _ = make(qtbot)
    pane.show()
    qtbot.waitExposed(pane)
    with qtbot.waitSignal(pane.sig_selected) as blocker:
        _click(qtbot, pane, 1)
    assert blocker.args[0].keyword == "format"


def test_summary_words() -> None:
    assert summary([]) == ""
    assert summary(problems()[:1]) == "⚠ 1 warning"


def test_gutter_marker_has_the_tooltip(qtbot) -> None:
    editor = CodeEditor()
    qtbot.addWidget(editor)
    editor.setPlainText(SCHEMA)
    editor.show()
    qtbot.waitExposed(editor)
    red = editor.palette().text().color()
    editor.set_line_marks({4: (red, "warning: the string has no maxLength")})
    block = editor.document().findBlockByNumber(3)
    y = int(editor.blockBoundingGeometry(block).translated(editor.contentOffset()).center().y())
    assert editor.mark_tooltip_at(y) == "warning: the string has no maxLength"
    first = editor.document().findBlockByNumber(0)
    y0 = int(editor.blockBoundingGeometry(first).translated(editor.contentOffset()).center().y())
    assert editor.mark_tooltip_at(y0) == ""
    cursor = QTextCursor(block)
    assert editor.cursorRect(cursor).contains(QPoint(editor.cursorRect(cursor).x(), y))


def test_a_recheck_keeps_the_selected_problem(qtbot) -> None:
    pane, _, _ = make(qtbot)
    pane.select(problems()[0])
    moved = [dataclasses.replace(p, line=p.line + 1) for p in problems()]  # a line added above
    pane.set_problems(moved)
    assert pane.current() == moved[0]
    pane.set_problems(problems()[1:])  # fixed: gone from the list, and from the selection
    assert pane.current() is None


def test_ctrl_period_applies_the_fix_from_the_editor_a_click_moved_to(qtbot) -> None:
    # issue 27, item 10: a click on a row moves the focus to the editor, where Ctrl+. did
    # nothing; it worked only while the Problems table had the focus.
    pane, schema, _ = make(qtbot)
    pane.show()
    schema.show()
    qtbot.waitExposed(schema)
    _click(qtbot, pane, 2)  # unbounded: its fix is selected, the cursor in the editor
    schema.activateWindow()
    schema.setFocus()
    qtbot.waitUntil(schema.hasFocus)
    qtbot.keyClick(schema, Qt.Key.Key_Period, Qt.KeyboardModifier.ControlModifier)
    assert schema.toPlainText() == ADD_MAX.apply(SCHEMA)


def test_a_long_fix_name_is_cut_on_the_button_and_whole_in_its_tooltip(qtbot) -> None:
    # issue 27, item 7: the Fix button grew to the whole fix name ("Let each field say
    # 'unknown'…"), widened the Problems pane and moved the window's column divider.
    pane, _, _ = make(qtbot)
    long_fix = Fix("Let each field say 'unknown': " + "add a null branch to it " * 6, ())
    pane.set_problems([dataclasses.replace(problems()[0], fix=long_fix)])
    pane.select(pane.model.problems[0])
    metrics = pane.fix_button.fontMetrics()
    assert metrics.horizontalAdvance(pane.fix_button.text()) <= 230
    assert pane.fix_button.text().endswith("…")
    assert long_fix.label in pane.fix_button.toolTip()
