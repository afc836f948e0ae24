"""A long schema is coloured as it scrolls into view, not all at once: colouring every line
of a 1 MB schema held the GUI thread for 6 s."""

from __future__ import annotations

import json

from PySide6.QtGui import QTextCursor

from app.workbench.code_editor import LAZY_BLOCKS, CodeEditor


def _coloured(editor: CodeEditor, line: int) -> bool:
    return bool(editor.document().findBlockByNumber(line).layout().formats())


def _schema(n_props: int) -> str:
    props = {f"p{i}": {"type": "string"} for i in range(n_props)}
    return json.dumps({"type": "object", "properties": props}, indent=2)


def test_a_long_schema_is_coloured_where_it_is_seen(qtbot) -> None:
    editor = CodeEditor()
    qtbot.addWidget(editor)
    editor.colour_as_json()
    editor.resize(600, 400)
    editor.show()
    qtbot.waitExposed(editor)
    editor.setPlainText(_schema(LAZY_BLOCKS))  # 3 lines a property
    last = editor.document().blockCount() - 2
    assert _coloured(editor, 3) and not _coloured(editor, last)
    cursor = editor.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    editor.setTextCursor(cursor)  # scrolls there, as the user would
    qtbot.waitUntil(lambda: _coloured(editor, last), timeout=5_000)


def test_a_short_schema_is_coloured_at_once(qtbot) -> None:
    editor = CodeEditor()
    qtbot.addWidget(editor)
    editor.colour_as_json()
    editor.setPlainText(_schema(200))
    assert _coloured(editor, editor.document().blockCount() - 2)  # never shown, coloured
