"""The explanation panel shows the step record's own numbers, asks for a branch on a valid
token and explains a masked one: on a real saved run, and on the real model."""

from __future__ import annotations

import html
import math
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest

from app.demo.candidates_table import DIVISION, P_AFTER, P_BEFORE, TOKEN, VALID
from app.demo.explanation_panel import ExplanationPanel
from app.demo.step_explained import NO_NUMBER, fmt, fmt_logit
from engine.explain.forbidden import output_before, why_forbidden
from engine.explain.renormalise import explain
from engine.records import StepRecord
from engine.runs.saved import SavedRun, load_run, run_settings

RUNS = Path(__file__).parent.parent / "data" / "runs"
N_VOCAB = 262_144


def currency_step(records) -> int:
    """The step right after `"currency": "`: where the model picks the currency."""
    return next(
        i
        for i in range(len(records))
        if "".join(output_before(records, i).split()).endswith('"currency":"')
    )


@pytest.fixture(scope="module")
def run() -> SavedRun:
    return load_run(RUNS / "currency-logits.json")


@pytest.fixture
def panel(qtbot) -> ExplanationPanel:
    widget = ExplanationPanel()
    qtbot.addWidget(widget)
    widget.resize(900, 700)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def show(panel: ExplanationPanel, run: SavedRun, index: int | None = None) -> StepRecord:
    index = currency_step(run.records) if index is None else index
    temperature = run_settings(run).temperature
    panel.show_step(run.records, index, N_VOCAB, temperature, run.schema_text)
    return run.records[index]


def row_of(panel: ExplanationPanel, text: str) -> int:
    return next(i for i, r in enumerate(panel.table.rows) if r.candidate.text == text)


def click_row(panel: ExplanationPanel, row: int) -> None:
    rect = panel.table.visualItemRect(panel.table.item(row, TOKEN))
    QTest.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def assert_numbers_are_the_records(panel: ExplanationPanel, record: StepRecord, n_vocab: int):
    shown = explain(record, n_vocab)
    assert f"{record.n_valid:,} of {n_vocab:,} tokens are valid" in panel.count_label.text()
    assert f"ΣP = <b>{fmt(record.valid_mass)}</b>" in panel.mass_label.text()
    assert html.escape(shown.sum_written()) in panel.sum_label.text()
    table = panel.table
    by_id = {row.candidate.id: i for i, row in enumerate(table.rows)}
    assert set(by_id) >= {c.id for c in record.top_raw}  # every top candidate is listed
    for c in (*record.top_raw, *record.top_masked):
        i = by_id.get(c.id)
        if i is None:
            continue
        assert table.item(i, P_BEFORE).text() == fmt(c.p_raw)
        assert table.item(i, VALID).text() == ("✓ valid" if c.valid else "✗ masked")
        assert table.item(i, P_AFTER).text() == (fmt(c.p_masked) if c.valid else "0")
        if c.valid:
            p, mass, after = (
                float(x) for x in table.item(i, DIVISION).text().replace("=", "/").split("/")
            )
            assert (p, mass, after) == (
                float(fmt(c.p_raw)),
                float(fmt(record.valid_mass)),
                float(fmt(c.p_masked)),
            )
            assert math.isclose(c.p_raw / record.valid_mass, c.p_masked, rel_tol=1e-3)
    chosen = next(c for c in record.top_masked if c.id == record.token_id)
    assert "← drawn" in table.item(by_id[chosen.id], TOKEN).text()
    rank = explain(record, n_vocab).rank_after
    assert panel.pipeline.values()[2:] == [
        fmt(chosen.p_raw),
        "valid ✓",
        fmt(chosen.p_masked),
        f"drawn, rank {rank} of {record.n_valid}",
    ]
    return chosen


def test_the_panel_shows_the_records_numbers(panel, run):
    record = show(panel, run)
    chosen = assert_numbers_are_the_records(panel, record, N_VOCAB)
    temperature = run_settings(run).temperature
    assert panel.pipeline.values()[:2] == [
        fmt_logit(chosen.logit),
        fmt_logit(chosen.logit / temperature),
    ]
    assert "15 of 262,144 tokens are valid" in panel.count_label.text()
    assert panel.title.text().startswith("Step 7 of 10")
    # The output so far ends with the chosen token, marked.
    assert panel.output.toPlainText().startswith('{\n"currency": "USD')


def test_a_valid_row_asks_for_a_branch_with_that_token(qtbot, panel, run):
    record = show(panel, run)
    eur = next(c for c in record.top_raw if c.text == "EUR")
    with qtbot.waitSignal(panel.sig_force, timeout=2000) as blocker:
        click_row(panel, row_of(panel, "EUR"))
    assert blocker.args == [currency_step(run.records), eur.id]
    assert not panel.why_label.isVisible()


def test_a_masked_row_says_why_the_grammar_forbids_it(qtbot, panel, run):
    record = show(panel, run)
    one = next(c for c in record.top_raw if c.text == "1")
    with qtbot.assertNotEmitted(panel.sig_force):
        click_row(panel, row_of(panel, "1"))
    before = output_before(run.records, currency_step(run.records))
    assert panel.why == why_forbidden(record, one, before, run.schema_text)
    assert panel.why_label.isVisible()
    assert 'none starts with "1"' in panel.why_label.text()
    assert panel.why in panel.plain_text()


def test_plain_language_for_a_room_of_non_engineers(panel, run):
    show(panel, run)
    panel.set_plain_language(True)
    assert (
        "Share of the model's preference that the rules allowed: <b>90.7%</b>"
        in panel.mass_label.text()
    )
    assert panel.table.item(row_of(panel, "EUR"), VALID).text() == "the rules allowed"
    assert panel.table.item(row_of(panel, "1"), VALID).text() == "the rules forbid"
    assert panel.pipeline.titles()[0] == "model's score"
    assert panel.pipeline.values()[3] == "allowed ✓"
    assert "Picked" in panel.chosen_label.text() and "before the rules" in panel.chosen_label.text()
    panel.set_plain_language(False)
    assert panel.table.item(row_of(panel, "EUR"), VALID).text() == "✓ valid"
    assert panel.pipeline.titles() == [
        "logits",
        "÷ T",
        "softmax P",
        "mask",
        "renormalise",
        "sample",
    ]


def test_presentation_fonts_grow_the_table_and_keep_the_panels_styles(qtbot, panel, run):
    show(panel, run)
    height = panel.table.height()
    styles = panel.frame.styleSheet()
    panel.setStyleSheet("QWidget { font-size: 24pt; }")  # as presentation mode may
    qtbot.waitUntil(lambda: panel.table.height() > height)
    assert panel.frame.styleSheet() == styles and "explainWhy" in styles
    assert not panel.table.verticalScrollBar().isVisible()  # every row still shows


def test_copy_puts_the_explanation_on_the_clipboard(panel, run):
    record = show(panel, run)
    panel.copy_button.click()
    text = QGuiApplication.clipboard().text()
    assert text == panel.plain_text()
    assert explain(record, N_VOCAB).sum_written() in text
    assert "0.598 / 0.907 = 0.659" in text  # USD's division, as the mission documents write it


def test_an_old_run_without_logits_shows_a_dash(panel):
    old = load_run(RUNS / "currency-v1.json")
    show(panel, old)
    assert panel.pipeline.values()[:2] == [NO_NUMBER, NO_NUMBER]
    assert "not in this saved run" in panel.pipeline.boxes[0].toolTip()


def test_greedy_decoding_keeps_the_logit_and_takes_the_top(panel, run):
    index = currency_step(run.records)
    record = run.records[index]
    panel.show_step(run.records, index, None, 0.0, None)
    chosen = next(c for c in record.top_masked if c.id == record.token_id)
    assert panel.pipeline.values()[:2] == [fmt_logit(chosen.logit)] * 2
    assert panel.pipeline.values()[5] == f"top, rank 1 of {record.n_valid}"
    assert f"<b>{record.n_valid}</b>" not in panel.count_label.text()  # no vocabulary: no "of"
    assert "of 262,144" not in panel.count_label.text()


def test_clear_leaves_only_the_invitation(panel, run):
    show(panel, run)
    panel.clear()
    assert panel.step is None and panel.plain_text() == ""
    assert panel.empty.isVisible() and not panel.table.isVisible()
    panel.show_step(run.records, len(run.records), N_VOCAB, 0.7, None)  # past the end
    assert panel.step is None and panel.empty.isVisible()


# --- the real model ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def model_currency_run(model, currency):
    from engine.runs.headless import run_to_end
    from engine.settings import GenerationSettings

    ex, compiled = currency
    settings = GenerationSettings(seed=0)
    records: list[StepRecord] = []
    run_to_end(model, compiled, ex.prompt, settings, records.append)
    return ex, records, settings


def test_on_the_real_model_the_currency_step_shows_the_models_own_numbers(
    panel, model, model_currency_run
):
    ex, records, settings = model_currency_run
    index = currency_step(records)
    record = records[index]
    panel.show_step(records, index, model.n_vocab, settings.temperature, ex.schema_text)
    assert_numbers_are_the_records(panel, record, model.n_vocab)
    shown = {row.candidate.text for row in panel.table.rows if row.valid}
    assert {"USD", "EUR", "GBP"} <= shown or {"U", "E", "G"} <= shown
    for text in ("USD", "EUR"):
        c = next(c for c in record.top_masked if c.text == text)
        division = panel.table.item(row_of(panel, text), DIVISION).text()
        assert division == f"{fmt(c.p_raw)} / {fmt(record.valid_mass)} = {fmt(c.p_masked)}"
