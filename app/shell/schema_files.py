"""The window's schema file: open, save, recent files, a dropped file, the title, and
the question asked before unsaved changes would be replaced.

A mixin of MainWindow, so that the window keeps its methods (open_schema, save_schema,
load_example, ...) while their code lives here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog, QMenu

from app.shell.files import Unsaved, ask_save_path, ask_unsaved, dropped_schema, window_title
from engine.errors import MaskscopeError
from engine.examples import Example
from engine.files import read_text
from engine.runs.saved import write_atomically
from engine.schema.siblings import bundle_schema

if TYPE_CHECKING:
    from app.settings.panel import SettingsPanel
    from app.settings.store import SettingsStore
    from app.status import StatusBar
    from app.workbench.prompt_pane import PromptPane
    from app.workbench.schema_editor import SchemaEditor

SCHEMA_FILTER = "JSON Schema (*.json *.schema.json);;All files (*)"
PROMPT_FILTER = "Text (*.txt *.md);;All files (*)"
# File > New: an object that admits nothing yet, to add properties to.
NEW_SCHEMA = """{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {},
  "required": [],
  "additionalProperties": false
}
"""


class SchemaFiles:
    """What the window's file methods use of it."""

    schema_editor: SchemaEditor
    prompt_pane: PromptPane
    settings_panel: SettingsPanel
    status: StatusBar
    store: SettingsStore
    recent_menu: QMenu
    current_path: str | None
    schema_root: str | None
    current_example: str | None
    _draft_baseline: tuple[str, str] | None
    _saved_schema: str  # the schema as last opened or saved: what Discard goes back to

    if TYPE_CHECKING:  # the window's own, declared only: a stub here would hide Qt's

        def _report(self, title: str, message: str, cause: str = "file") -> None: ...
        def setWindowTitle(self, title: str) -> None: ...

    def _set_path(
        self, path: str | None, example: str | None = None, root: str | None = None
    ) -> None:
        """The schema's file, or the example it came from: both name the window. `root` is
        the folder the files its `$ref`s name are read from: by default the file's own."""
        self.current_path, self.current_example = path, example
        self.schema_root = root or (str(Path(path).parent) if path else None)
        self.schema_editor.set_file(path, self.schema_root)
        self.setWindowTitle(window_title(path, example))

    def bundled_schema(self, text: str) -> str:
        """The schema with the files its `$ref`s name bundled in (ExternalRefError, a
        MaskscopeError, for one that cannot be followed): what a run compiles."""
        if self.current_path is None:
            return text
        return bundle_schema(text, self.current_path, self.schema_root).text

    def follow_schema_ref(self, path: str, tokens: list[str] | None) -> None:
        """Ctrl+click on a `$ref` to another file: open it (asking first about unsaved
        changes) inside the same folder, and go where its pointer leads."""
        if self.open_schema(path, root=self.schema_root):
            self.schema_editor.ref_links.go_to(tokens)

    def ask_unsaved(self, before: str) -> Unsaved:
        """The question before unsaved schema changes would be replaced; tests patch it."""
        name = Path(self.current_path).name if self.current_path else "untitled schema"
        return ask_unsaved(self, self.current_example or name, before)

    def may_replace_schema(self, before: str) -> bool:
        """True when the schema has no unsaved changes, or the user saved or dropped them."""
        return self.answer_unsaved_schema(before) is not Unsaved.CANCEL

    def answer_unsaved_schema(self, before: str) -> Unsaved | None:
        """None when nothing is unsaved; SAVE once saved; DISCARD; CANCEL, also when the
        save failed. A DISCARD is the caller's to carry out (discard_schema_edits)."""
        if not self.schema_editor.editor.document().isModified():
            return None
        answer = self.ask_unsaved(before)
        if answer is Unsaved.SAVE and not self.save_schema():
            return Unsaved.CANCEL
        return answer

    def track_saved_schema(self) -> None:
        """Remember the schema each time it matches its file (opened, saved, an example
        loaded), starting with the text shown now."""
        self._saved_schema = self.schema_editor.text()
        self.schema_editor.editor.document().modificationChanged.connect(self._saved_changed)

    def _saved_changed(self, modified: bool) -> None:
        if not modified:
            self._saved_schema = self.schema_editor.text()

    def discard_schema_edits(self) -> None:
        """Put back the schema as last opened or saved, unmodified: on quitting, the draft
        and the autosave then keep that, not the edits the user chose to drop."""
        if self.schema_editor.editor.document().isModified():
            self.schema_editor.set_text(self._saved_schema)
            self.schema_editor.editor.document().setModified(False)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if dropped_schema(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        if (path := dropped_schema(event.mimeData())) is not None:
            event.acceptProposedAction()
            self.open_schema(path)

    def load_example(self, example: Example) -> None:
        """Replace schema and prompt as undoable edits: Ctrl+Z in either brings back the
        user's text, so an example never costs unsaved work."""
        if not self.may_replace_schema("loading the example"):
            return
        had_text = bool(self.schema_editor.text().strip())
        self.schema_editor.set_text(example.schema_text)
        self.schema_editor.editor.document().setModified(False)  # until the user edits it
        self.prompt_pane.set_text(example.prompt)
        # Save must not write the example over the user's file: Save asks for a name.
        self._set_path(None, example.title)
        panel = self.settings_panel
        panel.set_generation_settings(example.settings(panel.generation_settings()))
        hint = " — Undo restores the previous schema" if had_text else ""
        own = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in example.generation.items())
        own = f" (its own settings: {own})" if own else ""
        self.status.showMessage(f"Loaded example “{example.title}”{own}{hint}", 8000)

    def new_schema(self) -> bool:
        """A blank object schema and an empty prompt, as undoable edits, named Untitled."""
        if not self.may_replace_schema("starting a new schema"):
            return False
        self.schema_editor.set_text(NEW_SCHEMA)
        self.schema_editor.editor.document().setModified(False)  # nothing of the user's yet
        self.prompt_pane.set_text("")
        self._set_path(None)
        self.status.showMessage("New schema: Undo brings back the previous one", 8000)
        return True

    def open_prompt_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open prompt", "", PROMPT_FILTER)
        if path:
            self.open_prompt(path)

    def save_prompt_as(self) -> bool:
        path = self.ask_prompt_path()
        if not path:
            return False
        try:
            write_atomically(Path(path), self.prompt_pane.text())
        except OSError as e:
            self._report("Cannot save prompt", f"{path}: {e.strerror or e}")
            return False
        self.status.showMessage(f"Saved the prompt to {path}", 5000)
        return True

    def ask_prompt_path(self) -> str:
        """Where Save prompt as writes, with .txt added to a bare name; tests patch it."""
        return ask_save_path(self, "Save prompt as", "", PROMPT_FILTER, suffix=".txt")

    def open_schema_dialog(self) -> None:
        start = str(Path(self.current_path).parent) if self.current_path else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open schema", start, SCHEMA_FILTER)
        if path:
            self.open_schema(path)

    def open_schema(self, path: str, root: str | None = None) -> bool:
        if not self.may_replace_schema("opening another schema"):
            return False
        try:
            text = read_text(path, "schema")
        except MaskscopeError as e:
            self._report("Cannot open schema", e.message)
            return False
        self.schema_editor.set_text(text)  # undoable, like an example
        self.schema_editor.editor.document().setModified(False)
        self._set_path(path, root=root)
        self.store.add_recent_file(path)
        return True

    def keep_saved_draft(self) -> None:
        """Files opened from the command line replace the draft in the window, not in the
        settings: quitting keeps the stored draft unless the schema or prompt is edited."""
        self._draft_baseline = (self.schema_editor.text(), self.prompt_pane.text())

    def open_prompt(self, path: str) -> bool:
        try:
            text = read_text(path, "prompt")
        except MaskscopeError as e:
            self._report("Cannot open prompt", e.message)
            return False
        self.prompt_pane.set_text(text)  # undoable: Ctrl+Z brings the old prompt back
        return True

    def save_schema(self) -> bool:
        if self.current_path is None:
            return self.save_schema_as()
        return self._write_schema(self.current_path)

    def save_schema_as(self) -> bool:
        path = self.ask_schema_path()
        return bool(path) and self._write_schema(path)

    def ask_schema_path(self) -> str:
        """Where Save as writes, with .json added to a bare name; tests patch it."""
        return ask_save_path(self, "Save schema as", self.current_path or "", SCHEMA_FILTER)

    def _write_schema(self, path: str) -> bool:
        try:
            # Atomically: a full disk or a crash mid-save leaves the old file whole.
            write_atomically(Path(path), self.schema_editor.text())
        except OSError as e:
            self._report("Cannot save schema", f"{path}: {e.strerror or e}")
            return False
        self.schema_editor.editor.document().setModified(False)
        self._set_path(path)
        self.store.add_recent_file(path)
        self.status.showMessage(f"Saved {path}", 5000)
        return True

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self.store.recent_files()
        for path in recent:
            # A menu reads & as a shortcut mark: && shows a file name's own &.
            self.recent_menu.addAction(path.replace("&", "&&"), lambda p=path: self.open_schema(p))
        if recent:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list", self.store.clear_recent_files)
        else:
            self.recent_menu.addAction("(none)").setEnabled(False)
