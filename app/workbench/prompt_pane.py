"""The prompt the model continues; the schema constrains what it may write next."""

from __future__ import annotations

from PySide6.QtWidgets import QPlainTextEdit, QVBoxLayout, QWidget

from app.text_edit import replace_all_undoable, use_monospace


class PromptPane(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = QPlainTextEdit(self)
        self.editor.setObjectName("promptEditor")
        use_monospace(self.editor)
        self.editor.setPlaceholderText(
            "Text for the model to continue, e.g. a document followed by “Extract … as JSON:”"
        )
        self.editor.setToolTip(
            "The prompt. Generation starts right after its last character, "
            "so ending with “JSON:” and a newline works well."
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.editor, 1)

    def text(self) -> str:
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        replace_all_undoable(self.editor, text)
