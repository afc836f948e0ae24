"""SuiteEditor: a suite's cases, instances, prompt and thresholds, edited in tables and
boxes, opened from and saved to a suite file (docs/suite-format.md).

What the tables do not show (the schema, compiler, backend, generation settings, name)
is kept as the suite file had it. The suite is built with engine/suite/load.py from the
edited parts, so every message about it is the engine's, in words.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.plain_text import literal_html, plain_label
from app.shell.files import Unsaved, ask_save_path
from app.suite.cases_table import CaseRow, CasesTable
from app.suite.instances_table import InstanceRow, InstancesTable
from app.suite.narrow import CompactButton, FlowRow
from engine.errors import MaskscopeError, SuiteError
from engine.runs.saved import write_atomically
from engine.suite.format import Suite
from engine.suite.load import SAMPLES, load_suite, suite_from_json, suite_to_json, suite_warnings
from engine.suite.never_met import never_met_in
from engine.suite.template import placeholders

SUITE_FILTER = "Maskscope suite (*.suite.json *.json);;All files (*)"
# Threshold field -> its label, the largest value, decimals, step, unit.
_THRESHOLD_BOXES = {
    "min_validity": ("Minimum validity", 1.0, 2, 0.05, ""),
    "max_truncation": ("Maximum truncation", 1.0, 2, 0.05, ""),
    "min_field_accuracy": ("Minimum field accuracy", 1.0, 2, 0.05, ""),
    "max_p95_latency_ms": ("Maximum p95 latency", 3_600_000.0, 0, 500.0, " ms"),
}


class _Threshold(QWidget):
    """A threshold: checked, it holds the value in the box; unchecked, it is not checked."""

    def __init__(self, top: float, decimals: int, step: float, unit: str) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.on = QCheckBox(self)
        self.box = QDoubleSpinBox(self)
        self.box.setRange(0.0 if not unit else 1.0, top)
        self.box.setDecimals(decimals)
        self.box.setSingleStep(step)
        self.box.setSuffix(unit)
        self.on.toggled.connect(self.box.setEnabled)
        layout.addWidget(self.on)
        layout.addWidget(self.box, 1)

    def value(self) -> float | None:
        return self.box.value() if self.on.isChecked() else None

    def set_value(self, value: float | None) -> None:
        self.on.setChecked(value is not None)
        self.box.setEnabled(value is not None)
        if value is not None:
            self.box.setValue(value)


class SuiteEditor(QWidget):
    sig_changed = Signal()  # any edit, and a suite opened
    sig_path_changed = Signal(str)  # the file the suite is saved to; "" for none

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self.cases = CasesTable(self.undo_stack, self)
        self.instances = InstancesTable(self.undo_stack, self)
        self.prompt = QPlainTextEdit(self)
        self.samples = QSpinBox(self)
        self.samples.setRange(SAMPLES.low, SAMPLES.high)
        self.samples.setToolTip("How many times each case is run, with seeds seed, seed+1, …")
        self.thresholds = {key: _Threshold(*spec[1:]) for key, spec in _THRESHOLD_BOXES.items()}
        self.message = plain_label(QLabel(self))  # messages quote names and files
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title = QLabel(self)
        self.title.setWordWrap(True)  # a long path breaks after its slashes
        self.path: str | None = None
        self.read_only = False  # a bundled suite: Save asks for a new place
        self._base = Suite(name="suite", schema_text="{}\n", prompt="")
        self._base_dir = Path.cwd()
        self._dirty = False  # edits outside the undo stack: prompt, samples, thresholds
        self._built_rows: list[CaseRow] = []
        self._build()
        self._connect()

    # --- layout ----------------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        files = FlowRow(self)
        self.open_button = self._button("Open…", self.open_dialog, "Open a suite file")
        self.save_button = self._button("Save", self.save, "Save the suite (Ctrl+S in this pane)")
        self.save_as_button = self._button("Save as…", self.save_as_dialog, "Save to a new file")
        for button in (self.open_button, self.save_button, self.save_as_button):
            files.add_widget(button)
        self._files = files
        layout.addWidget(files)
        # On a line of its own, under the buttons: beside them it made the pane wider than
        # its dock (issue 27).
        layout.addWidget(self.title)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self._cases_tab(), "Cases")
        self.tabs.addTab(self._instances_tab(), "Instances")
        self.tabs.addTab(self._prompt_tab(), "Prompt && thresholds")
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.message)

    def add_file_button(self, text: str, slot: Any, tip: str) -> QPushButton:
        """A button beside Open and Save, for what the window adds (a suite of its own)."""
        button = self._button(text, slot, tip)
        self._files.insert_widget(0, button)
        return button

    def _button(self, text: str, slot: Any, tip: str) -> QPushButton:
        button = CompactButton(text, self)  # a row of them fits a narrow pane
        button.setToolTip(tip)
        button.clicked.connect(lambda _checked=False: slot())
        return button

    def _cases_tab(self) -> QWidget:
        tab = QWidget(self)
        layout = QVBoxLayout(tab)
        layout.setContentsMargins(0, 4, 0, 0)
        row = FlowRow(tab)
        self.add_button = self._button("Add case", self.cases.add_case, "A new case (Ins)")
        self.duplicate_button = self._button(
            "Duplicate", self.cases.duplicate_selected, "Copy the selected cases"
        )
        self.remove_button = self._button(
            "Remove", self.cases.remove_selected, "Remove the selected cases (Del)"
        )
        self.undo_button = self._button(
            "Undo", self.undo_stack.undo, "Undo the last table edit (Ctrl+Z)"
        )
        self.redo_button = self._button("Redo", self.undo_stack.redo, "Redo")
        self.undo_stack.canUndoChanged.connect(self.undo_button.setEnabled)
        self.undo_stack.canRedoChanged.connect(self.redo_button.setEnabled)
        self.undo_button.setEnabled(False)
        self.redo_button.setEnabled(False)
        for button in (self.add_button, self.duplicate_button, self.remove_button):
            row.add_widget(button)
        row.add_stretch()
        row.add_widget(self.undo_button)
        row.add_widget(self.redo_button)
        layout.addWidget(row)
        layout.addWidget(self.cases, 1)
        return tab

    def _instances_tab(self) -> QWidget:
        tab = QWidget(self)
        layout = QVBoxLayout(tab)
        layout.setContentsMargins(0, 4, 0, 0)
        row = FlowRow(tab)
        row.add_widget(
            self._button("Paste", self.paste_instance, "Add the output on the clipboard (Ctrl+V)")
        )
        row.add_widget(
            self._button("Mark good", lambda: self.instances.mark_selected(True), "Must accept")
        )
        row.add_widget(
            self._button("Mark bad", lambda: self.instances.mark_selected(False), "Must reject")
        )
        row.add_widget(self._button("Remove", self.instances.remove_selected, "Remove selected"))
        layout.addWidget(row)
        layout.addWidget(self.instances, 1)
        return tab

    def _prompt_tab(self) -> QWidget:
        tab = QWidget(self)
        form = QFormLayout(tab)
        self.prompt.setToolTip("The prompt template: {{name}} takes the case's value of name")
        self.prompt.setTabChangesFocus(True)
        form.addRow("Prompt template", self.prompt)
        form.addRow("Samples per case", self.samples)
        for key, (label, *_rest) in _THRESHOLD_BOXES.items():
            form.addRow(label, self.thresholds[key])
        return tab

    def _connect(self) -> None:
        for table in (self.cases, self.instances):
            table.sig_changed.connect(self._changed)
        # A bound slot, not a lambda: Qt drops it with this widget, before the stack it
        # owns says "clean" once more while it is deleted.
        self.undo_stack.cleanChanged.connect(self._clean_changed)
        self.prompt.textChanged.connect(self._prompt_edited)
        self.samples.valueChanged.connect(lambda _v: self._edited())
        for box in self.thresholds.values():
            box.on.toggled.connect(lambda _on: self._edited())
            box.box.valueChanged.connect(lambda _v: self._edited())

    def event(self, event: QEvent) -> bool:
        # The window's Save, Undo, Redo and Paste act on the schema and the prompt; with the
        # focus in these tables they are the suite's (a cell being edited keeps its own).
        if event.type() == QEvent.Type.ShortcutOverride and self._own_shortcut(event):
            event.accept()
            return True
        return super().event(event)

    def _own_shortcut(self, event: Any) -> bool:
        keys = QKeySequence.StandardKey
        if any(event.matches(k) for k in (keys.Save, keys.Undo, keys.Redo)):
            return True
        return event.matches(keys.Paste) and self.instances.hasFocus()

    def keyPressEvent(self, event: Any) -> None:
        if event.matches(QKeySequence.StandardKey.Save):
            self.save()
        elif event.matches(QKeySequence.StandardKey.Undo):
            self.undo_stack.undo()
        elif event.matches(QKeySequence.StandardKey.Redo):
            self.undo_stack.redo()
        elif event.matches(QKeySequence.StandardKey.Paste) and self.instances.hasFocus():
            self.paste_instance()
        elif event.key() == Qt.Key.Key_Insert and self.tabs.currentIndex() == 0:
            self.cases.add_case()
        elif event.key() == Qt.Key.Key_Delete and self.cases.hasFocus():
            self.cases.remove_selected()
        else:
            super().keyPressEvent(event)

    # --- the suite in and out --------------------------------------------------------------
    def set_suite(self, suite: Suite, path: str | None, read_only: bool = False) -> None:
        """Show `suite`; `path` is where Save writes (None or read_only: Save asks)."""
        self._base = suite
        self._base_dir = Path(suite.path).parent if suite.path else Path.cwd()
        self.path, self.read_only = path, read_only
        for widget in (self.prompt, self.samples):
            widget.blockSignals(True)
        self.prompt.setPlainText(suite.prompt)
        self.samples.setValue(suite.samples)
        for widget in (self.prompt, self.samples):
            widget.blockSignals(False)
        for key, box in self.thresholds.items():
            box.blockSignals(True)
            box.set_value(getattr(suite.thresholds, key))
            box.blockSignals(False)
        self.cases.variables = self._variables(suite)
        self.cases.reset([CaseRow.of(case) for case in suite.cases])
        self.instances.reset([InstanceRow.of(i) for i in suite.instances])
        self.undo_stack.clear()
        self._dirty = False
        self._show_title()
        self.validate()
        self.sig_path_changed.emit(path or "")

    def _variables(self, suite: Suite) -> list[str]:
        names = list(placeholders(suite.prompt))
        for case in suite.cases:
            names += [name for name in case.vars if name not in names]
        return names

    @property
    def title_name(self) -> str:
        return self._base.name

    @property
    def modified(self) -> bool:
        return self._dirty or not self.undo_stack.isClean()

    def suite_json(self, inline: bool = False) -> dict[str, Any]:
        """The suite file's JSON for the edits; `inline` writes the schema and the cases
        file's cases into it (a copy saved away from the files beside it)."""
        base = self._base
        if inline:
            base = dataclasses.replace(base, schema_file=None, cases_file=None)
        data = suite_to_json(base)
        prompt = self.prompt.toPlainText()
        rows = [r for r in self.cases.rows if inline or r.line is None]
        self._built_rows = rows  # $.cases[i] in a message is rows[i]
        data["prompt"] = prompt
        data["samples"] = self.samples.value()
        data["cases"] = [self._case_json(n, r) for n, r in enumerate(rows, 1)]
        data["instances"] = [row.to_json() for row in self.instances.rows]
        limits = {key: box.value() for key, box in self.thresholds.items()}
        data.pop("thresholds", None)
        if any(v is not None for v in limits.values()):
            data["thresholds"] = {k: v for k, v in limits.items() if v is not None}
        return data

    def _case_json(self, number: int, row: CaseRow) -> dict[str, Any]:
        try:
            return row.to_json()
        except MaskscopeError as e:
            name = f"{row.id!r}" if row.id else f"number {number}"
            raise MaskscopeError(f"case {name}, expected: {e.message}") from None

    def build(self, path: str | None = None) -> Suite:
        """The edited suite; MaskscopeError (in words) when it cannot be built."""
        target = path or self.path
        inline = target is not None and Path(target).parent.resolve() != self._base_dir.resolve()
        data = self.suite_json(inline=inline)
        return suite_from_json(data, self._base_dir, file=target or "")

    def validate(self) -> Suite | None:
        """Build the suite and say in the message line what is wrong, or what is odd."""
        try:
            suite = self.build()
        except MaskscopeError as e:
            self._say(f"The suite cannot be run: {self.in_words(e)}", error=True)
            self.cases.mark_never_met({})
            return None
        warnings = suite_warnings(suite)
        self._say("; ".join(warnings), error=False)
        whys: dict[str, list[str]] = {}
        for case_id, why in never_met_in(suite):
            whys.setdefault(case_id, []).append(why)
        self.cases.mark_never_met(whys)  # the cell as well as the line under the tables
        return suite

    def in_words(self, error: MaskscopeError) -> str:
        """The error with its place said as the tables show it: "case 'usd' (row 1)"
        rather than "$.cases[0]", and without this suite's own file name."""
        if not isinstance(error, SuiteError):
            return error.message
        where = error.where
        if found := re.match(r"\$\.cases\[(\d+)\](.*)", where):
            index = int(found[1])
            row = self._built_rows[index] if index < len(self._built_rows) else None
            name = f"case {row.id!r} (row {self.cases.rows.index(row) + 1})" if row else "a case"
            where = f"{name}{found[2]}"
        elif found := re.match(r"\$\.instances\[(\d+)\](.*)", where):
            where = f"instance {int(found[1]) + 1}{found[2]}"
        own = (self.path or "", "")
        place = ", ".join(p for p in (error.file if error.file not in own else "", where) if p)
        return f"{place}: {error.reason}" if place else error.reason

    def _say(self, text: str, error: bool) -> None:
        colour = "#b00020" if error else "#8a6d00"
        self.message.setStyleSheet(f"color: {colour};")
        self.message.setText(text)
        self.message.setVisible(bool(text))

    # --- files -----------------------------------------------------------------------------
    def open_file(self, path: str) -> bool:
        try:
            suite = load_suite(path)
        except MaskscopeError as e:
            self._say(f"Cannot open the suite: {e.message}", error=True)
            return False
        self.set_suite(suite, path)
        return True

    def may_discard(self, before: str = "opening another suite") -> bool:
        """Whether the edits may go: there are none, or the user saved or dropped them."""
        answer = self.answer_unsaved(before)
        if answer is Unsaved.DISCARD:
            self.discard_edits()
        return answer is not Unsaved.CANCEL

    def answer_unsaved(self, before: str) -> Unsaved | None:
        """None when nothing is unsaved; SAVE once saved; DISCARD (left to the caller:
        discard_edits); CANCEL, also when the save failed, so that nothing is lost."""
        if not self.modified:
            return None
        answer = self.ask_unsaved(before)
        if answer is Unsaved.SAVE and not self.save():
            return Unsaved.CANCEL
        return answer

    def ask_unsaved(self, before: str) -> Unsaved:
        """Save / Discard / Cancel about the suite's edits; tests patch it."""
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(
            self,
            "Unsaved changes",  # worded as the schema's question (app/shell/files.py)
            literal_html(
                f"The suite “{self._base.name}” has changes that are not saved.\n\n"
                f"Save them before {before}?"
            ),
            buttons.Save | buttons.Discard | buttons.Cancel,
            buttons.Save,
        )
        if answer == buttons.Save:
            return Unsaved.SAVE
        return Unsaved.DISCARD if answer == buttons.Discard else Unsaved.CANCEL

    def discard_edits(self) -> None:
        """Back to the suite as opened or last saved, unmodified."""
        if self.modified:
            self.set_suite(self._base, self.path, self.read_only)

    def snapshot(self) -> dict[str, Any] | None:
        """The unsaved suite, for the autosave: None when nothing is unsaved. The tables'
        rows as typed, so that a suite that cannot be built yet (a case added, its values
        not filled in) comes back as it was; the rest as its file had it."""
        if not self.modified:
            return None
        return {
            "base": suite_to_json(self._base),
            "base_dir": str(self._base_dir),
            "path": self.path,
            "read_only": self.read_only,
            "variables": list(self.cases.variables),
            "cases": [dataclasses.asdict(row) for row in self.cases.rows],
            "instances": [dataclasses.asdict(row) for row in self.instances.rows],
            "prompt": self.prompt.toPlainText(),
            "samples": self.samples.value(),
            "thresholds": {key: box.value() for key, box in self.thresholds.items()},
        }

    def restore_snapshot(self, saved: dict[str, Any]) -> bool:
        """Put back a snapshot's suite, marked unsaved; False when it cannot be read (its
        files gone, or another version's snapshot)."""
        path = saved.get("path") or None
        try:
            base = suite_from_json(saved["base"], saved["base_dir"], file=str(path or ""))
            cases = [CaseRow(**row) for row in saved["cases"]]
            instances = [InstanceRow(**row) for row in saved["instances"]]
            prompt, samples = str(saved["prompt"]), int(saved["samples"])
            limits = {key: saved["thresholds"].get(key) for key in self.thresholds}
        except (MaskscopeError, KeyError, TypeError, ValueError, AttributeError, OSError):
            return False
        self.set_suite(base, path, bool(saved.get("read_only")))
        self._base_dir = Path(saved["base_dir"])
        self.cases.variables = [str(v) for v in saved.get("variables") or []]
        self.cases.reset(cases)
        self.instances.reset(instances)
        for widget in (self.prompt, self.samples):
            widget.blockSignals(True)
        self.prompt.setPlainText(prompt)
        self.samples.setValue(samples)
        for widget in (self.prompt, self.samples):
            widget.blockSignals(False)
        for key, box in self.thresholds.items():
            box.blockSignals(True)
            box.set_value(limits[key])
            box.blockSignals(False)
        self._dirty = True  # not what the file holds
        self._changed()
        return True

    def open_dialog(self) -> None:
        if not self.may_discard():
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open suite", "", SUITE_FILTER)
        if path:
            self.open_file(path)

    def save(self) -> bool:
        if self.path is None or self.read_only:
            return self.save_as_dialog()
        return self.save_to(self.path)

    def save_as_dialog(self) -> bool:
        start = f"{self._base.name}.suite.json"
        path = ask_save_path(self, "Save suite", start, SUITE_FILTER)
        return bool(path) and self.save_to(path)

    def save_to(self, path: str) -> bool:
        """Write the suite to `path` atomically; False, with the reason shown, if it cannot."""
        try:
            suite = self.build(path)
            text = json.dumps(suite_to_json(suite), indent=2, ensure_ascii=False)
            write_atomically(Path(path), text + "\n")
        except (MaskscopeError, OSError) as e:
            reason = self.in_words(e) if isinstance(e, MaskscopeError) else str(e)
            self._say(f"Cannot save the suite: {reason}", error=True)
            return False
        self._base, self._base_dir = suite, Path(path).parent
        self.path, self.read_only = path, False
        self.undo_stack.setClean()
        self._dirty = False
        self._show_title()
        self.sig_path_changed.emit(path)
        return True

    # --- edits -----------------------------------------------------------------------------
    def paste_instance(self) -> bool:
        return self.instances.paste(QGuiApplication.clipboard().text())

    def _prompt_edited(self) -> None:
        used = placeholders(self.prompt.toPlainText())
        self.cases.set_variables([*used, *(n for n in self.cases.variables if n not in used)])
        self._edited()

    def _edited(self) -> None:
        self._dirty = True
        self._changed()

    def _changed(self) -> None:
        self._show_title()
        self.validate()
        self.sig_changed.emit()

    @Slot(bool)
    def _clean_changed(self, _clean: bool) -> None:
        self._show_title()

    def _show_title(self) -> None:
        where = self.path or "not saved"
        if self.read_only:
            where = "bundled example: Save asks for a new file"
        star = " *" if self.modified else ""
        self.title.setText(f"<b>{html.escape(self._base.name)}</b>{star} — {html.escape(where)}")
        self.title.setToolTip(literal_html(self._base.description))
