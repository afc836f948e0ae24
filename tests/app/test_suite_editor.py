"""The Suite pane's editor: cases and instances in tables, undo, validation in words, and
a suite saved and read back as it was edited. No model is needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QGuiApplication

from app.suite.cases_table import NEVER_MET_TINT, CaseRow
from app.suite.editor import SuiteEditor
from app.suite.expected_text import ExpectedTextError, expectations_text, parse_expected
from engine.suite.bundled import bundled_suite_path, load_bundled_suite
from engine.suite.format import Case, Expectation, Instance
from engine.suite.load import load_suite, suite_from_json


@pytest.fixture
def editor(qtbot) -> SuiteEditor:
    widget = SuiteEditor()
    qtbot.addWidget(widget)
    widget.resize(900, 500)
    widget.show()
    widget.set_suite(load_bundled_suite("currency"), str(bundled_suite_path("currency")), True)
    return widget


def _edit(editor: SuiteEditor, row: int, column: str, text: str) -> None:
    """Type into a cell as the user does: the table's item changes, and the row with it."""
    c = editor.cases.columns().index(column)
    editor.cases.item(row, c).setText(text)


def test_a_case_added_an_instance_pasted_and_marked_bad_save_and_read_back_equal(
    qtbot, editor: SuiteEditor, tmp_path: Path
) -> None:
    n_cases, n_instances = editor.cases.rowCount(), editor.instances.rowCount()
    assert editor.cases.columns() == ["id", "invoice", "expected", "description"]
    editor.cases.clearSelection()
    qtbot.mouseClick(editor.add_button, Qt.MouseButton.LeftButton)
    assert editor.cases.rowCount() == n_cases + 1
    _edit(editor, n_cases, "id", "chf")
    _edit(editor, n_cases, "invoice", "Rechnung 88\nTotal: CHF 120.00")
    _edit(editor, n_cases, "expected", "$.currency = UNKNOWN")
    assert editor.cases.rows[-1] == CaseRow(
        "chf", {"invoice": "Rechnung 88\nTotal: CHF 120.00"}, "$.currency = UNKNOWN"
    )

    QGuiApplication.clipboard().setText('{\n  "currency": "CHF"\n}')
    assert editor.paste_instance()
    assert editor.instances.rowCount() == n_instances + 1
    assert editor.instances.item(n_instances, 0).checkState() == Qt.CheckState.Checked
    editor.instances.selectRow(n_instances)
    editor.instances.mark_selected(False)
    assert editor.instances.item(n_instances, 0).checkState() == Qt.CheckState.Unchecked
    columns = editor.instances.columns()
    editor.instances.item(n_instances, columns.index("description")).setText("not in the enum")
    editor.instances.item(n_instances, columns.index("output")).setText('{"currency":"CHF"} ')
    assert editor.modified and "*" in editor.title.text()

    path = tmp_path / "mine.suite.json"
    assert editor.save_to(str(path)), editor.message.text()
    assert not editor.modified and editor.path == str(path) and not editor.read_only
    saved = load_suite(str(path))
    assert saved.cases[-1] == Case(
        "chf",
        {"invoice": "Rechnung 88\nTotal: CHF 120.00"},
        (Expectation("$.currency", "equals", "UNKNOWN"),),
    )
    assert saved.instances[-1] == Instance(
        valid=False, data={"currency": "CHF"}, description="not in the enum"
    )
    bundled = load_bundled_suite("currency")
    assert saved.cases[:-1] == bundled.cases  # the rest as it was
    assert saved.instances[:-1] == bundled.instances
    assert (saved.thresholds, saved.samples, saved.schema_text) == (
        bundled.thresholds,
        bundled.samples,
        bundled.schema_text,
    )

    again = SuiteEditor()
    qtbot.addWidget(again)
    assert again.open_file(str(path))
    assert again.build() == editor.build()
    # The cell shows the value as JSON now, which reads back the same.
    assert again.cases.rows[-1].expected == '$.currency = "UNKNOWN"'
    assert again.instances.rows[:-1] == editor.instances.rows[:-1]
    assert again.instances.rows[-1].output == '{"currency": "CHF"}'


def test_a_value_over_several_lines_shows_its_line_breaks(editor: SuiteEditor) -> None:
    delegate = editor.cases.itemDelegate()
    assert delegate.displayText("Invoice 5512\nGreen Valley", QLocale()) == (
        "Invoice 5512 ⏎ Green Valley"
    )


def test_add_and_remove_undo_and_redo(qtbot, editor: SuiteEditor) -> None:
    before = editor.cases.rows
    editor.cases.selectRow(0)
    editor.cases.add_case()  # after the selection
    assert editor.cases.rows[1].id == "case-1" and len(editor.cases.rows) == len(before) + 1
    editor.cases.selectRow(2)
    editor.cases.remove_selected()
    assert [r.id for r in editor.cases.rows] == ["usd", "case-1", "gbp", "yen", "no-currency"]
    qtbot.mouseClick(editor.undo_button, Qt.MouseButton.LeftButton)
    assert [r.id for r in editor.cases.rows] == [
        "usd",
        "case-1",
        "eur",
        "gbp",
        "yen",
        "no-currency",
    ]
    editor.undo_stack.undo()
    assert editor.cases.rows == before and not editor.modified
    editor.undo_stack.redo()
    assert len(editor.cases.rows) == len(before) + 1
    _edit(editor, 0, "id", "dollars")
    editor.undo_stack.undo()  # a cell edit undoes too
    assert editor.cases.rows[0].id == "usd" and editor.cases.item(0, 0).text() == "usd"


def test_duplicate_gives_the_copy_a_free_id(editor: SuiteEditor) -> None:
    editor.cases.selectRow(0)
    editor.cases.duplicate_selected()
    first, copy = editor.cases.rows[0], editor.cases.rows[1]
    assert copy.id == "usd-1" and (copy.vars, copy.expected) == (first.vars, first.expected)
    assert editor.validate() is not None


def test_a_suite_that_cannot_be_built_says_why_in_words(editor: SuiteEditor) -> None:
    assert editor.validate() is not None and not editor.message.isVisible()
    _edit(editor, 1, "id", "usd")
    assert "the case id 'usd' is used twice" in editor.message.text()
    assert editor.message.text().startswith("The suite cannot be run:")
    _edit(editor, 1, "id", "eur")
    assert not editor.message.isVisible()
    _edit(editor, 2, "expected", '$.currency = "GBP')
    assert "case 'gbp', expected:" in editor.message.text() and "not JSON" in editor.message.text()
    _edit(editor, 2, "expected", "$.currency ~ /[/")
    assert "not a regular expression" in editor.message.text()
    _edit(editor, 2, "expected", '$.currency = "GBP"')
    editor.prompt.setPlainText("{{invoice}} from {{customer}}")
    assert editor.cases.columns() == ["id", "invoice", "customer", "expected", "description"]
    assert "customer" in editor.message.text()  # no case gives it a value
    assert editor.validate() is None


def test_thresholds_and_samples_are_the_suites(editor: SuiteEditor) -> None:
    box = editor.thresholds["min_validity"]
    assert box.value() == 0.95
    box.on.setChecked(False)
    editor.thresholds["max_p95_latency_ms"].box.setValue(2500)
    editor.samples.setValue(3)
    suite = editor.build()
    assert suite.thresholds.min_validity is None
    assert suite.thresholds.max_p95_latency_ms == 2500
    assert suite.samples == 3 and editor.modified


def test_saved_elsewhere_a_suite_takes_its_schema_file_along(qtbot, tmp_path: Path) -> None:
    home, away = tmp_path / "home", tmp_path / "away"
    home.mkdir()
    away.mkdir()
    (home / "schema.json").write_text('{"type": "object"}\n')
    (home / "cases.jsonl").write_text('{"id": "a", "vars": {"x": "1"}}\n')
    data = {
        "format": "maskscope-suite",
        "version": 1,
        "schema_file": "schema.json",
        "prompt": "{{x}}",
        "cases_file": "cases.jsonl",
    }
    (home / "s.suite.json").write_text(json.dumps(data))
    editor = SuiteEditor()
    qtbot.addWidget(editor)
    assert editor.open_file(str(home / "s.suite.json"))
    assert editor.cases.rows[0].line == 1
    assert not editor.cases.item(0, 0).flags() & Qt.ItemFlag.ItemIsEditable
    assert editor.save_to(str(away / "s.suite.json")), editor.message.text()
    moved = load_suite(str(away / "s.suite.json"))
    assert moved.schema_file is None and moved.schema == {"type": "object"}
    assert [(c.id, c.vars) for c in moved.cases] == [("a", {"x": "1"})]


def test_expected_values_as_text_and_back() -> None:
    suite = load_bundled_suite("invoice")
    for case in suite.cases:
        text = expectations_text(case.expected)
        back = suite_from_json(
            {
                "format": "maskscope-suite",
                "version": 1,
                "schema": True,
                "prompt": "",
                "cases": [{"vars": {}, "expected": parse_expected(text)}],
            },
            ".",
        )
        assert back.cases[0].expected == case.expected, text
    assert parse_expected('$.a = USD; $.b ~ /x;y/ ; $.c = {"k": "a;b"}; $.d = 2 +- 0.5') == {
        "$.a": "USD",
        "$.b": {"regex": "x;y"},
        "$.c": {"equals": {"k": "a;b"}},
        "$.d": {"value": 2, "tolerance": 0.5},
    }
    for bad in ("$.a", "$.a = ", "= 1", "$.a ~ x", "$.a = 1 ± x", "$.a = 1; $.a = 2"):
        with pytest.raises(ExpectedTextError):
            parse_expected(bad)


def test_absent_forms_typed_in_a_cell_save_and_show_again(qtbot, editor, tmp_path) -> None:
    _edit(editor, 0, "expected", "$.currency absent;  $.note absent  or null")
    path = tmp_path / "absent.suite.json"
    assert editor.save_to(str(path)), editor.message.text()
    saved = load_suite(str(path))
    assert saved.cases[0].expected == (
        Expectation("$.currency", "absent", None),
        Expectation("$.note", "absent_or_null", None),
    )
    assert json.loads(path.read_text())["cases"][0]["expected"] == {
        "$.currency": {"absent": True},
        "$.note": {"absent_or_null": True},
    }
    again = SuiteEditor()
    qtbot.addWidget(again)
    assert again.open_file(str(path))
    assert again.cases.rows[0].expected == "$.currency absent; $.note absent or null"
    _edit(editor, 0, "expected", "$.currency absnt")  # a typo is a message, not a crash
    assert not editor.save_to(str(path))
    assert "'$.currency absnt' is not 'path = value'" in editor.message.text()


def test_a_required_key_expected_absent_is_a_warning(editor: SuiteEditor) -> None:
    """The currency suite's schema requires "currency": a case that expects it absent
    fails on every sample, and the message line says so, naming the case and the key."""
    first = editor.cases.rows[0].id
    _edit(editor, 0, "expected", "$.currency absent")
    assert editor.message.isVisible()
    assert editor.message.text() == (
        f"case {first!r}: $.currency is expected absent, but the schema requires it, "
        "so the case can never pass"
    )
    # The cell says it too, where the message line may be scrolled out of the pane.
    column = editor.cases.columns().index("expected")
    cell = editor.cases.item(0, column)
    assert cell.background().color() == NEVER_MET_TINT
    assert cell.toolTip().startswith(
        "<p>⚠ $.currency is expected absent, but the schema requires it: "
        "this case can never pass</p>"
    )
    assert editor.cases.item(1, column).background().style() == Qt.BrushStyle.NoBrush
    _edit(editor, 0, "expected", '$.currency = "USD"')
    assert not editor.message.isVisible()
    cell = editor.cases.item(0, column)
    assert cell.background().style() == Qt.BrushStyle.NoBrush and "⚠" not in cell.toolTip()
