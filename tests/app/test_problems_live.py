"""The live check drives the Problems pane: type a schema, see every problem located.

Widget-level (no model): a SchemaEditor with its Problems list and a prompt box. Each test
types a schema in turn (invalid JSON, several meta-schema errors, unenforced keywords, each
lint) and asserts the list entries, the gutter markers, a fix applied and undone, and that a
click jumps to the spot.
"""

from __future__ import annotations

import json
import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit

from app.settings.panel import SettingsPanel
from app.workbench.problems_list import severity_color
from app.workbench.schema_editor import SchemaEditor
from engine.model.paths import default_model_path
from engine.workbench.entries import Problem

CHECK_MS = 30_000  # the check compiles on a helper thread; 2 busy cores are slow
BROKEN_JSON = (
    '{\n  "type": "object",\n  "properties": {\n    "a": {"type": "string"}\n  }\n  "x": 1\n}'
)
META_ERRORS = """{
  "type": 5,
  "minLength": "x",
  "properties": {
    "a": {"maxItems": -1}
  }
}"""
UNENFORCED = """{
  "type": "object",
  "properties": {
    "code": {"type": "integer", "multipleOf": 7},
    "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3, "uniqueItems": true}
  },
  "required": ["code"],
  "additionalProperties": false
}"""
EVERY_LINT = """{
  "title": "Ticket",
  "description": "A support ticket",
  "type": "object",
  "properties": {
    "priority": {"enum": ["High", "high ", "Low"]},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}}
  },
  "required": ["priority", "tags", "owner"]
}"""
LINT_IDS = {
    "no-unknown-exit",
    "unbounded",
    "enum-near-duplicates",
    "additional-properties-implicit",
    "required-missing",
    "description-unseen",
}


@pytest.fixture
def editor(qtbot) -> SchemaEditor:
    schema = SchemaEditor()
    prompt = QPlainTextEdit()
    prompt.setPlainText("Triage this ticket as JSON:\n")
    schema.prompt_edit = prompt  # kept alive with the editor
    schema.set_prompt_source(prompt.toPlainText)
    schema.problems_list.set_editors(schema.editor, prompt)
    for w in (schema, prompt, schema.problems_list):
        qtbot.addWidget(w)
    schema.show()
    schema.problems_list.show()
    qtbot.waitExposed(schema.problems_list)
    return schema


def type_schema(qtbot, editor: SchemaEditor, text: str) -> list[Problem]:
    editor.editor.setPlainText(text)  # as typed: the debounced check starts by itself
    qtbot.waitUntil(editor.is_current, timeout=CHECK_MS)
    return editor.problems()


def marks(editor: SchemaEditor) -> dict[int, tuple[str, str]]:
    """Gutter markers by line: (severity whose colour the dot has, tooltip)."""
    colors = {severity_color(s).name(): s for s in ("error", "warning", "info")}
    return {n: (colors[c.name()], tip) for n, (c, tip) in editor.editor.line_marks().items()}


def test_invalid_json(qtbot, editor: SchemaEditor) -> None:
    problems = type_schema(qtbot, editor, BROKEN_JSON)
    assert [(p.severity, p.kind, p.line, p.column) for p in problems] == [("error", "syntax", 6, 3)]
    assert "Expecting ',' delimiter" in problems[0].message
    assert marks(editor) == {6: ("error", f"error: {problems[0].message}")}
    assert editor.error_position == (6, 3)
    assert editor.editor.extraSelections()  # the underline
    assert editor.message.text() == '✗ 1 error — <a href="problems">see Problems</a>'


def test_every_meta_schema_error_is_listed_and_located(qtbot, editor: SchemaEditor) -> None:
    problems = type_schema(qtbot, editor, META_ERRORS)
    assert [(p.kind, p.line) for p in problems] == [("schema", 2), ("schema", 3), ("schema", 5)]
    assert "-1 is less than the minimum of 0" in problems[2].message
    assert {n: s for n, (s, _) in marks(editor).items()} == {2: "error", 3: "error", 5: "error"}
    assert editor.message.text().startswith("✗ 3 errors")


def test_unenforced_keywords_per_compiler(qtbot, editor: SchemaEditor) -> None:
    editor.set_compiler("llamacpp")
    problems = type_schema(qtbot, editor, UNENFORCED)
    unenforced = [(p.keyword, p.line) for p in problems if p.kind == "unenforced"]
    assert unenforced == [("multipleOf", 4), ("uniqueItems", 5)]
    assert not editor.has_errors()
    line4 = marks(editor)[4]
    assert line4[0] == "warning" and "`multipleOf` is not enforced" in line4[1]
    assert editor.message.text().startswith("✓ will run (llamacpp compiler, llguidance backend")
    editor.set_compiler("maskscope")  # ours enforces both
    qtbot.waitUntil(editor.is_current, timeout=CHECK_MS)
    assert not [p for p in editor.problems() if p.kind == "unenforced"]


@pytest.mark.parametrize("schema", ['{"not": {}}', '{"enum": []}'])
def test_a_check_means_it_will_run(qtbot, editor: SchemaEditor, schema: str) -> None:
    problems = type_schema(qtbot, editor, schema)
    assert any(p.severity == "error" for p in problems)
    assert editor.message.text().startswith("✗")


def test_contradictions_are_errors_before_any_run(qtbot, editor: SchemaEditor) -> None:
    problems = type_schema(qtbot, editor, '{"type": "string", "minLength": 5, "maxLength": 2}')
    errors = [p for p in problems if p.severity == "error"]
    assert len(errors) == 1 and "minLength 5 is above maxLength 2" in errors[0].message


def test_each_lint_fires_with_its_marker(qtbot, editor: SchemaEditor) -> None:
    problems = type_schema(qtbot, editor, EVERY_LINT)
    lints = {p.id: p for p in problems if p.kind == "lint"}
    assert set(lints) == LINT_IDS
    shown = marks(editor)
    for p in lints.values():
        assert p.message in shown[p.line][1]
    assert lints["description-unseen"].severity == "info"
    assert lints["enum-near-duplicates"].line == 6
    kinds = {editor.problems_list.model.index(r, 1).data() for r in range(len(problems))}
    assert kinds >= LINT_IDS  # the Kind column names each lint


def test_a_click_jumps_to_the_spot(qtbot, editor: SchemaEditor) -> None:
    problems = type_schema(qtbot, editor, EVERY_LINT)
    row = next(i for i, p in enumerate(problems) if p.id == "required-missing")
    target = problems[row]
    view = editor.problems_list.view
    rect = view.visualRect(editor.problems_list.model.index(row, 0))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    cursor = editor.editor.textCursor()
    assert (cursor.blockNumber() + 1, cursor.positionInBlock() + 1) == (
        target.line,
        target.column,
    )


def _fix(qtbot, editor: SchemaEditor, lint_id: str) -> None:
    problem = next(p for p in editor.problems() if p.id == lint_id)
    assert problem.fix is not None
    assert editor.problems_list.select(problem)
    assert editor.problems_list.fix_button.isEnabled()
    editor.problems_list.fix_button.click()


def test_fix_applied_and_undone(qtbot, editor: SchemaEditor) -> None:
    type_schema(qtbot, editor, EVERY_LINT)
    _fix(qtbot, editor, "unbounded")
    assert '"maxItems": 10' in editor.text()
    json.loads(editor.text())  # still JSON
    qtbot.waitUntil(editor.is_current, timeout=CHECK_MS)
    assert "unbounded" not in {p.id for p in editor.problems()}
    editor.editor.undo()  # one step takes the whole fix back
    assert editor.text() == EVERY_LINT
    qtbot.waitUntil(editor.is_current, timeout=CHECK_MS)
    assert "unbounded" in {p.id for p in editor.problems()}


def test_prompt_fix_edits_the_prompt(qtbot, editor: SchemaEditor) -> None:
    type_schema(qtbot, editor, EVERY_LINT)
    before = editor.prompt_edit.toPlainText()
    _fix(qtbot, editor, "description-unseen")
    assert editor.text() == EVERY_LINT
    assert "A support ticket" in editor.prompt_edit.toPlainText()
    editor.prompt_changed()  # the window wires the prompt's textChanged to this
    qtbot.waitUntil(editor.is_current, timeout=CHECK_MS)
    assert "description-unseen" not in {p.id for p in editor.problems()}
    editor.prompt_edit.undo()
    assert editor.prompt_edit.toPlainText() == before


@pytest.mark.soak  # half a minute of compiling: make soak (tests/app/test_soak.py too)
def test_a_one_megabyte_schema_never_blocks_typing(qtbot, editor: SchemaEditor) -> None:
    props = {f"field_{i}": {"type": "string", "maxLength": 40} for i in range(22_000)}
    text = json.dumps({"type": "object", "properties": props}, indent=2)
    assert len(text) > 1_000_000
    editor.editor.setPlainText(text)
    started = time.perf_counter()
    editor.check_now()  # what the GUI thread does when the debounce fires
    request_ms = (time.perf_counter() - started) * 1000
    qtbot.waitUntil(editor.is_current, timeout=120_000)
    show_ms = editor.last_check_gui_ms  # showing the report: list, markers, summary
    print(f"\n1 MB schema: GUI thread {request_ms:.1f} ms to ask, {show_ms:.1f} ms to show")
    assert request_ms < 250 and show_ms < 250  # a synchronous compile would take seconds


BOUNDED = (
    '{"type": "object", "properties": {"currency": {"enum": ["USD", "EUR", "JPY"]}}, '
    '"required": ["currency"], "additionalProperties": false}'
)


def test_output_bound_beside_max_tokens(qtbot, editor: SchemaEditor) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    # Wired as the window wires them (app/shell/routing.py).
    editor.sig_report.connect(lambda report: panel.set_output_bound(report.output_bound))
    panel.max_tokens.valueChanged.connect(editor.set_max_tokens)
    editor.set_model(str(default_model_path()))  # its tokenizer counts the bound
    panel.max_tokens.setValue(3)
    problems = type_schema(qtbot, editor, BOUNDED)
    bound = editor.report.output_bound
    assert bound is not None and bound > 3
    assert "max-tokens-below-bound" in {p.id for p in problems}
    assert panel.bound_label.text() == f"⚠ needs {bound}"
    assert panel.bound_exceeded()
    panel.max_tokens.setValue(bound + 5)
    assert panel.bound_label.text() == f"≤ {bound} needed" and not panel.bound_exceeded()
    qtbot.waitUntil(editor.is_current, timeout=CHECK_MS)
    assert "max-tokens-below-bound" not in {p.id for p in editor.problems()}
