"""The Branches pane: the list of runs, one branch against the original, opening a run."""

from __future__ import annotations

import dataclasses
import html
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QTextCursor, QTextDocumentFragment, QTextFormat
from step_records import token_record

from app.compare.branches import EMPTY, ORIGINAL, ORIGINAL_SELECTED, BranchesView, forced_odds_text
from app.compare.branches import first_difference_text as words
from app.theme import chart_colors
from engine.records import Candidate, FinishReason, RunResult, ValidationIssue
from engine.runs.branches import BranchSet
from engine.runs.saved import SavedRun, load_run

_record = partial(token_record, n_valid=2)


def _run(
    pieces: list[tuple[int, str, float]], errors: tuple[ValidationIssue, ...] = ()
) -> SavedRun:
    records = tuple(_record(i, t, p, m) for i, (t, p, m) in enumerate(pieces))
    text = "".join(p for _, p, _ in pieces)
    result = RunResult(text, FinishReason.GRAMMAR_COMPLETE, len(records), errors=errors)
    return SavedRun("{}", "prompt", "gemma.gguf", records, result)


ORIGINAL_RUN = _run([(1, '{"currency": "', 1.0), (2, "USD", 0.91), (3, '"}', 1.0)])
EUR = _run([(1, '{"currency": "', 1.0), (4, "EUR", 0.91), (3, '"}', 0.98)])
# Forced at the first step; the schema (say) wanted the value on the first line.
LATE = _run(
    [(5, '{ "currency": "', 0.6), (6, "GBP", 0.3), (7, '" ', 0.5), (3, "}", 1.0)],
    errors=(ValidationIssue("$.currency", "'GBP' is not one of ['USD', 'EUR']"),),
)


def _view(qtbot) -> BranchesView:
    view = BranchesView()
    qtbot.addWidget(view)
    view.set_original(ORIGINAL_RUN)
    view.add_branch(view.branches.new_branch(1, 4, "EUR", EUR))
    view.add_branch(view.branches.new_branch(0, 5, '{ "currency": "', LATE))
    return view


def _rows(view: BranchesView) -> list[list[str]]:
    tree = view.list
    return [
        [tree.topLevelItem(i).text(c) for c in range(tree.columnCount())]
        for i in range(tree.topLevelItemCount())
    ]


def _tinted(view: BranchesView, edit) -> str:
    """The characters of an output with a background: the words only that side has."""
    doc = edit.document()
    out = []
    for i in range(doc.characterCount() - 1):
        cursor = QTextCursor(doc)
        cursor.setPosition(i + 1)  # the format of the character before the cursor
        if cursor.charFormat().hasProperty(QTextFormat.Property.BackgroundBrush):
            out.append(doc.characterAt(i))
    return "".join(out)


def test_the_list_holds_the_original_then_each_branch(qtbot):
    view = _view(qtbot)
    assert _rows(view) == [
        ["Original run", "—", "—", "✓ valid", "3"],
        ["Branch 1", "2", "'EUR'", "✓ valid", "3"],
        ["Branch 2", "1", '\'{ "currency": "\'', "✗ invalid (1 error)", "4"],
    ]
    # The branch just made is the one shown.
    assert view.current_index() == 1 and view.current_run() is LATE


def test_selecting_a_branch_shows_its_difference_from_the_original(qtbot):
    view = _view(qtbot)
    items = len(view.mass.plot.getPlotItem().items)
    view.select(0)
    assert _plain(view.difference) == (
        "First difference at step 2: 'USD' (the original) vs 'EUR' (the branch)\n"
        "At step 2 'EUR' was not among the model's top candidates; the original drew 'USD'."
    )
    # Each run's choice in its curve's colour.
    blue, purple = (style.color(chart_colors()).name() for style in view.mass.styles)
    assert f"<span style='color:{blue}'>&#x27;USD&#x27; (the original)</span>" in (
        view.difference.text()
    )
    assert f"<span style='color:{purple}'>&#x27;EUR&#x27;" in view.difference.text()
    assert view.left.toPlainText() == ORIGINAL_RUN.result.text
    assert view.right.toPlainText() == EUR.result.text
    assert _tinted(view, view.left) == "USD" and _tinted(view, view.right) == "EUR"
    assert _plain(view.left_title) == "Original run · ✓ valid · 3 tokens"
    assert _plain(view.right_title) == "Branch 1: step 2 → 'EUR' · ✓ valid · 3 tokens"
    assert _ys(view.mass.curves[0]) == [1.0, 0.91, 1.0]
    assert _ys(view.mass.curves[1]) == [1.0, 0.91, 0.98]
    assert view.mass.mark_line.isVisible() and view.mass.mark_line.value() == 2
    assert view.mass.describe(1) == (
        "<b>step 2</b><br>original: &#x27;USD&#x27; · valid mass 0.910<br>"
        "branch: &#x27;EUR&#x27; · valid mass 0.910"
    )

    view.select(1)
    assert _plain(view.difference).startswith(
        'First difference at step 1: \'{"currency": "\' (the original) vs '
        '\'{ "currency": "\' (the branch)\n'
    )
    assert "✗ invalid (1 error)" in _plain(view.right_title)
    assert view.mass.mark_line.value() == 1
    assert _ys(view.mass.curves[1]) == [0.6, 0.3, 0.5, 1.0]
    # The plot's items were made once and re-fed.
    assert len(view.mass.plot.getPlotItem().items) == items

    view.select(ORIGINAL)
    assert _plain(view.difference) == ORIGINAL_SELECTED
    assert view.left.toPlainText() == ORIGINAL_RUN.result.text and not view.right.toPlainText()
    assert not view.mass.mark_line.isVisible()
    assert _ys(view.mass.curves[0]) == [1.0, 0.91, 1.0] and _ys(view.mass.curves[1]) == []


def _plain(label) -> str:
    return QTextDocumentFragment.fromHtml(label.text()).toPlainText()


def _ys(curve) -> list[float]:
    ys = curve.getData()[1]
    return [] if ys is None else list(ys)


def test_enter_double_click_and_the_button_open_the_run(qtbot):
    view = _view(qtbot)
    view.show()
    opened: list[SavedRun] = []
    view.sig_open.connect(opened.append)
    view.select(0)
    view.list.setFocus()
    qtbot.keyClick(view.list, Qt.Key.Key_Return)
    assert opened == [EUR]
    view.open_button.click()
    assert opened == [EUR, EUR]
    row = view.list.visualItemRect(view.list.topLevelItem(0)).center()
    # As a user's double click arrives: a click, then the double click.
    qtbot.mouseClick(view.list.viewport(), Qt.MouseButton.LeftButton, pos=row)
    qtbot.mouseDClick(view.list.viewport(), Qt.MouseButton.LeftButton, pos=row)
    assert len(opened) == 3
    assert opened[-1] is ORIGINAL_RUN and view.current_index() == ORIGINAL


def test_copy_diff_and_clear(qtbot):
    view = _view(qtbot)
    view.select(0)
    view.copy_button.click()
    diff = QGuiApplication.clipboard().text()
    assert '-{"currency": "USD"}' in diff and '+{"currency": "EUR"}' in diff
    view.clear()
    assert _rows(view) == [] and _plain(view.difference) == EMPTY
    assert not view.copy_button.isEnabled() and not view.open_button.isEnabled()
    assert view.current_run() is None


def test_a_new_original_drops_the_branches(qtbot):
    view = _view(qtbot)
    view.set_original(EUR)
    assert _rows(view) == [["Original run", "—", "—", "✓ valid", "3"]]
    assert _plain(view.difference) == EMPTY  # no branch yet to compare
    view.add_branch(view.branches.new_branch(1, 2, "USD", ORIGINAL_RUN))
    assert _rows(view)[1][0] == "Branch 1"


def test_first_difference_words():
    branches = BranchSet(ORIGINAL_RUN)
    same = branches.new_branch(1, 2, "USD", ORIGINAL_RUN)
    branches.add(same)
    assert words(same, branches.compare(0)) == "The branch chose the same 3 tokens as the original."
    # Forced at the first step, the token the original chose there too: the runs part later.
    later = _run([(1, '{"currency": "', 1.0), (2, "USD", 0.91), (9, '"\n}', 1.0)])
    branches.add(branches.new_branch(0, 1, '{"currency": "', later))
    assert words(branches.branches[1], branches.compare(1)) == (
        "First difference at step 3: '\"}' (the original) vs '\"\\n}' (the branch); "
        "the token was forced at step 1"
    )


def _with_candidates(run: SavedRun, step: int, *top: Candidate) -> SavedRun:
    record = dataclasses.replace(run.records[step], top_raw=top, top_masked=top)
    records = (*run.records[:step], record, *run.records[step + 1 :])
    return dataclasses.replace(run, records=records)


def test_the_forced_tokens_odds_where_it_was_forced():
    # The real currency step: USD 0.598 and EUR 0.269 of 0.907 valid.
    usd = Candidate(2, "USD", 0.598, 0.659, True)
    eur = Candidate(4, "EUR", 0.269, 0.297, True)
    original = _with_candidates(ORIGINAL_RUN, 1, usd, eur)
    branches = BranchSet(original)
    branches.add(branches.new_branch(1, 4, "EUR", _with_candidates(EUR, 1, usd, eur)))
    branches.add(branches.new_branch(1, 4, "EUR", EUR))  # saved without its candidates
    assert forced_odds_text(branches.branches[0], original, branches.compare(0)) == (
        "At step 2 the model gave 'EUR' P 0.269 (0.297 after masking); "
        "the original drew 'USD' (P 0.598)."
    )
    assert forced_odds_text(branches.branches[1], original, branches.compare(1)) == (
        "At step 2 'EUR' was not among the model's top candidates; "
        "the original drew 'USD' (P 0.598)."
    )


def test_a_branch_of_a_branch_reads_its_odds_in_its_own_context():
    # Forked at step 3 from a branch that had already parted from the original at step 1:
    # the original's draw at step 3 was made after other text, so it is not named.
    gbp = Candidate(6, "GBP", 0.3, 0.5, True)
    branches = BranchSet(ORIGINAL_RUN)
    branches.add(branches.new_branch(1, 6, "GBP", _with_candidates(LATE, 1, gbp)))
    assert forced_odds_text(branches.branches[0], ORIGINAL_RUN, branches.compare(0)) == (
        "At step 2 the model gave 'GBP' P 0.300 (0.500 after masking)."
    )


def test_on_a_real_run_the_eur_branch_reads_its_odds_from_the_currency_step(qtbot):
    real = load_run(Path(__file__).parents[1] / "data" / "runs" / "currency-logits.json")
    step = next(r for r in real.records if r.token_text == "USD")
    eur = next(c for c in step.top_raw if c.text == "EUR")
    forked = dataclasses.replace(step, token_id=eur.id, token_text="EUR", token_piece="EUR")
    records = tuple(forked if r is step else r for r in real.records)
    text = real.result.text.replace("USD", "EUR")
    branch_run = dataclasses.replace(
        real, records=records, result=dataclasses.replace(real.result, text=text)
    )
    view = BranchesView()
    qtbot.addWidget(view)
    view.set_original(real)
    view.add_branch(view.branches.new_branch(step.step, eur.id, "EUR", branch_run))
    assert _plain(view.difference) == (
        f"First difference at step {step.step + 1}: 'USD' (the original) vs 'EUR' (the branch)\n"
        f"At step {step.step + 1} the model gave 'EUR' P 0.269 (0.296 after masking); "
        "the original drew 'USD' (P 0.598)."
    )
    assert _tinted(view, view.left) == "USD" and _tinted(view, view.right) == "EUR"


def test_a_narrow_list_keeps_the_names_and_tells_what_it_cuts(qtbot):
    """At the width of its pane in the default layout the list scrolled sideways and cut
    the Run column's names, whose tooltip held only the output (issue 27)."""
    view = _view(qtbot)
    view.resize(315, 520)
    view.show()
    qtbot.waitExposed(view)
    tree = view.list
    assert tree.horizontalScrollBar().maximum() == 0  # nothing hidden to the right
    metrics = tree.fontMetrics()
    for i in range(tree.topLevelItemCount()):
        name = tree.topLevelItem(i).text(0)
        assert tree.columnWidth(0) >= metrics.horizontalAdvance(name)  # never "Bra…"
    late = tree.topLevelItem(2)
    # The whole name, its step and token, is in the Run cell's tooltip, before the output.
    whole = view.branches.branches[1].name
    assert late.toolTip(0).startswith(f"<b>{html.escape(whole)}</b>")
    assert html.escape(LATE.result.text, quote=False) in late.toolTip(0)
    assert tree.topLevelItem(0).toolTip(0).startswith("<b>Original run</b>")
    # The long forced token is cut to its column, and whole in its tooltip.
    token = late.text(2)
    assert metrics.horizontalAdvance(token) > tree.columnWidth(2)
    assert html.escape(token, quote=False) in late.toolTip(2)
    assert "(1 error)" in late.toolTip(3) or "not one of" in late.toolTip(3)
