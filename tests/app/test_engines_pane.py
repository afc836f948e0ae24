"""The Engines pane against the real engines: one row per target as engines_report has it.

Widget-level (no model): a code editor with the pane beside it. The schema is one that the
engines take differently: llguidance refuses its oneOf, llama.cpp and outlines-core skip
`minimum`, XGrammar skips a required name that is not a property, and OpenAI's strict mode
would refuse it (a property not in `required`, no `additionalProperties: false`).
Expectations are read from engines_report itself, not written down from memory.
"""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidgetItem

from app.engines.pane import (
    COLUMNS,
    ENGINE_COLUMN,
    EnginesPane,
    engine_text,
    entries_of,
    entry_of,
)
from app.engines.plugin import SHOW_KEYS
from app.engines.state import Outcome
from app.workbench.code_editor import CodeEditor
from engine.engines.report import EngineResult, engines_report

CHECK_MS = 90_000  # six engines, three in child processes (XGrammar's loads torch), 2 cores
SUBSCHEMA_N = '{"type": "number", "minimum": 0.5}'
DIFFERING = f"""{{
  "type": "object",
  "properties": {{
    "n": {SUBSCHEMA_N},
    "s": {{"oneOf": [{{"type": "string"}}, {{"type": "string", "maxLength": 3}}]}}
  }},
  "required": ["n", "extra"]
}}"""


@pytest.fixture(scope="module")
def report() -> dict[str, EngineResult]:
    return {r.target: r for r in engines_report(DIFFERING)}


@pytest.fixture
def pane(qtbot) -> EnginesPane:
    editor = CodeEditor()
    pane = EnginesPane(editor)
    pane.schema_edit = editor  # kept alive with the pane
    for w in (editor, pane):
        qtbot.addWidget(w)
    editor.show()
    pane.resize(900, 500)
    pane.show()
    qtbot.waitExposed(pane)
    return pane


def type_schema(qtbot, pane: EnginesPane, text: str) -> None:
    pane.schema_edit.setPlainText(text)  # as typed: the debounced check starts by itself
    assert not pane.is_current()
    qtbot.waitUntil(pane.is_current, timeout=CHECK_MS)


def rows(pane: EnginesPane) -> dict[str, QTreeWidgetItem]:
    tree = pane.tree
    items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    return {entry_of(item).target: item for item in items}


def child(item: QTreeWidgetItem, kind: str, keyword: str) -> QTreeWidgetItem:
    found = [
        item.child(i)
        for i in range(item.childCount())
        if entry_of(item.child(i)).kind == kind and entry_of(item.child(i)).keyword == keyword
    ]
    assert len(found) == 1, [entry_of(item.child(i)) for i in range(item.childCount())]
    return found[0]


def test_one_row_per_target_as_the_report_has_it(qtbot, pane, report) -> None:
    type_schema(qtbot, pane, DIFFERING)
    shown = rows(pane)
    assert list(shown) == list(report)
    for target, result in report.items():
        item = shown[target]
        assert item.text(0) == result.label
        assert item.text(1) == ("✓" if result.compiles else "✗")
        assert item.text(2) == str(len(result.unenforced))
        assert item.text(ENGINE_COLUMN) == engine_text(result)
        if result.message:
            assert json.dumps(result.message)[1:-1][:40] in json.dumps(item.toolTip(1))
        kids = [entry_of(item.child(i)) for i in range(item.childCount())]
        assert kids == entries_of(result)
        assert [(e.path, e.keyword) for e in kids if e.kind == "unenforced"] == [
            (u.path, u.keyword) for u in result.unenforced
        ]
    # The engines do differ on this schema: not every one takes it, and what they skip differs.
    assert len({r.compiles for r in report.values()}) == 2
    assert len({tuple(r.unenforced) for r in report.values()}) > 2
    ok = sum(r.compiles for r in report.values())
    assert pane.status.text().startswith(f"{ok} of {len(report)} take the schema")
    # The detail line says what the current row's tooltip says, the engine's own words.
    refused = next(t for t, r in report.items() if not r.compiles)
    pane.tree.setCurrentItem(shown[refused])
    assert report[refused].message in pane.detail.text()
    for column in range(len(COLUMNS)):
        assert pane.tree.headerItem().toolTip(column)


def test_a_click_selects_the_subschema(qtbot, pane, report) -> None:
    type_schema(qtbot, pane, DIFFERING)
    target = next(t for t, r in report.items() if any(u.keyword == "minimum" for u in r.unenforced))
    item = rows(pane)[target]
    item.setExpanded(True)
    row = child(item, "unenforced", "minimum")
    assert entry_of(row).path == "$.properties.n"
    pane.tree.scrollToItem(row)
    rect = pane.tree.visualItemRect(row)
    qtbot.mouseClick(pane.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert pane.tree.currentItem() is row
    assert pane.schema_edit.textCursor().selectedText() == SUBSCHEMA_N
    assert "`minimum` is not enforced" in pane.detail.text()


def test_the_openai_fix_applies_by_keyboard_and_the_rule_goes(qtbot, pane, report) -> None:
    lints = {lint.keyword: lint for lint in report["openai"].lints}
    assert lints["required"].fix is not None  # "s" is not listed
    type_schema(qtbot, pane, DIFFERING)
    openai = rows(pane)["openai"]
    pane.focus_list()
    pane.tree.setCurrentItem(openai)
    qtbot.keyClick(pane.tree, Qt.Key.Key_Return)  # opens the row (the window's arrows step)
    assert openai.isExpanded()
    first = openai.child(0)
    assert entry_of(first).kind == "lint"
    while entry_of(pane.tree.currentItem()).keyword != "required":
        qtbot.keyClick(pane.tree, Qt.Key.Key_Down)
    assert pane.fix_button.isEnabled()
    assert pane.fix_button.toolTip().startswith(lints["required"].fix.label)
    assert f"Fix: {lints['required'].fix.label}" in pane.detail.text()
    qtbot.keyClick(pane.tree, Qt.Key.Key_Period, Qt.KeyboardModifier.ControlModifier)
    assert json.loads(pane.schema_edit.toPlainText())["required"] == ["n", "extra", "s"]
    assert not pane.fix_button.isEnabled()  # the shown offsets are for the old text
    qtbot.waitUntil(pane.is_current, timeout=CHECK_MS)
    openai = rows(pane)["openai"]
    assert openai.isExpanded()  # kept across the recheck
    keywords = [entry_of(openai.child(i)).keyword for i in range(openai.childCount())]
    assert "required" not in keywords
    assert "additionalProperties" in keywords  # the other rule still stands
    pane.schema_edit.undo()  # one edit, undone as one
    assert pane.schema_edit.toPlainText() == DIFFERING


def test_invalid_json_is_one_line_and_nothing_stale(qtbot, pane) -> None:
    type_schema(qtbot, pane, '{"type": "object", "properties": {}}')
    assert pane.tree.topLevelItemCount() == 6
    type_schema(qtbot, pane, '{"type": ')
    assert pane.status.text() == "The schema is not valid JSON: line 1, column 10: Expecting value"
    assert pane.tree.topLevelItemCount() == 0
    assert pane.detail.text() == ""
    type_schema(qtbot, pane, '{"type": 5}')
    assert pane.status.text().startswith("The schema is not a valid JSON Schema: ")
    assert pane.tree.topLevelItemCount() == 0


def test_an_older_result_never_replaces_a_newer_one(qtbot, pane) -> None:
    type_schema(qtbot, pane, "[")
    shown = pane.status.text()
    pane._sig_done.emit(pane._number - 1, Outcome(problem="an older check"))
    qtbot.wait(50)
    assert pane.status.text() == shown
    # Two edits in a row: the first one's check, still running, is not shown at the end.
    pane.schema_edit.setPlainText('{"type": ')
    pane.check_now()
    pane.schema_edit.setPlainText("{")
    pane.check_now()
    assert pane.status.text() == "Checking 6 engines…"
    qtbot.waitUntil(pane.is_current, timeout=CHECK_MS)
    assert "line 1, column 2" in pane.status.text()


def test_a_hidden_pane_checks_when_shown(qtbot, pane) -> None:
    pane.hide()
    pane.schema_edit.setPlainText("[")
    qtbot.wait(600)  # past the debounce
    assert not pane.is_current() and pane.tree.topLevelItemCount() == 0
    assert "not valid JSON" not in pane.status.text()
    pane.show()
    qtbot.waitUntil(pane.is_current, timeout=CHECK_MS)
    assert "not valid JSON" in pane.status.text()


def test_the_window_shows_the_pane_by_keyboard(qtbot, window) -> None:
    dock = window.panes.dock("engines")
    pane = window.engines.pane
    assert dock.widget() is pane
    window.panes.show_pane("prompt")  # the Engines tab behind the prompt's
    qtbot.waitUntil(lambda: not pane.on_screen())
    window.schema_editor.editor.setPlainText("[")  # not checked while behind
    qtbot.wait(600)
    assert not pane.is_current()
    qtbot.keyClick(
        window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
    )
    assert window.engines.show_action.shortcut().toString() == SHOW_KEYS
    qtbot.waitUntil(pane.on_screen)
    qtbot.waitUntil(pane.tree.hasFocus)
    qtbot.waitUntil(pane.is_current, timeout=CHECK_MS)
    assert pane.problem == pane.status.text() and "not valid JSON" in pane.problem
    # In the window the arrow keys step through a run's tokens: Enter opens a row.
    window.schema_editor.editor.setPlainText('{"type": "object", "properties": {"a": {}}}')
    qtbot.waitUntil(pane.is_current, timeout=CHECK_MS)
    openai = rows(pane)["openai"]
    pane.tree.setCurrentItem(openai)
    qtbot.keyClick(pane.tree, Qt.Key.Key_Return)
    assert openai.isExpanded() and openai.childCount()
