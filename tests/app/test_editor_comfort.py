"""Editing comfort in the schema editor: indent on Enter, bracket pairs, find and replace,
and the Edit menu (clipboard, Format), each driven as a user would."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QTextCursor
from PySide6.QtWidgets import QTextEdit

from app.workbench import json_editing
from app.workbench.code_editor import CodeEditor
from tests.app.shell_window import open_window


@pytest.fixture
def editor(qtbot) -> CodeEditor:
    widget = CodeEditor()
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    widget.show()
    qtbot.waitExposed(widget)
    widget.setFocus()
    return widget


def _put(editor: CodeEditor, text: str, position: int | None = None) -> None:
    editor.setPlainText(text)
    cursor = editor.textCursor()
    cursor.setPosition(len(text) if position is None else position)
    editor.setTextCursor(cursor)


# --- the rules, on plain strings ---------------------------------------------------------
def test_enter_keeps_and_deepens_indent() -> None:
    assert json_editing.enter_text('    "a": 1,', "") == ("\n    ", 5)
    assert json_editing.enter_text('  "p": {', "") == ("\n    ", 5)
    assert json_editing.enter_text("  [", "]") == ("\n    \n  ", 5)
    assert json_editing.dedented("    ") == "  "
    assert json_editing.dedented("  x") is None


def test_brackets_in_strings_are_not_brackets() -> None:
    found = list(json_editing.brackets('{"a{": ["]"]}'))
    assert found == [(0, "{"), (7, "["), (11, "]"), (12, "}")]
    lines = [(0, '{"a": ['), (1, '  "}",'), (2, "  {}]"), (3, "}")]
    assert json_editing.find_match(iter(lines), 0, "{", True) == (3, 0)
    assert json_editing.find_match(reversed(lines[:3]), 4, "]", False) == (0, 6)
    assert json_editing.find_match(iter([(0, "{ [ ")]), 0, "{", True) is None


def test_pretty_keeps_numbers_order_and_duplicate_keys() -> None:
    text = '{"b":1e5,"a":[1,2.50],"b":{"x":[]},"long":[' + ",".join(['"abcdefgh"'] * 9) + "]}"
    pretty = json_editing.pretty(text)
    assert pretty.startswith('{\n  "b": 1e5,\n  "a": [1, 2.50],\n  "b": {\n    "x": []\n  },')
    assert '"long": [\n    "abcdefgh",' in pretty  # too wide for one line
    assert json_editing.pretty(pretty) == pretty
    assert json.loads(pretty) == json.loads(text)
    with pytest.raises(json.JSONDecodeError):
        json_editing.pretty('{"a": }')


# --- the editor --------------------------------------------------------------------------
def test_enter_indents_and_closing_bracket_dedents(qtbot, editor: CodeEditor) -> None:
    _put(editor, '{\n  "a": {}', position=len('{\n  "a": {'))
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.toPlainText() == '{\n  "a": {\n    \n  }'
    assert editor.textCursor().positionInBlock() == 4
    qtbot.keyClicks(editor, '"b": 1')
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.toPlainText().endswith('"b": 1\n    \n  }')
    editor.undo()  # one Enter is one undo step
    assert editor.toPlainText() == '{\n  "a": {\n    "b": 1\n  }'
    _put(editor, "{\n  [\n    ")
    qtbot.keyClicks(editor, "]")
    assert editor.toPlainText() == "{\n  [\n  ]"


def test_tab_indents_the_selected_lines(qtbot, editor: CodeEditor) -> None:
    _put(editor, "a\nb\nc")
    cursor = editor.textCursor()
    cursor.setPosition(0)
    cursor.setPosition(3, QTextCursor.MoveMode.KeepAnchor)  # a and part of b
    editor.setTextCursor(cursor)
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert editor.toPlainText() == "  a\n  b\nc"
    qtbot.keyClick(editor, Qt.Key.Key_Backtab)
    assert editor.toPlainText() == "a\nb\nc"


def test_bracket_pair_is_marked_beside_the_checks_markers(qtbot, editor: CodeEditor) -> None:
    text = '{"a": ["}", 1]}'
    _put(editor, text, position=len('{"a": ['))  # just after [
    assert editor.bracket_pair() == [(6, True), (13, True)]
    marker = QTextEdit.ExtraSelection()
    marker.cursor = QTextCursor(editor.document())
    editor.setExtraSelections([marker])
    _put(editor, text, position=1)  # just after {
    assert editor.bracket_pair() == [(0, True), (14, True)]
    assert len(editor.extraSelections()) == 1  # the checks see only their own
    assert [s.cursor.selectionStart() for s in editor.bracket_selections()] == [0, 14]
    _put(editor, '{"a": [1}', position=len('{"a": ['))
    assert editor.bracket_pair() == [(6, False)]
    _put(editor, '{"a": 1}', position=3)
    assert editor.bracket_pair() == [] and editor.bracket_selections() == []


def test_find_next_wraps_and_counts(qtbot, editor: CodeEditor) -> None:
    _put(editor, '{"type": "string", "Type": 1, "type": 2}', position=0)
    editor.open_find()
    bar = editor.find_bar
    assert bar.isVisible() and not bar.replace_edit.isVisible()
    qtbot.keyClicks(bar.find_edit, "type")
    assert editor.textCursor().selectedText() == "type"
    assert bar.count_label.text() == "1 of 3"
    qtbot.keyClick(bar.find_edit, Qt.Key.Key_Return)
    assert editor.textCursor().selectionStart() == 20
    bar.case.setChecked(True)  # searches again: "Type" no longer matches
    assert editor.textCursor().selectionStart() == 31
    assert bar.count_label.text() == "2 of 2"
    qtbot.keyClick(bar.find_edit, Qt.Key.Key_Return)  # wraps to the first
    assert editor.textCursor().selectionStart() == 2
    qtbot.keyClick(bar.find_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert editor.textCursor().selectionStart() == 31
    qtbot.keyClick(bar.find_edit, Qt.Key.Key_Escape)
    assert not bar.isVisible() and editor.hasFocus()


def test_replace_all_is_one_undo_step(qtbot, editor: CodeEditor) -> None:
    text = '{"a": "x", "b": "x", "c": "xx"}'
    _put(editor, text, position=0)
    editor.open_find(replace=True)
    bar = editor.find_bar
    assert bar.replace_edit.isVisible()
    bar.find_edit.setText("x")
    bar.replace_edit.setText("yz")
    assert bar.replace_all() == 4
    assert editor.toPlainText() == '{"a": "yz", "b": "yz", "c": "yzyz"}'
    editor.undo()
    assert editor.toPlainText() == text
    bar.find_next()
    bar.replace_one()  # replaces the selected match, selects the next
    assert editor.toPlainText() == '{"a": "yz", "b": "x", "c": "xx"}'
    assert editor.textCursor().selectedText() == "x"


# --- the Edit menu, in a window ----------------------------------------------------------
def test_esc_in_find_closes_it_and_does_not_stop(qtbot, store, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    window.activateWindow()
    qtbot.waitActive(window)
    window.edit_actions.find.trigger()
    bar = window.schema_editor.editor.find_bar
    assert bar.isVisible()
    qtbot.waitUntil(bar.find_edit.hasFocus)
    stopped: list[bool] = []
    window.stop_action.triggered.connect(lambda: stopped.append(True))
    window.stop_action.setEnabled(True)  # as during a run: Esc is also Stop's key
    qtbot.keyClick(bar.find_edit, Qt.Key.Key_Escape)
    assert not bar.isVisible() and not stopped
    window.stop_action.setEnabled(False)


def test_format_is_one_undoable_edit(qtbot, store, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    editor = window.schema_editor.editor
    editor.setPlainText('{"type":"object","properties":{"a":{"type":"number","minimum":1.0}}}')
    before = editor.toPlainText()
    assert window.edit_actions.format_schema()
    assert editor.toPlainText() == (
        '{\n  "type": "object",\n  "properties": {\n    "a": {\n'
        '      "type": "number",\n      "minimum": 1.0\n    }\n  }\n}\n'
    )
    window.undo_action.trigger()
    assert editor.toPlainText() == before
    editor.setPlainText('{"a": ')
    assert not window.edit_actions.format_schema()
    assert editor.toPlainText() == '{"a": '
    assert "Cannot format" in window.status.currentMessage()


def test_clipboard_actions_follow_the_focused_box(qtbot, store, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    prompt = window.prompt_pane.editor
    prompt.setPlainText("hello world")
    prompt.setFocus()
    qtbot.waitUntil(prompt.hasFocus)
    window.edit_actions.select_all.trigger()
    window.edit_actions.cut.trigger()
    assert prompt.toPlainText() == ""
    assert QGuiApplication.clipboard().text() == "hello world"
    window.edit_actions.paste.trigger()
    window.edit_actions.paste.trigger()
    assert prompt.toPlainText() == "hello worldhello world"
    assert window.undo_action.text() == "&Undo prompt edit"
    window.undo_action.trigger()
    assert prompt.toPlainText() == "hello world"
    window.schema_editor.editor.setFocus()
    qtbot.waitUntil(window.schema_editor.editor.hasFocus)
    assert window.undo_action.text() == "&Undo schema edit"
