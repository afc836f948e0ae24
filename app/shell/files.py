"""Schema files in the window: names, the title, dropped files, and the question asked
before unsaved changes would be replaced."""

from __future__ import annotations

import enum
from pathlib import Path

from PySide6.QtCore import QMimeData, Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

SCHEMA_SUFFIXES = (".json",)  # *.schema.json ends in .json too
DEFAULT_SUFFIX = "json"


class Unsaved(enum.Enum):
    SAVE = "save"
    DISCARD = "discard"
    CANCEL = "cancel"


def with_json_suffix(path: str, suffix: str = DEFAULT_SUFFIX) -> str:
    """`myschema` becomes `myschema.json`; a name with a suffix of its own is kept."""
    return path if Path(path).suffix else f"{path}.{suffix}"


def window_title(path: str | None, example: str | None) -> str:
    """The file's name, the example's, or "untitled schema"; [*] is the modified mark."""
    if path:
        name = Path(path).name
    elif example:
        name = f"Example: {example}"
    else:
        name = "untitled schema"
    return f"{name}[*] — Maskscope"


def dropped_schema(mime: QMimeData) -> str | None:
    """The local .json file among dropped items, or None: only one schema is opened."""
    for url in mime.urls():
        if url.isLocalFile() and url.toLocalFile().lower().endswith(SCHEMA_SUFFIXES):
            return url.toLocalFile()
    return None


def ask_save_path(
    parent: QWidget, title: str, start: str, filters: str, suffix: str = DEFAULT_SUFFIX
) -> str:
    """A save dialog that adds .json (or `suffix`) to a bare name (and asks before
    overwriting that file); "" when cancelled."""
    dialog = QFileDialog(parent, title, start, filters)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setDefaultSuffix(suffix)
    if not dialog.exec() or not dialog.selectedFiles():
        return ""
    # A native dialog may ignore the default suffix: add it here too.
    return with_json_suffix(dialog.selectedFiles()[0], suffix)


def ask_unsaved(parent: QWidget, name: str, before: str) -> Unsaved:
    """Save / Discard / Cancel, before `before` ("closing", "opening a file", ...)."""
    box = QMessageBox(
        QMessageBox.Icon.Warning,
        "Unsaved changes",
        f"The schema “{name}” has changes that are not saved.",
        QMessageBox.StandardButton.Save
        | QMessageBox.StandardButton.Discard
        | QMessageBox.StandardButton.Cancel,
        parent,
    )
    box.setObjectName("unsavedQuestion")
    box.setTextFormat(Qt.TextFormat.PlainText)  # a file's name
    box.setInformativeText(f"Save them before {before}?")
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    box.setEscapeButton(QMessageBox.StandardButton.Cancel)
    answer = box.exec()
    if answer == QMessageBox.StandardButton.Save:
        return Unsaved.SAVE
    if answer == QMessageBox.StandardButton.Discard:
        return Unsaved.DISCARD
    return Unsaved.CANCEL
