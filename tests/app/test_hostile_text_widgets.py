"""Hostile text stays text in the window's widgets: a schema property name, a prompt, a
model's output (a replayed saved run), a file name and a suite's names holding `<b>`,
`<img src=…>`, `&lt;` and `</table>` are shown as written, never rendered as markup.

What a widget draws is judged as Qt judges it: a PlainText label draws its text, a
RichText one its HTML, and an AutoText one (every tooltip, and a label left as it is)
the HTML when Qt.mightBeRichText says so. No model is run: one window for the module."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import Qt, QTextDocument  # QtGui's Qt has mightBeRichText
from PySide6.QtWidgets import QLabel

from app.main_window import MainWindow
from app.suite.compare_view import ResultCompareView
from engine.model.llama import ModelInfo
from engine.schema.validate import validation_issues
from engine.suite.compare import compare_results
from engine.suite.format import Case, Suite
from tests.modelless_window import modelless_window

HOSTILE = "<b>bold</b> <img src=x> &lt;tag&gt; </table>"
IN_A_NAME = "<b>bold <img src=x> &lt;tag&gt;"  # no "/": a file name may not hold one
RUN = Path(__file__).parents[1] / "data" / "runs" / "currency-v2.json"
CHECK_MS = 20_000


def drawn(text: str, form: Qt.TextFormat = Qt.TextFormat.AutoText) -> str:
    """The text Qt shows for `text` in a widget of format `form`."""
    rich = form == Qt.TextFormat.RichText or (
        form == Qt.TextFormat.AutoText and Qt.mightBeRichText(text)
    )
    if not rich:
        return text
    document = QTextDocument()
    document.setHtml(text)
    return document.toPlainText()


def label_shows(label: QLabel) -> str:
    return drawn(label.text(), label.textFormat())


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MainWindow]:
    with modelless_window(tmp_path_factory) as window:
        yield window


def test_a_property_name_in_the_problems_tooltips(win: MainWindow, qtbot) -> None:
    # A name `required` lists and `properties` lacks: its lint quotes it on the first line.
    schema = {"type": "object", "properties": {"a": {}}, "required": [HOSTILE]}
    win.schema_editor.editor.setPlainText(json.dumps(schema))
    model = win.schema_editor.problems_list.model

    def named() -> list[str]:
        tips = [
            model.data(model.index(r, 0), Qt.ItemDataRole.ToolTipRole)
            for r in range(model.rowCount())
        ]
        return [t for t in tips if HOSTILE in drawn(t)]

    qtbot.waitUntil(lambda: bool(named()), timeout=CHECK_MS)


def _hostile_run(folder: Path) -> tuple[Path, str, list[str]]:
    """The saved currency run with a schema whose property is HOSTILE, HOSTILE as the
    prompt, and an output whose value HOSTILE breaks the schema's maxLength; its steps'
    tokens are cut from that output, the second one the key as JSON writes it."""
    data = json.loads(RUN.read_text(encoding="utf-8"))
    schema = {"type": "object", "properties": {HOSTILE: {"type": "string", "maxLength": 1}}}
    text = json.dumps({HOSTILE: HOSTILE}, ensure_ascii=False)
    steps = data["steps"]
    key = len(json.dumps(HOSTILE)) - 2
    cuts = [0, 2, 2 + key, *range(key + 4, len(text), 8)][: len(steps) - 1]
    pieces = [text[a:b] for a, b in zip(cuts, [*cuts[1:], len(text)], strict=True)]
    for step, piece in zip(steps, pieces, strict=False):
        step["token_text"] = step["token_piece"] = piece
    data["steps"] = steps[: len(pieces)]
    data["schema_text"] = json.dumps(schema)
    data["prompt"] = HOSTILE
    result = data["result"]
    errors = [dataclasses.asdict(e) for e in validation_issues({HOSTILE: HOSTILE}, schema)]
    result.update(text=text, parsed={HOSTILE: HOSTILE}, n_tokens=len(pieces), errors=errors)
    path = folder / f"{IN_A_NAME}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path, text, pieces


def test_a_replayed_run_shows_its_output_and_prompt_as_written(win: MainWindow, tmp_path):
    path, text, pieces = _hostile_run(tmp_path)
    assert win.open_run(str(path))
    assert win.prompt_pane.editor.toPlainText() == HOSTILE
    output = win.output_view
    assert output.raw.toPlainText() == text
    issues = [output.issues.topLevelItem(n) for n in range(output.issues.topLevelItemCount())]
    assert issues, "the value breaks maxLength: a violation is listed"
    assert any(HOSTILE in drawn(item.toolTip(1)) for item in issues)
    assert all(f"{item.text(1)}" in drawn(item.toolTip(1)) for item in issues)
    win.step_chart.show_step(1)
    assert repr(pieces[1]) in win.step_chart.step_label._doc.toPlainText()


def test_a_model_file_name_in_the_status_bar(win: MainWindow) -> None:
    path = f"/models/{IN_A_NAME}.gguf"
    win.status.set_model(ModelInfo(path, f"{IN_A_NAME}.gguf", 262144, 18, 0, False, True, 4096, 2))
    assert label_shows(win.status.model_label) == f"model: {IN_A_NAME}.gguf"
    assert drawn(win.status.model_label.toolTip()).startswith(path + "\n")


def test_a_suite_file_name_in_its_message_and_title(win: MainWindow, tmp_path: Path) -> None:
    editor = win.suites.pane.editor
    corrupt = tmp_path / f"{IN_A_NAME}.suite.json"
    corrupt.write_bytes(b"\xff not text")
    assert not editor.open_file(str(corrupt))
    assert str(corrupt) in label_shows(editor.message)
    editor.set_suite(_hostile_suite(), str(tmp_path / f"{IN_A_NAME}.suite.json"))
    assert label_shows(editor.title) == f"{HOSTILE} — {tmp_path}/{IN_A_NAME}.suite.json"
    assert drawn(editor.title.toolTip()) == HOSTILE  # its description


def _hostile_suite() -> Suite:
    case = Case(id=HOSTILE, vars={"invoice": HOSTILE}, description=HOSTILE)
    return Suite(HOSTILE, "{}\n", "{{invoice}}", (case,), description=HOSTILE)


def test_a_suite_case_name_in_the_cases_and_results(win: MainWindow) -> None:
    pane = win.suites.pane
    pane.editor.set_suite(_hostile_suite(), None)
    table = pane.editor.cases
    for column in range(table.columnCount()):
        item = table.item(0, column)
        if item.text() == HOSTILE:
            assert drawn(item.toolTip()) == HOSTILE
    pane.results.clear(f"Running 1 samples of {HOSTILE}…")  # as the pane says it
    assert label_shows(pane.results.summary) == f"Running 1 samples of {HOSTILE}…"
    pane.results.show_result(_hostile_result(), f"/tmp/{IN_A_NAME}.json")
    assert f"Result file /tmp/{IN_A_NAME}.json · suite {HOSTILE}" in label_shows(
        pane.results.summary
    )
    row = pane.results.table
    assert row.item(0, 0).text() == HOSTILE
    assert drawn(row.item(0, 0).toolTip()).endswith(f"\n\n{HOSTILE}")  # the sample's output


def _hostile_result() -> dict:
    return {
        "format": "maskscope-test-result", "version": 1, "suite": HOSTILE, "passed": True,
        "metrics": {"n_samples": 1, "validity_rate": 1.0}, "thresholds": [], "problems": [],
        "cases": [{"id": HOSTILE, "n_samples": 1, "n_valid": 1, "validity_rate": 1.0,
                   "fields_ok": 0, "fields_checked": 0, "passed": True}],
        "samples": [{"case": HOSTILE, "index": 0, "seed": 0, "text": HOSTILE, "valid": True,
                     "truncated": False, "fields": [], "failures": [],
                     "metrics": {"mean_valid_mass": 0.9, "min_valid_mass": 0.5,
                                 "n_overruled": 0, "n_forced": 0, "latency_ms": 10.0}}],
    }  # fmt: skip


def test_result_names_in_the_comparison(qtbot) -> None:
    result = _hostile_result()
    view = ResultCompareView(compare_results(result, result, (IN_A_NAME, HOSTILE)))
    qtbot.addWidget(view)
    assert f"{IN_A_NAME} → {HOSTILE} · 1 case(s)" in label_shows(view.verdict)


def test_a_file_name_with_an_ampersand_in_the_recent_menu(win: MainWindow) -> None:
    path = f"/tmp/R&D {IN_A_NAME}.json"
    win.store.add_recent_file(path)
    win.recent_menu.aboutToShow.emit()
    texts = [a.text() for a in win.recent_menu.actions()]
    assert path.replace("&", "&&") in texts  # a menu shows && as one & (a lone & is a mark)
