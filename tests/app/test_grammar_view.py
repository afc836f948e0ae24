"""The grammar view: the text each backend runs, copying it, and selection both ways."""

from __future__ import annotations

import json
from functools import cache

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.workbench import grammar_view
from app.workbench.grammar_view import GrammarView, follow_editor
from app.workbench.schema_editor import SchemaEditor
from engine.examples import load_example
from engine.grammar.compile import CompiledSchema, compile_schema
from engine.masking.llguidance import lark_text

SHOWN_MS = 20_000


@cache
def compiled(name: str, compiler: str = "maskscope") -> CompiledSchema:
    return compile_schema(load_example(name).schema_text, compiler)


@pytest.fixture
def view(qtbot) -> GrammarView:
    widget = GrammarView()
    qtbot.addWidget(widget)
    widget.resize(700, 500)
    widget.show()
    return widget


def show(qtbot, view: GrammarView, c: CompiledSchema, backend: str, ms: float = 12.0) -> None:
    with qtbot.waitSignal(view.sig_shown, timeout=SHOWN_MS):
        view.show_compiled(c, backend, ms)


def qt_offset(text: str, needle: str, extra: int = 1) -> int:
    """The Qt cursor position just inside `needle`'s first occurrence (UTF-16 units)."""
    offset = text.index(needle) + extra
    return len(text[:offset].encode("utf-16-le")) // 2


def test_gbnf_for_llamacpp_lark_for_llguidance(qtbot, view: GrammarView) -> None:
    c = compiled("invoice")
    show(qtbot, view, c, "llamacpp", 12.4)
    assert view.text.toPlainText() == c.gbnf
    rules = c.gbnf.count(" ::= ")
    info = view.info.text()
    assert "maskscope compiler, llamacpp backend" in info and "GBNF" in info
    assert f"{rules} rules" in info and f"{len(c.gbnf):,} characters" in info
    assert "compiled in 12 ms" in info
    show(qtbot, view, c, "llguidance")
    assert view.text.toPlainText() == lark_text(c.gbnf)
    assert "llguidance backend · Lark" in view.info.text()


def test_llguidance_compiler_shows_its_grammar_unmapped(qtbot, view: GrammarView) -> None:
    c = compiled("currency", "llguidance")
    show(qtbot, view, c, "llguidance")
    assert json.loads(view.text.toPlainText()) == json.loads(c.native or "")
    assert "llguidance JSON Schema grammar" in view.info.text()
    assert view.select_at_schema_position(qt_offset(c.text, '"EUR"')) is None


def test_copy_button_copies_the_grammar(qtbot, view: GrammarView) -> None:
    c = compiled("currency")
    assert not view.copy_button.isEnabled()
    show(qtbot, view, c, "llguidance")
    QGuiApplication.clipboard().setText("something else")
    qtbot.mouseClick(view.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == lark_text(c.gbnf)
    assert view.copy_button.text() == "Copied"


def test_unavailable_greys_out_the_last_grammar(qtbot, view: GrammarView) -> None:
    show(qtbot, view, compiled("currency"), "llamacpp")
    view.show_unavailable("No grammar: the schema has errors (see Problems).")
    assert "schema has errors" in view.info.text()
    assert not view.text.isEnabled() and not view.copy_button.isEnabled()
    # The same grammar again (a recheck for a prompt edit): shown at once, timed anew.
    show(qtbot, view, compiled("currency"), "llamacpp", 30.0)
    assert view.text.isEnabled() and view.copy_button.isEnabled()
    assert "compiled in 30 ms" in view.info.text()


@pytest.mark.parametrize(
    ("backend", "rule"), [("llamacpp", "currency"), ("llguidance", "CURRENCY")]
)
def test_schema_position_selects_rule(qtbot, view: GrammarView, backend: str, rule: str) -> None:
    c = compiled("currency")
    show(qtbot, view, c, backend)
    assert view.select_at_schema_position(qt_offset(c.text, '"EUR"')) == rule
    assert view.selected_rule == rule
    selected = view.text.textCursor().selectedText()
    assert selected.startswith(f"{rule} ::=" if backend == "llamacpp" else f"{rule}:")
    assert "UNKNOWN" in selected
    assert view.text.extraSelections()  # marked, whether or not the view has focus


def test_invoice_schema_positions_select_rules(qtbot, view: GrammarView) -> None:
    c = compiled("invoice")
    show(qtbot, view, c, "llamacpp")
    for needle, rule in (
        ('"minimum": 1', "quantity"),  # a keyword of a property: that property's rule
        ('"minItems"', "items"),  # the array property named items
        ('"type": "object",\n        "properties"', "items-2"),  # its item schema
        ('"required": ["invoice_number"', "value"),  # the root's own keyword
    ):
        assert view.select_at_schema_position(qt_offset(c.text, needle, 2)) == rule, needle


def test_odd_keys_both_ways(qtbot, view: GrammarView) -> None:
    text = '{"type": "object", "properties": {"a b": {"type": "integer"}}, "required": ["a b"]}'
    c = compile_schema(text)
    show(qtbot, view, c, "llguidance")
    rule = view.select_at_schema_position(qt_offset(text, '"integer"'))
    assert rule is not None and view.shown is not None
    path = view.shown.rules.path_for_rule(rule)
    assert path == "$.properties['a b']"
    start, end = view.schema_span(path)
    assert text[start:end] == '"a b"' and start < text.index("required")


def test_grammar_position_chooses_schema_path(qtbot, view: GrammarView) -> None:
    c = compiled("invoice")
    show(qtbot, view, c, "llamacpp")
    # The `quantity` name inside its key-value rule, not the kv rule around it.
    line = next(x for x in c.gbnf.splitlines() if x.startswith("kv-") and "quantity" in x)
    at = c.gbnf.index(line) + line.rindex(" quantity ") + 2
    with qtbot.waitSignal(view.sig_path_chosen) as chosen:
        cursor = view.text.textCursor()
        cursor.setPosition(at)
        view.text.setTextCursor(cursor)
    assert chosen.args == ["$.properties.items.items.properties.quantity"]
    assert view.selected_rule == "quantity"
    assert "quantity holds $.properties.items.items.properties.quantity" in view.rule_tooltip(at)
    kv_tip = view.rule_tooltip(c.gbnf.index(line))
    assert "is part of $.properties.items.items.properties.quantity" in kv_tip
    object_tip = view.rule_tooltip(c.gbnf.index("\nobject ::=") + 1)
    assert object_tip.startswith("object is part of $.properties.items.items —")
    assert "shared" in view.rule_tooltip(c.gbnf.index("\nws ::=") + 1)
    start, end = view.schema_span("$.properties.items.items.properties.quantity")
    assert c.text[start:end] == '"quantity"'


def test_positions_past_astral_characters(qtbot, view: GrammarView) -> None:
    # 😀 is two UTF-16 units for Qt and one character for Python.
    text = '{"description": "😀😀", "properties": {"a": {"type": "integer"}}}'
    c = compile_schema(text)
    show(qtbot, view, c, "llamacpp")
    assert view.select_at_schema_position(qt_offset(text, '"a"')) == "a"
    start, end = view.schema_span("$.properties.a")
    assert (start, end) == (qt_offset(text, '"a"', 0), qt_offset(text, '"a"', 3))


# --- wired to the schema editor ------------------------------------------------------------
@pytest.fixture
def wired(qtbot, view: GrammarView) -> SchemaEditor:
    editor = SchemaEditor()
    qtbot.addWidget(editor)
    editor.show()
    follow_editor(view, editor)
    with qtbot.waitSignal(view.sig_shown, timeout=SHOWN_MS):
        editor.set_text(load_example("currency").schema_text)
    return editor


def test_updates_after_an_edit(qtbot, view: GrammarView, wired: SchemaEditor) -> None:
    assert '"\\"GBP\\""' in view.grammar_text()
    with qtbot.waitSignal(view.sig_shown, timeout=SHOWN_MS):
        wired.set_text(wired.text().replace('"GBP", ', ""))
    assert "GBP" not in view.grammar_text() and '"\\"EUR\\""' in view.grammar_text()
    with qtbot.waitSignal(wired.sig_report, timeout=SHOWN_MS):
        wired.set_text(wired.text().replace("{", "", 1))  # not JSON: the old grammar greys
    assert not view.text.isEnabled() and "GBP" not in view.grammar_text()


def test_editor_and_grammar_select_each_other(qtbot, view: GrammarView, wired: SchemaEditor):
    text = wired.text()
    cursor = wired.editor.textCursor()
    cursor.setPosition(qt_offset(text, '"GBP"'))
    wired.editor.setTextCursor(cursor)
    assert view.selected_rule == "CURRENCY"  # the default backend is llguidance
    # Back: the root rule's line selects the schema's first character; the currency rule,
    # its key in `properties`.
    grammar = view.grammar_text()
    for needle, selected in (("start:", "{"), ("CURRENCY:", '"currency"')):
        cursor = view.text.textCursor()
        cursor.setPosition(qt_offset(grammar, needle, 0))
        view.text.setTextCursor(cursor)
        assert wired.editor.textCursor().selectedText() == selected
    # The editor's cursor, moved by the view, does not move the view back: the object rule
    # belongs to the root schema, whose own rule is another.
    cursor = view.text.textCursor()
    cursor.setPosition(qt_offset(grammar, "\nobject:"))
    view.text.setTextCursor(cursor)
    assert wired.editor.textCursor().selectedText() == "{"
    assert view.selected_rule == "object"


def test_a_hidden_pane_is_filled_when_shown(qtbot, view: GrammarView) -> None:
    show(qtbot, view, compiled("currency"), "llamacpp")
    view.hide()  # behind another tab
    view.show_compiled(compiled("invoice"), "llamacpp", 5.0)
    qtbot.waitUntil(lambda: view._pending is not None, timeout=SHOWN_MS)
    assert view.text.toPlainText() == compiled("currency").gbnf
    with qtbot.waitSignal(view.sig_shown, timeout=SHOWN_MS):
        view.show()
    assert view.text.toPlainText() == compiled("invoice").gbnf


def test_long_grammars_are_not_coloured(qtbot, view: GrammarView, monkeypatch) -> None:
    show(qtbot, view, compiled("currency"), "llamacpp")
    assert view._highlighter is not None
    monkeypatch.setattr(grammar_view, "MAX_COLOURED_LINES", 5)
    show(qtbot, view, compiled("invoice"), "llamacpp")
    assert view._highlighter is None
    assert "without colours" in view.info.toolTip()
