"""The Edit menu: undo and the clipboard act on the text box in use, find and Format on
the schema."""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QLineEdit, QMenu, QPlainTextEdit, QWidget

from app.workbench import json_editing
from app.workbench.find_bar import FIND, REPLACE
from app.workbench.prompt_pane import PromptPane
from app.workbench.schema_editor import SchemaEditor

TextBox = QPlainTextEdit | QLineEdit


class EditActions:
    """Builds the Edit menu. Undo/Redo follow the schema or prompt editor, whichever was
    last in use; Cut/Copy/Paste/Select all act on the focused text box, the schema editor
    when none has focus."""

    def __init__(
        self,
        parent: QWidget,
        menu: QMenu,
        schema: SchemaEditor,
        prompt: PromptPane,
        tell: Callable[[str], None],
    ) -> None:
        self._schema, self._prompt, self._tell = schema, prompt, tell
        self._last_editor: QPlainTextEdit = schema.editor
        std = QKeySequence.StandardKey

        def action(text: str, slot: Callable[[], object], keys: object, tip: str) -> QAction:
            a = QAction(text, parent)
            if isinstance(keys, QKeySequence.StandardKey):
                a.setShortcuts(keys)
            elif keys is not None:
                a.setShortcut(keys)
            a.setStatusTip(tip)
            a.setToolTip(tip)
            a.triggered.connect(slot)
            menu.addAction(a)
            return a

        self.undo = action("&Undo", lambda: self._editor().undo(), std.Undo, "Undo the last edit")
        self.redo = action("&Redo", lambda: self._editor().redo(), std.Redo, "Redo the undone edit")
        menu.addSeparator()
        self.cut = action("Cu&t", lambda: self._box().cut(), std.Cut, "Cut the selection")
        self.copy = action("&Copy", lambda: self._box().copy(), std.Copy, "Copy the selection")
        self.paste = action("&Paste", lambda: self._box().paste(), std.Paste, "Paste")
        self.select_all = action(
            "Select &all", lambda: self._box().selectAll(), std.SelectAll, "Select all the text"
        )
        menu.addSeparator()
        self.find = action(
            "&Find…", lambda: schema.editor.open_find(), FIND, "Find in the schema (Ctrl+F)"
        )
        self.replace = action(
            "R&eplace…",
            lambda: schema.editor.open_find(replace=True),
            REPLACE,
            "Find and replace in the schema (Ctrl+H)",
        )
        self.format = action(
            "F&ormat schema",
            self.format_schema,
            "Ctrl+Shift+F",
            "Pretty-print the schema, two spaces an indent; Undo takes it back",
        )
        for editor in (schema.editor, prompt.editor):
            editor.undoAvailable.connect(self._update_undo)
            editor.redoAvailable.connect(self._update_undo)
        QApplication.instance().focusChanged.connect(self._focus_changed)
        self._update_undo()

    def _editor(self) -> QPlainTextEdit:
        return self._last_editor

    def _box(self) -> TextBox:
        focus = QApplication.focusWidget()
        return focus if isinstance(focus, TextBox) else self._schema.editor

    def _focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if new in (self._schema.editor, self._prompt.editor):
            self._last_editor = new
            self._update_undo()

    def _update_undo(self) -> None:
        doc = self._last_editor.document()
        self.undo.setEnabled(doc.isUndoAvailable())
        self.redo.setEnabled(doc.isRedoAvailable())
        which = "schema" if self._last_editor is self._schema.editor else "prompt"
        self.undo.setText(f"&Undo {which} edit")
        self.redo.setText(f"&Redo {which} edit")

    def format_schema(self) -> bool:
        """Pretty-print the schema as one undoable edit; False when it is not JSON."""
        text = self._schema.text()
        try:
            pretty = json_editing.pretty(text)
        except json.JSONDecodeError as e:
            self._tell(f"Cannot format: JSON syntax error at line {e.lineno}: {e.msg}")
            return False
        if pretty != text:
            editor = self._schema.editor
            line = editor.textCursor().blockNumber()
            self._schema.set_text(pretty)
            block = editor.document().findBlockByNumber(line)
            cursor = editor.textCursor()
            cursor.setPosition(block.position() if block.isValid() else 0)
            editor.setTextCursor(cursor)
        self._tell("Formatted the schema")
        return True
