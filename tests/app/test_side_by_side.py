"""Constrained against unconstrained: both verdicts, where the runs part, copy, running."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtGui import QGuiApplication, QTextCursor, QTextDocumentFragment, QTextFormat

from app.compare.unconstrained import EMPTY, SideBySideView, parting_text, verdict_lines
from engine.records import Candidate, FinishReason, RunResult, StepRecord, ValidationIssue
from engine.runs.compare import first_divergence
from engine.runs.saved import SavedRun, load_run

RUNS = Path(__file__).parents[1] / "data" / "runs"
# The currency step and the one after it, as the real model wrote them: after "EUR" it
# wanted '",' (P 0.974), which the grammar masks since no other property may follow.
CLOSE = Candidate(7, '"', 0.019, 1.0, True, '"')
COMMA = Candidate(8, '",', 0.974, 0.0, False, '",')


def _record(step: int, token_id: int, piece: str, mass: float, chars: int, top=()) -> StepRecord:
    return StepRecord(
        step=step,
        token_id=token_id,
        token_text=piece,
        token_piece=piece,
        top_raw=tuple(top),
        top_masked=tuple(c for c in top if c.valid),
        valid_mass=mass,
        valid_mass_bound=0.0,
        n_valid=1,
        n_valid_exact=True,
        entropy=0.0,
        forward_ms=0.0,
        mask_ms=0.0,
        output_chars=chars,
    )


def _run(pieces, result: RunResult) -> SavedRun:
    records, chars = [], 0
    for i, (token_id, piece, mass, top) in enumerate(pieces):
        chars += len(piece)
        records.append(_record(i, token_id, piece, mass, chars, top))
    return SavedRun("{}", "prompt", "gemma.gguf", tuple(records), result)


SHARED = [(1, '{"currency": "', 0.9, ()), (2, "EUR", 0.91, ())]
CONSTRAINED = _run(
    [*SHARED, (7, '"', 0.019, (COMMA, CLOSE)), (9, "}", 0.35, ())],
    RunResult('{"currency": "EUR"}', FinishReason.GRAMMAR_COMPLETE, 4, settings={"seed": 1}),
)


def _unconstrained(constrained: SavedRun) -> SavedRun:
    """The model alone: every token allowed, so every candidate is valid and the valid mass
    is 1 at every step; from the third step it writes what it likes."""
    records = [
        dataclasses.replace(
            r,
            valid_mass=1.0,
            top_raw=tuple(dataclasses.replace(c, valid=True, p_masked=c.p_raw) for c in r.top_raw),
        )
        for r in constrained.records[:2]
    ]
    text = '{"currency": "EUR", "document": "2019-04-12/21/20_10'
    records += [
        _record(2, 8, '",', 1.0, 20, (COMMA, CLOSE)),
        _record(3, 10, ' "document": "2019-04-12/21/20_10', 1.0, len(text)),
    ]
    result = RunResult(
        text,
        FinishReason.MAX_TOKENS,
        4,
        parse_error="Unterminated string starting at line 1, column 33",
        settings={"seed": 1, "constrained": False},
    )
    return SavedRun("{}", "prompt", "gemma.gguf", tuple(records), result)


UNCONSTRAINED = _unconstrained(CONSTRAINED)


def _plain(label) -> str:
    return QTextDocumentFragment.fromHtml(label.text()).toPlainText()


def _tinted_from(edit) -> int | None:
    """The first character offset with a background (the text after the runs part)."""
    doc = edit.document()
    for i in range(doc.characterCount() - 1):
        cursor = QTextCursor(doc)
        cursor.setPosition(i + 1)
        if cursor.charFormat().hasProperty(QTextFormat.Property.BackgroundBrush):
            return i
    return None


def test_both_outputs_with_their_verdicts(qtbot):
    view = SideBySideView()
    qtbot.addWidget(view)
    view.show_pair(CONSTRAINED, UNCONSTRAINED)
    assert view.constrained.output.toPlainText() == '{"currency": "EUR"}'
    assert view.unconstrained.output.toPlainText() == UNCONSTRAINED.result.text
    assert _plain(view.constrained.verdict) == "✓ valid JSON that matches the schema"
    assert _plain(view.unconstrained.verdict) == (
        "⚠ truncated at max_tokens (4 tokens)\n"
        "✗ invalid JSON: Unterminated string starting at line 1, column 33"
    )
    assert "seed 1" in view.status.text()
    assert _plain(view.unconstrained.title) == "Without the grammar (the model alone) · 4 tokens"
    # The hover text of a step names both choices and the constrained run's valid mass.
    assert view.mass.describe(2) == (
        "<b>step 3</b><br>with the grammar: &#x27;&quot;&#x27;<br>"
        "without: &#x27;&quot;,&#x27;<br>valid mass 0.019"
    )


def test_where_the_runs_part_and_what_the_grammar_thought(qtbot):
    view = SideBySideView()
    qtbot.addWidget(view)
    view.show_pair(CONSTRAINED, UNCONSTRAINED)
    assert view.parting.text() == (
        "The runs part at step 3: '\"' with the grammar, '\",' without it. "
        "The grammar masked '\",' (P 0.974) there."
    )
    # Each output is tinted from the end of the shared steps on.
    assert _tinted_from(view.constrained.output) == len('{"currency": "EUR')
    assert _tinted_from(view.unconstrained.output) == len('{"currency": "EUR')
    assert "tinted" in view.legend.text()
    (ys,) = (curve.getData()[1] for curve in view.mass.curves)
    assert list(ys) == [0.9, 0.91, 0.019, 0.35]
    assert view.mass.mark_line.isVisible() and view.mass.mark_line.value() == 3


def test_parting_words_when_the_grammar_allowed_the_choice_or_a_run_ended():
    allowed = dataclasses.replace(
        CONSTRAINED,
        records=(
            *CONSTRAINED.records[:2],
            dataclasses.replace(
                CONSTRAINED.records[2], top_raw=(dataclasses.replace(COMMA, valid=True), CLOSE)
            ),
        ),
    )
    d = first_divergence(allowed.records, UNCONSTRAINED.records)
    assert parting_text(d, allowed).endswith(
        "The grammar allowed '\",' too (P 0.974); renormalising changed the draw."
    )
    short = dataclasses.replace(UNCONSTRAINED, records=UNCONSTRAINED.records[:2])
    d = first_divergence(CONSTRAINED.records, short.records)
    assert parting_text(d, CONSTRAINED) == (
        "The runs part at step 3: the run without the grammar had already ended."
    )
    assert parting_text(None, CONSTRAINED) == (
        "Both runs chose the same 4 tokens: the grammar never had to step in."
    )


def test_parting_at_the_first_step_tints_nothing(qtbot):
    view = SideBySideView()
    qtbot.addWidget(view)
    first = _run(
        [(11, "Invoice", 1.0, ())],
        RunResult("Invoice", FinishReason.MAX_TOKENS, 1, parse_error="Expecting value"),
    )
    view.show_pair(CONSTRAINED, first)
    assert view.parting.text().startswith("The runs part at step 1:")
    assert _tinted_from(view.unconstrained.output) is None and view.legend.text() == ""
    assert view.mass.mark_line.value() == 1


def test_schema_errors_are_named_and_counted():
    errors = tuple(ValidationIssue(f"$.x{i}", "is not a number") for i in range(5))
    result = RunResult('{"x0": "a"}', FinishReason.END_OF_GENERATION, 3, errors=errors)
    assert verdict_lines(result) == [
        ("✗ JSON, but 5 schema errors", "bad"),
        ("$.x0: is not a number", "bad"),
        ("$.x1: is not a number", "bad"),
        ("$.x2: is not a number", "bad"),
        ("… and 2 more", "bad"),
    ]
    stopped = RunResult("{", FinishReason.ERROR, 1, message="the context is full")
    assert verdict_lines(stopped) == [("✗ engine error", "bad"), ("the context is full", "bad")]


def test_copy_buttons_running_and_clear(qtbot):
    view = SideBySideView()
    qtbot.addWidget(view)
    assert view.status.text() == EMPTY
    assert not view.constrained.copy_button.isEnabled()
    view.show_pair(CONSTRAINED, UNCONSTRAINED)
    view.unconstrained.copy_button.click()
    assert QGuiApplication.clipboard().text() == UNCONSTRAINED.result.text
    view.constrained.copy_button.click()
    assert QGuiApplication.clipboard().text() == '{"currency": "EUR"}'

    view.set_running("Running the unconstrained pass…")
    assert view.status.text() == "Running the unconstrained pass…"
    assert not view.busy.isHidden()
    # Nothing of the previous pair is left to read as the new result.
    assert view.unconstrained.output.toPlainText() == "" and view.parting.text() == ""
    assert not view.unconstrained.copy_button.isEnabled()

    view.set_running("")  # the pass was stopped: nothing is running any more
    assert view.busy.isHidden() and view.status.text() == EMPTY
    view.show_pair(CONSTRAINED, UNCONSTRAINED)
    assert view.busy.isHidden()
    view.clear()
    assert view.status.text() == EMPTY and view.pair is None
    assert view.constrained.output.toPlainText() == ""
    assert not view.mass.mark_line.isVisible()


def test_on_a_real_run_the_model_alone_starts_with_a_word_the_grammar_masked(qtbot):
    """The real currency run at seed 0; without the grammar the model starts with its own
    first choice, 'Invoice', which the grammar masks (a JSON object must open with {)."""
    real = load_run(RUNS / "currency-logits.json")
    first = real.records[0]
    invoice = first.top_raw[0]
    alone = dataclasses.replace(
        first,
        token_id=invoice.id,
        token_text=invoice.text,
        token_piece="Invoice",
        valid_mass=1.0,
        top_raw=tuple(dataclasses.replace(c, valid=True) for c in first.top_raw),
    )
    result = RunResult(
        "Invoice", FinishReason.MAX_TOKENS, 1, parse_error="Expecting value: line 1 column 1"
    )
    unconstrained = dataclasses.replace(real, records=(alone,), result=result)
    view = SideBySideView()
    qtbot.addWidget(view)
    view.show_pair(real, unconstrained)
    assert view.parting.text() == (
        "The runs part at step 1: '{' with the grammar, 'Invoice' without it. "
        "The grammar masked 'Invoice' (P 0.258) there."
    )
    assert "✗ invalid JSON: Expecting value" in _plain(view.unconstrained.verdict)
    assert _plain(view.constrained.verdict) == "✓ valid JSON that matches the schema"
    (ys,) = (curve.getData()[1] for curve in view.mass.curves)
    assert list(ys) == [r.valid_mass for r in real.records]
